"""Which aggregation of step scores works best for a process reward model, as a measured
result (docs/prm.md, "Aggregation"): each PRM's AUROC under min, last, product and mean
(the ``step-aggregation`` metric) compared pairwise on the same questions by
:func:`rmaudit.metrics.paired.compare_models` — letters, rank intervals and each pair's
difference with its ± — from the stored per-question values, as models are compared."""

from __future__ import annotations

import numpy as np

from rmaudit.components.vocabulary import STEP_AUROC, ResultKey
from rmaudit.metrics.paired import compare_models
from rmaudit.store import Store

from .comparison import MetricComparison


def aggregation_comparisons(
    store: Store, run_id: str, alpha: float = 0.05
) -> list[MetricComparison]:
    """One comparison of the aggregations per PRM of the run that stores two or more; an
    aggregation whose AUROC is undefined (no per-question values: one class absent, scores
    that overflow) is left out and named in the note, so it does not vanish unsaid."""
    rows = store.read.metric_rows(run_id)
    found = []
    for label, rm_key in store.read.reward_models(run_id):
        mine = {
            how: r for r in rows if r.rm_key == rm_key and (how := _aggregation(r.key)) is not None
        }
        if len(mine) < 2:
            continue
        values = {
            how: store.read.stored_per_prompt(run_id, rm_key, r.metric, r.key)
            for how, r in mine.items()
        }
        values = {how: per for how, per in values.items() if per}
        metric = next(iter(mine.values())).metric
        compared = len(values) >= 2
        common = sorted(set.intersection(*map(set, values.values()))) if compared else []
        enough = len(common) >= 2
        notes = ["too few questions"] if compared and not enough else []
        if undefined := [how for how in mine if how not in values]:
            notes.append(f"AUROC {', '.join(undefined)} undefined, left out")
        comparison = (
            compare_models(
                {how: np.array([per[q] for q in common]) for how, per in values.items()},
                higher_is_better=True,
                alpha=alpha,
            )
            if enough
            else None
        )
        found.append(
            MetricComparison(
                metric,
                "auroc",
                f"{label}: AUROC by aggregation",
                True,
                comparison,
                units=len(common) if enough else 0,
                clusters=len(common) if enough else 0,
                unit_name="questions" if enough else "prompts",
                note="; ".join(notes),
            )
        )
    return found


def _aggregation(key: str) -> str | None:
    """The aggregation a stored key is the AUROC under (``auroc[min]``: min), or None."""
    found = ResultKey.read(key)
    return found.part if found.name == STEP_AUROC else None
