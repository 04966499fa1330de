"""A paired comparison (:mod:`.comparison`) in words and as JSON, for every view: what it is
over and what its letters, ranks and intervals mean, each model's standing, each pair's
difference.

The letters and rank intervals come from Holm-adjusted tests (family-wise error ≤ α); each
pair's printed interval is its own 95% interval, not adjusted for the other pairs — the
captions say so, and ``p_Holm`` is the adjusted test (benchmarks/coverage_judge_ranks.py
measures both: the unadjusted intervals are not simultaneous).
"""

from __future__ import annotations

import math
from typing import Any

from rmaudit.metrics.letters import runs_note

from .comparison import MetricComparison

#: what every caption says of the pairs' printed intervals
UNADJUSTED = "each pair's interval is its own 95%, not adjusted for the others (p_Holm is)"


def caption(result: MetricComparison) -> str:
    """What a comparison is over and what its letters, ranks and intervals mean."""
    c = result.comparison
    over = f"{result.units:,} {result.unit_name}" + (
        f" in {result.clusters:,} prompts" if result.clusters != result.units else ""
    )
    alpha = c.alpha if c is not None else 0.05
    better = "higher" if c is None or c.higher_is_better else "lower"
    conventions = f"; {'; '.join(result.conventions)}" if result.conventions else ""
    standings = c.standings if c is not None else ()
    return (
        f"{result.label} ({better} is better{conventions}; paired over {over}; a shared "
        f"letter: not separable, Holm-adjusted at {1 - alpha:.0%}"
        f"{runs_note(s.letters for s in standings)}; ranks: simultaneous "
        f"{1 - alpha:.0%} intervals; {UNADJUSTED})"
    )


def head_to_head_lines(result: MetricComparison) -> list[str]:
    """Each pair's difference with its ± and interval and Holm-adjusted p."""
    if result.comparison is None:
        return []
    return [
        f"{p.first} − {p.second}: {signed(p.difference.value)} ± "
        f"{number(p.difference.stderr)} [{signed(p.difference.ci_low)}, "
        f"{signed(p.difference.ci_high)}], p_Holm {p_text(p.adjusted_p)}"
        + ("" if p.separable else " (not separable)")
        for p in result.comparison.head_to_heads
    ]


def number(value: float) -> str:
    """A value with 4 decimals ("—" where undefined)."""
    return f"{value:.4f}" if math.isfinite(value) else "—"


def signed(value: float) -> str:
    """A difference with its sign, 4 decimals ("—" where undefined)."""
    return f"{value:+.4f}" if math.isfinite(value) else "—"


def p_text(value: float) -> str:
    """A p-value as printed: "< 0.0001" below that, else 4 decimals ("—" where undefined)."""
    if not math.isfinite(value):
        return "—"
    return "< 0.0001" if value < 1e-4 else f"{value:.4f}"


def comparison_json(result: MetricComparison) -> dict[str, Any]:
    """The comparison as JSON-ready data (NaN as null)."""

    def finite(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None

    body: dict[str, Any] = {
        "metric": result.metric,
        "key": result.key,
        "label": result.label,
        "higher_is_better": result.higher_is_better,
        "units": result.units,
        "unit": result.unit_name,
        "clusters": result.clusters,
        "note": result.note or None,
        "conventions": list(result.conventions),
        "measures": {
            label: {"metric": m.metric, "key": m.key}
            for label, m in (result.measures or {}).items()
        },
        "intervals": "each pair's own 95%, not adjusted for multiplicity (p_holm is)",
    }
    c = result.comparison
    if c is None:
        return body | {"standings": None, "pairs": None}
    body["alpha"] = c.alpha
    body["standings"] = [
        {
            "model": s.model,
            "value": finite(s.value),
            "letters": s.letters,
            "rank_low": s.rank_low,
            "rank_high": s.rank_high,
        }
        for s in c.standings
    ]
    body["pairs"] = [
        {
            "first": p.first,
            "second": p.second,
            "difference": finite(p.difference.value),
            "stderr": finite(p.difference.stderr),
            "ci_low": finite(p.difference.ci_low),
            "ci_high": finite(p.difference.ci_high),
            "p": finite(p.difference.p_value),
            "p_holm": finite(p.adjusted_p),
            "separable": p.separable,
        }
        for p in c.head_to_heads
    ]
    return body


def standing_line(result: MetricComparison) -> str:
    """One compact line: each model's letters and rank interval, best first, and what was
    left out."""
    c = result.comparison
    if c is None:
        return f"{result.label}: not compared ({result.note})"
    models = " · ".join(f"{s.model} {s.letters} #{s.ranks}" for s in c.standings)
    return f"{result.label}: {models}" + (f" ({result.note})" if result.note else "")
