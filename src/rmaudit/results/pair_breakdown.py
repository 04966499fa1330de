"""What the report's pair figures need beyond the stored curves, recomputed from the stored
scores with the metric functions (no UI toolkit): RM-Bench's chosen-style × rejected-style
accuracy matrix with each cell's pair count, and how many pairs fall in each bin of a
reliability diagram.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rmaudit.benchmark.pairs.parsers import RM_BENCH_STYLES
from rmaudit.metrics import DEFAULT_TIES, ece, pair_credit
from rmaudit.results.pair_failures import ModelOnPair
from rmaudit.results.summary import RunSummary
from rmaudit.store import Store


@dataclass(frozen=True)
class StyleMatrix:
    """``accuracy[i, j]``: accuracy over the pairs whose chosen response has style i and
    rejected response style j (RM-Bench: 0 concise, 1 detailed, 2 detailed markdown); NaN
    where no pair has that combination; ``count[i, j]``: how many pairs do."""

    accuracy: np.ndarray
    count: np.ndarray


def style_matrices(
    store: Store, summary: RunSummary, on_pairs: dict[str, list[ModelOnPair]]
) -> dict[str, StyleMatrix]:
    """rm_key → the style matrix of the RM's RM-Bench pairs, a tie credited as the rm-bench
    metric credited it (its stored ``ties``; runs stored before it was kept used ``loss``)."""
    ties = {
        row.rm_key: row.params.get("ties", DEFAULT_TIES)
        for row in store.read.metric_rows(summary.run.id)
        if row.key == "rm_bench_average"
    }
    return {
        rm_key: matrix
        for rm_key, pairs in on_pairs.items()
        if rm_key in ties and (matrix := style_matrix(pairs, ties=ties[rm_key]))
    }


def style_matrix(on_pairs: list[ModelOnPair], *, ties: str = DEFAULT_TIES) -> StyleMatrix | None:
    """The style matrix of an RM's RM-Bench pairs, a tie earning ``ties``'s credit (see
    :func:`~rmaudit.metrics.pair_credit`); None when no pair carries RM-Bench's styles."""
    n = len(RM_BENCH_STYLES)
    styled = [v for v in on_pairs if v.styles]
    if not styled:
        return None
    cell = np.array([v.meta["chosen_style"] * n + v.meta["rejected_style"] for v in styled])
    credit = pair_credit(
        [v.chosen_score for v in styled], [v.rejected_score for v in styled], ties=ties
    )
    count = np.bincount(cell, minlength=n * n)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.bincount(cell, weights=credit, minlength=n * n) / count
    return StyleMatrix(accuracy.reshape(n, n), count.reshape(n, n))


def reliability_counts(
    store: Store, summary: RunSummary, metric: str, on_pairs: dict[str, list[ModelOnPair]]
) -> dict[str, np.ndarray]:
    """rm_key → the pairs in each filled bin of the reliability diagram ``metric`` stored (its
    points, in order), recounted from the scores with the bins the metric used."""
    bins = {
        row.rm_key: row.params.get("n_bins")
        for row in store.read.metric_rows(summary.run.id)
        if row.metric == metric and row.key == "ece"
    }
    counts = {}
    for rm_key, n_bins in bins.items():
        pairs = on_pairs.get(rm_key) or []
        if not isinstance(n_bins, int) or not pairs:
            continue
        result = ece(
            [p.chosen_score for p in pairs], [p.rejected_score for p in pairs], n_bins=n_bins
        )
        counts[rm_key] = result.count[result.count > 0]
    return counts
