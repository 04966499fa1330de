"""Which aggregation of step scores works best for a process reward model, as a measured
result (docs/prm.md, "Aggregation"): each PRM's AUROC under min, last, product and mean
(the ``step-aggregation`` metric) compared pairwise on the same questions by
:func:`rmaudit.metrics.paired.compare_models` — letters, rank intervals and each pair's
difference with its ± — from the stored per-question values, as models are compared."""

from __future__ import annotations

import numpy as np

from rmaudit.metrics.paired import compare_models
from rmaudit.store import Store

from .comparison import MetricComparison

#: the keys the step-aggregation metric stores, ``auroc[HOW]``
PREFIX = "auroc["


def aggregation_comparisons(
    store: Store, run_id: str, alpha: float = 0.05
) -> list[MetricComparison]:
    """One comparison of the aggregations per PRM of the run that stores two or more."""
    rows = store.read.metric_rows(run_id)
    found = []
    for label, rm_key in store.read.reward_models(run_id):
        mine = [r for r in rows if r.rm_key == rm_key and r.key.startswith(PREFIX)]
        values = {
            r.key[len(PREFIX) : -1]: store.read.stored_per_prompt(run_id, rm_key, r.metric, r.key)
            for r in mine
        }
        values = {how: per for how, per in values.items() if per}
        if len(values) < 2:
            continue
        common = sorted(set.intersection(*(set(per) for per in values.values())))
        what = f"{label}: AUROC by aggregation"
        if len(common) < 2:
            found.append(
                MetricComparison(
                    mine[0].metric, "auroc", what, True, None, note="too few questions"
                )
            )
            continue
        comparison = compare_models(
            {how: np.array([per[q] for q in common]) for how, per in values.items()},
            higher_is_better=True,
            alpha=alpha,
        )
        found.append(
            MetricComparison(
                mine[0].metric,
                "auroc",
                what,
                True,
                comparison,
                units=len(common),
                clusters=len(common),
                unit_name="questions",
            )
        )
    return found
