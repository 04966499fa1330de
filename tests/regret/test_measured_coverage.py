"""Every regret-study cell whose interval's coverage was measured off 95% (or never measured)
is marked, Pearson's included, and the bias note quotes what was measured: both checked
against benchmarks/coverage.md, the simulation's own output."""

from __future__ import annotations

import re

from conftest import ROOT

from rmaudit.metrics.regret import CORRELATIONS, ERROR_METRICS
from rmaudit.metrics.regret.measured import bias_note, interval_caveat

ROW = re.compile(
    r"\| (oracle gold|N×N): (.+?) · (\w+) \| bias-corrected CI \| [\d.]+ \| (\d+) (?:prompts )?"
    r"× \d+.*? \| ([\d.]+)( ≈)? \| [\d.]+ \| ([+-][\d.]+) \|"
)


def measured() -> list[tuple[str, str, str, int, float, float]]:
    """(gold, error metric, statistic, prompts, coverage, mean error) per table row."""
    names = {label: key for key, label in ERROR_METRICS.items()}
    text = (ROOT / "benchmarks" / "coverage.md").read_text(encoding="utf-8")
    return [
        (
            "oracle" if m[1] == "oracle gold" else "each",
            names[m[2]],
            m[3],
            int(m[4]),
            float(m[5]),
            float(m[7]),
        )
        for m in ROW.finditer(text)
    ]


def test_every_cell_measured_off_target_is_marked_pearson_included():
    rows = measured()
    assert len(rows) == 2 * len(ERROR_METRICS) * len(CORRELATIONS) * 2
    off: dict[tuple[str, str, str], list[str]] = {}
    for gold, metric, statistic, prompts, coverage, _ in rows:
        cell = off.setdefault((gold, metric, statistic), [])
        if not 0.92 <= coverage <= 0.98:
            cell.append(f"{coverage:.3f} at {prompts} prompts")
    for (gold, metric, statistic), reasons in off.items():
        caveat = interval_caveat(gold, metric, statistic, "held-out-responses", 120)
        assert bool(caveat) == bool(reasons), (gold, metric, statistic)
        assert all(reason in caveat for reason in reasons)
    assert interval_caveat("each", "xi", "pearson", "held-out-responses", 30)  # 0.857
    # outside what was measured, nothing is validated
    assert "not validated" in interval_caveat("oracle", "pearson", "pearson", "shared", 120)
    assert "at 29 prompts" in interval_caveat(
        "oracle", "pearson", "pearson", "held-out-responses", 29
    )


def test_the_bias_note_quotes_the_measured_mean_errors():
    note = bias_note(CORRELATIONS)
    rows = measured()
    for statistic, label in CORRELATIONS.items():
        (part,) = [p for p in re.split(r"[(;:] ", note) if p.startswith(f"{label} ")]
        for prompts in (30, 120):
            errors = [e for _, _, s, n, _, e in rows if s == statistic and n == prompts]
            assert f"{min(errors):+.2f} to {max(errors):+.2f} at {prompts} prompts" in part
