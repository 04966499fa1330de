"""The scoring-check flags of ``rmaudit run`` and ``rmaudit audit`` (docs/real-models.md,
"Scoring checks"): the settings each hands the run, their former names kept as aliases that
warn."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from rmaudit.cli.check_options import scoring_check_options
from rmaudit.components.scoring_checks import CheckSettings


def settings_of(*flags: str) -> tuple[CheckSettings, str]:
    """The settings a command decorated with the flags receives, and what it wrote on stderr."""
    seen: list[CheckSettings] = []

    @click.command()
    @scoring_check_options
    def command(checks: CheckSettings) -> None:
        seen.append(checks)

    result = CliRunner().invoke(command, list(flags), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return seen[0], result.stderr


def test_the_flags_make_the_settings():
    assert settings_of()[0] == CheckSettings()
    assert settings_of("--no-scoring-checks")[0] == CheckSettings(enabled=False)
    assert settings_of("--strict", "--show-input", "--scoring-checks-sample", "9")[0] == (
        CheckSettings(strict=True, show_input=True, sample_size=9)
    )


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (["--no-preflight"], "--no-scoring-checks", CheckSettings(enabled=False)),
        (["--preflight-sample", "7"], "--scoring-checks-sample", CheckSettings(sample_size=7)),
    ],
)
def test_the_former_names_still_work_and_say_which_replaces_them(old, new, expected):
    settings, err = settings_of(*old)
    assert settings == expected
    assert err == f"warning: {old[0]} is deprecated; use {new}\n"
    assert settings_of(new, *old[1:])[1] == ""


SKIPPED_AND_ASKED = [
    (
        ["--no-scoring-checks", "--strict"],
        "--strict needs the scoring checks that --no-scoring-checks skips",
    ),
    (["--scoring-checks-sample", "8", "--no-scoring-checks"], "--scoring-checks-sample needs"),
    (["--show-input", "--no-scoring-checks"], "--show-input needs"),
    (["--strict", "--no-preflight"], "--strict needs the scoring checks that --no-preflight"),
    (["--preflight-sample", "8", "--no-preflight"], "--preflight-sample needs"),
    (["--show-input", "--no-preflight"], "--show-input needs"),
]


@pytest.mark.parametrize("command", ["run", "audit"])
@pytest.mark.parametrize(("flags", "said"), SKIPPED_AND_ASKED)
def test_asking_for_checks_it_skips_is_exit_2_in_one_line_and_writes_nothing(
    command, flags, said, rmaudit, write_recipe, tmp_path
):
    db = tmp_path / "audit.db"
    target = str(write_recipe()) if command == "run" else "length"
    result = rmaudit(command, target, "--db", str(db), *flags)
    assert result.code == 2, result.err
    error = [line for line in result.err.splitlines() if not line.startswith("warning: ")]
    assert len(error) == 1 and said in error[0] and "give one or the other" in error[0]
    assert not db.exists() and list(tmp_path.iterdir()) == (
        [tmp_path / "recipe.toml"] if command == "run" else []
    )
