"""The scoring-check flags of ``rmaudit run`` and ``rmaudit audit`` (docs/real-models.md,
"Scoring checks"): one decorator adds them and hands the command their settings
(``checks``).  ``--no-preflight`` and ``--preflight-sample``, their names before "preflight"
came to mean only a run's own plan, still work and say so on stderr."""

from __future__ import annotations

from typing import Any

import click

from rmaudit.components.scoring_checks import CheckSettings
from rmaudit.run.scoring_checks import (
    MAX_SAMPLE,
    MIN_SAMPLE,
    SAMPLE_SHARE,
)

from .options import grouped

#: an old flag → the one that replaced it
DEPRECATED = {
    "--no-preflight": "--no-scoring-checks",
    "--preflight-sample": "--scoring-checks-sample",
}


def _deprecated(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if value not in (None, False):
        old = param.opts[0]
        click.echo(f"warning: {old} is deprecated; use {DEPRECATED[old]}", err=True)
    return value


_SAMPLE = click.IntRange(min=2)

_OPTIONS = (
    click.option(
        "--strict",
        is_flag=True,
        help="Stop with exit code 2 before the full scoring when a scoring check of a "
        "model-backed RM or PRM warns or fails.",
    ),
    click.option(
        "--no-scoring-checks",
        is_flag=True,
        help="Skip the scoring checks of model-backed RMs and PRMs (stored as skipped).",
    ),
    click.option("--no-preflight", is_flag=True, hidden=True, callback=_deprecated),
    click.option(
        "--show-input",
        is_flag=True,
        help="Print one sampled input as each model-backed RM or PRM reads it (rendered, "
        "literally).",
    ),
    click.option(
        "--scoring-checks-sample",
        type=_SAMPLE,
        default=None,
        help="Items (a PRM's: solutions) the scoring checks score (seeded; the longest and "
        f"shortest included); default: one in {SAMPLE_SHARE} of the items scored, {MIN_SAMPLE} "
        f"to {MAX_SAMPLE}.",
    ),
    click.option("--preflight-sample", type=_SAMPLE, hidden=True, callback=_deprecated),
)


def _settings(
    strict: bool,
    no_scoring_checks: bool,
    no_preflight: bool,
    show_input: bool,
    scoring_checks_sample: int | None,
    preflight_sample: int | None,
) -> CheckSettings:
    sample = scoring_checks_sample or preflight_sample
    skip = "--no-preflight" if no_preflight else "--no-scoring-checks"
    if no_scoring_checks or no_preflight:
        asked = {
            "--strict": strict,
            "--show-input": show_input,
            "--preflight-sample" if preflight_sample else "--scoring-checks-sample": sample,
        }
        clash = next((flag for flag, given in asked.items() if given), None)
        if clash is not None:
            raise click.UsageError(
                f"{clash} needs the scoring checks that {skip} skips: give one or the other"
            )
    return CheckSettings(
        enabled=not (no_scoring_checks or no_preflight),
        strict=strict,
        show_input=show_input,
        sample_size=sample,
    )


#: put under ``@click.command()``: adds the flags, and calls the command with
#: ``checks=CheckSettings(...)`` from them
scoring_check_options = grouped("checks", _settings, *_OPTIONS)
