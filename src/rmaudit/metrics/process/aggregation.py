"""From step scores to a solution score, and how well each rule tells solutions with a correct
final answer from the rest.

A PRM used for best-of-n or search ranks whole solutions, so its step scores are combined into
one: the ``min`` (a solution is as good as its weakest step: the aggregation of *Let's Verify
Step by Step*, Lightman et al. 2023, arXiv 2305.20050, §3, and of Qwen2.5-Math-PRM's best-of-n,
arXiv 2501.07301, §3.1), the ``last`` step's score, the ``product`` (the probability that every
step is correct, for independent step probabilities: Lightman et al. §3) or the ``mean``.
Which rule works best for a PRM is measured, not chosen: on ProcessBench, each rule's AUROC at
telling the solutions whose final answer is correct from the others.

The AUROC is the Mann–Whitney statistic (ties count ½) with DeLong's placements (DeLong,
DeLong & Clarke-Pearson 1988, *Comparing the areas under two or more correlated receiver
operating characteristic curves*, Biometrics 44:837–845): positive i's V_i = share of negatives
it outscores, negative j's V_j = share of positives that outscore it.  Its influence per
question sums (V_i − A)/n₊ over the question's positives and (V_j − A)/n₋ over its negatives,
the clustered form of Obuchowski (1997, *Nonparametric analysis of clustered ROC curve data*,
Biometrics 53:567–578), which :mod:`.linearized` turns into its ± and per-question values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rmaudit.errors import MetricInputError

from .linearized import LinearizedEstimate, question_totals, step_scores

#: the aggregations, in the order they are reported
AGGREGATIONS = ("min", "last", "product", "mean")


def aggregate(scores: Sequence[np.ndarray], how: str) -> np.ndarray:
    """Each solution's score under ``how`` (one of :data:`AGGREGATIONS`).

    >>> [float(x) for x in aggregate([np.array([0.5, 0.8])], "product")]
    [0.4]
    """
    rules: dict[str, Callable[[np.ndarray], Any]] = {
        "min": np.min,
        "last": lambda s: s[-1],
        "product": np.prod,
        "mean": np.mean,
    }
    if how not in rules:
        raise MetricInputError(
            f"expected one of {', '.join(AGGREGATIONS)}", field="aggregation", value=how
        )
    return np.array([float(rules[how](s)) for s in step_scores(scores)])


def auroc(
    scores: np.ndarray, positive: np.ndarray, question_index: np.ndarray, questions: int
) -> LinearizedEstimate:
    """AUROC of ``scores`` for ``positive`` (solutions), with its influence per question; NaN
    without a positive and a negative.

    >>> a = auroc(np.array([0.9, 0.1, 0.5]), np.array([True, False, False]), np.arange(3), 3)
    >>> float(a.value)
    1.0
    """
    scores = np.asarray(scores, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    index = np.asarray(question_index, dtype=int)
    scope = np.bincount(index, minlength=questions) > 0
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if n_pos == 0 or n_neg == 0:
        return LinearizedEstimate(np.array(np.nan), np.full(questions, np.nan), scope)
    negatives = np.sort(scores[~positive])
    positives = np.sort(scores[positive])

    def placements(values: np.ndarray, against: np.ndarray, above: bool) -> np.ndarray:
        below = np.searchsorted(against, values, side="left")
        tied = np.searchsorted(against, values, side="right") - below
        beaten = below if above else against.size - below - tied
        return (beaten + 0.5 * tied) / against.size

    own = np.empty(scores.size)
    own[positive] = placements(scores[positive], negatives, above=True)
    own[~positive] = placements(scores[~positive], positives, above=False)
    value = float(own[positive].mean())
    weight = np.where(positive, 1.0 / n_pos, 1.0 / n_neg)
    influence = question_totals(weight * (own - value), index, questions)
    return LinearizedEstimate(np.array(value), np.where(scope, influence, 0.0), scope)
