"""A stored regret-correlation study read back for display (``rmaudit regret``, the TUI's
regret panel, ``rmaudit report``), without any UI toolkit.

The ``regret-correlation`` metric (``rmaudit.default_plugins.regret``) stores, under the run-level
RM key, one row per (correlation statistic, error metric) — the cells of Rethinking RM Evaluation's
Table 1 / Table 4 — and an ``ndr/mean`` row whose params hold the (gold × RM) matrices of NDR and of
every error metric; and one run-level curve per proxy, ``ndr_curve/<proxy label>``: its best-of-n
NDR against n.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rmaudit.components import RUN_LEVEL
from rmaudit.components.vocabulary import REGRET_SUMMARY
from rmaudit.display.formatting import format_number
from rmaudit.metrics.regret import (
    CORRELATIONS,
    ERROR_METRICS,
    REGRET_STUDY_DESIGNS,
    goodhart_from_accuracy,
)
from rmaudit.metrics.regret.measured import bias_note


def load_studies(store, run_id: str) -> dict[str, list[dict]]:
    """Run-level rows of every regret-correlation entry, by recipe label, in stored order
    (``params`` decoded)."""
    studies: dict[str, list[dict]] = {}
    for row in store.read.metric_rows(run_id):
        if row.rm_key != RUN_LEVEL:
            continue
        params = row.params
        if "error_metric" in params or row.key == REGRET_SUMMARY:
            studies.setdefault(row.metric, []).append({**asdict(row), "params": params})
    return studies


@dataclass(frozen=True)
class StudyTable:
    """One study in the Table 1 / Table 4 layout: a row per error metric, a column per
    correlation statistic, each cell "value [CI low, CI high]" (marked ≈ where the interval
    is approximate: its coverage, measured in simulation, is off the nominal 95 %)."""

    label: str
    n: int
    gold: str  # "each" (N×N) or "oracle"
    headers: list[str]
    rows: list[list[str]]
    design: str = "shared"  # studies stored before the held-out designs used shared pools
    kendall_equals_accuracy: bool = False
    approximate: bool = False
    screened: dict[str, float | None] = field(default_factory=dict)  # gold → its reliability
    skipped: dict[str, int] = field(default_factory=dict)  # gold → prompts it ranks nothing on
    proxies: int = 0  # proxies per gold (0: not stored)
    #: the study's one-number summary as the CLI and report.md show it ("mean NDR = 0.412")
    summary: str | None = None

    @property
    def caption(self) -> str:
        who = (
            "each RM in turn is the gold, the others proxies (N×N); mean over golds"
            + (" but those left out below" if self.screened else "")
            if self.gold == "each"
            else "the oracle is the gold, every RM a proxy"
        )
        lines = [
            f"{who}; value [95% bias-corrected bootstrap CI over prompts]",
            f"design {self.design}: {REGRET_STUDY_DESIGNS.get(self.design, self.design)}",
        ]
        if self.screened:
            golds = ", ".join(
                f"{gold} ({format_number(r, 2)})" for gold, r in self.screened.items()
            )
            lines.append(
                f"left out of the means, their proxies' NDRs differing by less than "
                f"their noise (reliability): {golds}"
            )
        if self.skipped:
            golds = ", ".join(f"{gold} {count}" for gold, count in self.skipped.items())
            lines.append(
                f"prompts left out for a gold that ranks nothing there (all its "
                f"scores equal): {golds}"
            )
        if 0 < self.proxies < 4:
            lines.append(
                f"{self.proxies} proxies per gold: a correlation across "
                f"{self.proxies} values is "
                + ("always ±1" if self.proxies == 2 else "coarse (Kendall τ: ±1 or ±⅓)")
                + "; add reward models for a study that can tell metrics apart"
            )
        if self.kendall_equals_accuracy:
            lines.append(
                "Kendall τ and accuracy rows are identical: without ties, per prompt "
                "τ_b = 2·accuracy − 1, and correlations across proxies ignore that "
                "affine map"
            )
        if self.approximate:
            lines.append(
                "≈ approximate interval: its coverage, measured in simulation, is off 95% "
                "or was never measured for this study (benchmarks/coverage.py)"
            )
        lines.append(bias_note(CORRELATIONS))
        return "\n".join(lines)


def study_table(label: str, rows: list[dict]) -> StudyTable:
    cells = {
        (r["params"]["statistic"], r["params"]["error_metric"]): r
        for r in rows
        if "error_metric" in r["params"]
    }
    summary_row = next((r for r in rows if r["key"] == REGRET_SUMMARY), None)
    summary: dict[str, Any] = summary_row["params"] if summary_row is not None else {}
    metrics = list(dict.fromkeys(metric for _, metric in cells))
    first = next(iter(cells.values()))["params"]
    headers = ["error metric", *(f"{s} corr." if s != "MRR" else s for s in CORRELATIONS.values())]
    table = []
    for metric in metrics:
        row = [ERROR_METRICS.get(metric, metric)]
        for statistic in CORRELATIONS:
            cell = cells.get((statistic, metric))
            row.append(
                "—"
                if cell is None
                else f"{format_number(cell['value'], 3)} [{format_number(cell['ci_low'], 2)}, "
                f"{format_number(cell['ci_high'], 2)}]"
                + ("≈" if cell["params"].get("approximate") else "")
            )
        table.append(row)
    return StudyTable(
        label,
        int(first["n"]),
        first["gold"],
        headers,
        table,
        design=first.get("design", "shared"),
        kendall_equals_accuracy=bool(summary.get("kendall_equals_accuracy")),
        approximate=any(c["params"].get("approximate") for c in cells.values()),
        screened={g: summary.get("reliability", {}).get(g) for g in summary.get("screened", [])},
        skipped=summary.get("skipped_prompts", {}),
        proxies=_proxies(summary),
        summary=None
        if summary_row is None
        else f"{summary_row['label']} = {format_number(summary_row['value'], 3)}",
    )


def _proxies(summary: dict) -> int:
    """Proxies per gold: every RM but the gold in the N×N study, every RM for the oracle."""
    rms = len(summary.get("rms", []))
    return max(rms - 1, 0) if summary.get("gold") == "each" else rms


@dataclass(frozen=True)
class GoodhartPoint:
    """One (gold, proxy) pair of a study: its pairwise accuracy and best-of-n NDR."""

    gold: str
    proxy: str
    accuracy: float
    ndr: float


def goodhart_points(rows: list[dict]) -> list[GoodhartPoint]:
    """Every (gold, proxy) pair of a study with both an accuracy and an NDR (empty when the
    study did not compute accuracy)."""
    summary = next((r for r in rows if r["key"] == REGRET_SUMMARY), None)
    if summary is None or "accuracy" not in summary["params"].get("error", {}):
        return []
    params = summary["params"]
    accuracy, ndr = params["error"]["accuracy"], params["ndr"]
    points = []
    for g, gold in enumerate(params["golds"]):
        for p, proxy in enumerate(params["rms"]):
            if accuracy[g][p] is not None and ndr[g][p] is not None:
                points.append(GoodhartPoint(gold, proxy, float(accuracy[g][p]), float(ndr[g][p])))
    return points


def goodhart_curve(points: int = 101) -> tuple[np.ndarray, np.ndarray]:
    """The closed-form curve of Rethinking RM Evaluation (arXiv 2410.05584), Fig. 8: accuracy from
    1/2 to 1 against the NDR the
    normal model expects, sin(π (accuracy − 1/2))."""
    accuracy = np.linspace(0.5, 1.0, points)
    return accuracy, np.asarray(goodhart_from_accuracy(accuracy)["ndr"])
