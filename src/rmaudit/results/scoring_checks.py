"""A run's scoring checks read back (docs/real-models.md, "Scoring checks"), the short
"scoring checks" block every front end shows — one line per check, its fix under a warning —
and what a failed check makes of a model's audit verdict: its scores are not to be trusted."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rmaudit.components.scoring_checks import ScoringChecks
from rmaudit.store import Store
from rmaudit.store.scoring_checks import ScoringChecksTable

TITLE = "scoring checks"
#: what a failed check adds to a model's verdict, before the failures' findings (a PRM's:
#: "step scores")
UNTRUSTED = "⚠ {scores} not trustworthy"


@dataclass(frozen=True)
class ModelChecks:
    """The checks of one RM or PRM of a run (``label``: its recipe label)."""

    label: str
    checks: ScoringChecks


@dataclass(frozen=True)
class CheckLine:
    """One line of the block: its status (for colour; None on a fix line) and its text."""

    status: str | None
    text: str


def untrusted(checks: ScoringChecks) -> str | None:
    """``⚠ scores not trustworthy: truncation: ...`` (a PRM's, checked on solutions: step
    scores) naming each failed check's finding; None where none failed."""
    failed = checks.failures()
    if not failed:
        return None
    scores = "step scores" if checks.unit == "solutions" else "scores"
    return (
        UNTRUSTED.format(scores=scores) + ": " + "; ".join(f"{c.name}: {c.finding}" for c in failed)
    )


def run_scoring_checks(store: Store, run_id: str) -> list[ModelChecks]:
    return [
        ModelChecks(row.label, ScoringChecks.from_stored(row.checks))
        for row in ScoringChecksTable(store).of_run(run_id)
    ]


def block_lines(models: list[ModelChecks]) -> list[CheckLine]:
    """The block's lines (none when no model of the run was checked)."""
    lines = []
    for model in models:
        checks = model.checks
        if not checks.checks:
            lines.append(CheckLine("skipped", f"{model.label}: skipped (--no-scoring-checks)"))
            continue
        lines.append(
            CheckLine(
                checks.status,
                f"{model.label}: {checks.status} on {checks.sample_size} sampled {checks.unit} "
                f"({checks.seconds:.1f} s)",
            )
        )
        if (verdict := untrusted(checks)) is not None:
            lines.append(CheckLine("fail", f"  {verdict}"))
        for check in checks.checks:
            lines.append(
                CheckLine(check.status, f"  {check.status:<4}  {check.name}: {check.finding}")
            )
            if check.fix:
                lines.append(CheckLine(None, f"        fix: {check.fix}"))
    return lines


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def checks_json(models: list[ModelChecks]) -> dict[str, Any]:
    """Per model label: status, sample size (in ``unit``: items, or a PRM's solutions) and
    each check's name, status, figures and fix."""
    return {
        model.label: {
            "status": model.checks.status,
            "trustworthy": untrusted(model.checks) is None,
            "sample_size": model.checks.sample_size,
            "unit": model.checks.unit,
            "settings": model.checks.settings,
            "seconds": model.checks.seconds,
            "checks": [
                {
                    "name": c.name,
                    "status": c.status,
                    "finding": c.finding,
                    "figures": {k: _finite(v) for k, v in c.figures.items()},
                    "fix": c.fix,
                }
                for c in model.checks.checks
            ],
        }
        for model in models
    }
