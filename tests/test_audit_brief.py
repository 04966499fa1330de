"""What ``rmaudit audit`` prints by default on many models, and that ``--details`` still
prints every part it leaves out: an LLMBar folder with 65 recorded judges (as LLMBar's own
release has), audited at 100 columns, must print at most 60 lines — the leaderboard's best
rows, the verdicts in brief and the next step (docs/audit.md, "Output")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _recorded import many_judges
from test_audit import write_llmbar
from test_audit_items import write_hh

#: the default output's budget at 100 columns (issue 52, item 12)
MOST_LINES = 60


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")


def audit(rmaudit, data: Path, *flags: str):
    done = rmaudit(
        "audit", "--suite", "llmbar", "--recorded-judges", "--data-dir", str(data), *flags
    )
    assert done.code == 0, done.err
    return done


def board_rows(out: str) -> list[str]:
    """The leaderboard's model labels, top to bottom (its first table's body; a row's second
    line, where its values take two, has none)."""
    table = out[: out.index("└")]
    labels = [line.split("│")[1].strip() for line in table.splitlines() if line.startswith("│")]
    return [label for label in labels if label]


def test_many_judges_print_in_60_lines_and_details_prints_every_part_left_out(rmaudit, tmp_path):
    data = tmp_path / "data"
    judges = many_judges(data)
    brief = audit(rmaudit, data)
    lines = (brief.out + brief.err).splitlines()
    assert len(lines) <= MOST_LINES, "\n".join(lines)
    assert max(len(line) for line in lines) <= 100
    results = json.loads(Path("rmaudit-audit.results.json").read_text(encoding="utf-8"))
    (suite,) = results["suites"]
    models = {m["label"]: m for m in suite["models"]}
    assert len(models) == len(judges) + 2
    # the leaderboard: the board's ten best rows (the whole board: rmaudit runs --details),
    # then the baselines
    every = rmaudit("runs", "rmaudit-audit.db", suite["run_id"][:10], "--details")
    assert every.code == 0, every.err
    whole = board_rows(every.out)
    assert sorted(whole) == sorted(models)
    shown = board_rows(brief.out)
    assert shown == whole[:10] + [label for label in whole[10:] if label in ("length", "random")]
    value = {label: m["metrics"]["accuracy"]["value"] for label, m in models.items()}
    # one line for those that pass; each that does not is named, under why
    passing = [label for label in judges if models[label]["passes"]]
    failing = [label for label in judges if not models[label]["passes"]]
    assert passing and failing
    verdicts = [line for line in re.split(r"\n(?=[✓⚠] )", brief.out) if line[:1] in "✓⚠"]
    (passed,) = [line for line in verdicts if line.startswith("✓")]
    assert f"llmbar: {len(passing)} of {len(judges)} models pass on accuracy" in passed
    said = " ".join(line for line in verdicts if line.startswith("⚠"))
    for label in failing:
        assert f"{label} {value[label]:.4f}" in " ".join(said.split()), label
    # the next step, and where the rest is
    assert "Next: rmaudit tui rmaudit-audit.db — the worst RM by accuracy is" in brief.out
    assert "more (all 67 models, accuracy by subset" in brief.out and "--details" in brief.out
    assert "more models alike (each one's line: --details)" in brief.err
    assert "LLMBar's own figures beside rmaudit's, per subset: --details" in brief.out

    details = audit(rmaudit, data, "--details")
    full = " ".join(details.out.split())
    assert "accuracy by subset" in full and "audit summary" in full
    assert "LLMBar's own figures beside rmaudit's (LLMBar" in full
    assert "accuracy: share of the preference pairs" in full  # the whole legend
    for label in judges:
        word = "passes" if models[label]["passes"] else "does not pass"
        assert f"llmbar: {label} {word} on accuracy" in full, label
    unparsed = [line for line in details.err.splitlines() if "have no verdict" in line]
    # each judge's own note, where the brief output said the first one's once
    assert len({line.split(":")[0] for line in unparsed}) == len(unparsed) > 3
    (once,) = [line for line in brief.err.splitlines() if "have no verdict" in line]
    assert once.startswith(unparsed[0].split(" (")[0])


def test_suites_that_say_the_same_next_step_say_it_once(rmaudit, tmp_path):
    data = tmp_path / "data"
    write_llmbar(data)
    write_hh(data)
    suites = ("--suite", "llmbar", "--suite", "hh")
    done = rmaudit("audit", "length", "random", *suites, "--data-dir", str(data))
    assert done.code == 0, done.err
    assert done.out.count("rmaudit audit --suite ") == 2  # both suites' boards
    (hint,) = [line for line in done.out.splitlines() if line.startswith("Next:")]
    assert "enter on a reward model opens its pair failures" in hint


def test_an_audits_command_is_listed_once_among_the_runs(rmaudit, tmp_path, monkeypatch):
    """An audit's title starts with its command, which is also what stands for its recipe:
    the 80-column listing says it once (a recipe's run still shows its recipe: the
    snapshots of tests/test_cli_output.py)."""
    data = tmp_path / "data"
    write_llmbar(data)
    assert rmaudit("audit", "length", "--suite", "llmbar", "--data-dir", str(data)).code == 0
    monkeypatch.setenv("COLUMNS", "80")
    listing = rmaudit("runs", "--db", "rmaudit-audit.db")
    assert listing.code == 0, listing.err
    cells = [line.split("│")[2].strip() for line in listing.out.splitlines() if "│" in line]
    assert " ".join(cells).count("rmaudit audit --suite llmbar") == 1
