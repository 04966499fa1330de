"""From step scores to a solution score, and how well each rule tells solutions with a correct
final answer from the rest.

A PRM used for best-of-n or search ranks whole solutions, so its step scores are combined into
one: the ``min`` (a solution is as good as its weakest step: the aggregation of *Let's Verify
Step by Step*, Lightman et al. 2023, arXiv 2305.20050, §3, and of Qwen2.5-Math-PRM's best-of-n,
arXiv 2501.07301, §3.1), the ``last`` step's score, the ``product`` (the probability that every
step is correct, for independent step probabilities: Lightman et al. §3) or the ``mean``.
Which rule works best for a PRM is measured, not chosen: on ProcessBench, each rule's AUROC at
telling the solutions whose final answer is correct from the others.

RewardMATH (*Evaluating Robustness of Reward Models for Mathematical Reasoning*, Kim et al.,
arXiv 2410.01729, Sec. 4 and its ``src/evaluation/eval.py``) reports a PRM under eight rules:
those four (its ``prod`` is the ``product``), the ``max``, the ``geometric_mean``
(product^(1/steps)), ``mean_logit`` (the sigmoid of the mean log-odds of the steps) and
``mean_odd`` (the mean odds p/(1 − p)).  Each is computed as the publisher's code computes it
(a sequential product and sum), so that solutions tied there are tied here; the last three read
a step score as a probability and are undefined outside [0, 1].

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

#: the aggregations ProcessBench's AUROC compares, in the order they are reported
AGGREGATIONS = ("min", "last", "product", "mean")
#: RewardMATH's eight, in its publisher's order
REWARDMATH_AGGREGATIONS = (
    "min",
    "max",
    "product",
    "geometric_mean",
    "mean",
    "mean_logit",
    "mean_odd",
    "last",
)
#: the aggregations that read a step score as a probability: undefined outside [0, 1]
OF_PROBABILITIES = frozenset({"geometric_mean", "mean_logit", "mean_odd"})


def _product(steps: Sequence[float]) -> float:
    found = 1.0
    for step in steps:
        found *= step
    return found


def _mean_logit(steps: Sequence[float]) -> float:
    with np.errstate(divide="ignore"):  # a step of 0 or 1: log-odds of ∓inf, as the publisher's
        logits = np.log(np.asarray(steps) / (1 - np.asarray(steps)))
        return float(1 / (1 + np.exp(-np.mean(logits))))


def _mean_odds(steps: Sequence[float]) -> float:
    with np.errstate(divide="ignore"):
        odds = np.asarray(steps) / (1 - np.asarray(steps))
        return float(np.maximum(0, np.mean(odds)))


_RULES: dict[str, Callable[[Sequence[float]], Any]] = {
    "min": min,
    "max": max,
    "product": _product,
    "geometric_mean": lambda s: _product(s) ** (1 / len(s)),
    "mean": lambda s: sum(s) / len(s),
    "mean_logit": _mean_logit,
    "mean_odd": _mean_odds,
    "last": lambda s: s[-1],
}


def aggregate_steps(steps: Sequence[float], how: str) -> float:
    """One solution's score under ``how`` (one of :data:`REWARDMATH_AGGREGATIONS`), from its
    finite step scores (at least one), as RewardMATH's ``_calculate_final_reward`` computes it;
    a probability rule (:data:`OF_PROBABILITIES`) on a step outside [0, 1] is an error.

    >>> aggregate_steps([0.5, 0.8], "geometric_mean") == 0.4 ** 0.5
    True
    """
    if how not in _RULES:
        raise MetricInputError(
            f"expected one of {', '.join(REWARDMATH_AGGREGATIONS)}", field="aggregation", value=how
        )
    if how in OF_PROBABILITIES and not all(0 <= s <= 1 for s in steps):
        outside = next(s for s in steps if not 0 <= s <= 1)
        raise MetricInputError(
            f"a step score outside [0, 1], which {how} reads as a probability",
            field="aggregation",
            value=outside,
        )
    return float(_RULES[how](list(steps)))


def aggregate(scores: Sequence[np.ndarray], how: str) -> np.ndarray:
    """Each solution's score under ``how`` (:func:`aggregate_steps`).

    >>> [float(x) for x in aggregate([np.array([0.5, 0.8])], "product")]
    [0.4]
    """
    return np.array([aggregate_steps(s.tolist(), how) for s in step_scores(scores)])


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
