"""Parity of two scorings of the same items: a served reward model against its checkpoint
(docs/real-models.md, "Served reward models"; ``rmaudit compare``'s parity section).

On the responses both scored: the largest absolute score difference, the share within a
tolerance, and Spearman's rank correlation.  On the pairs: the pairs whose preferred response
differs (a *flip*: the sign of score(chosen) − score(rejected) differs, a tie being a sign of
its own), the worst first, and the difference in pair accuracy (a tie a loss, RewardBench's
rule) with Tango's score interval for a difference of paired proportions (Tango 1998,
"Equivalence test and confidence interval for the difference in proportions for the
paired-sample design", Statistics in Medicine 17:891–908): it keeps its coverage when the two
scorings disagree on few pairs or none, where the paired t-interval collapses to a point
(benchmarks/coverage_parity.py measures both, and Newcombe's method 10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._validation import check_fraction
from rmaudit.metrics.preference.accuracy import pair_credit

#: flipped pairs listed, the largest disagreement first
WORST_SHOWN = 5


@dataclass(frozen=True)
class AccuracyDifference:
    """Pair accuracy of the first scoring minus the second's, with its interval at ``ci``:
    ``gained`` pairs only the first gets right, ``lost`` only the second."""

    value: float
    low: float
    high: float
    ci: float
    pairs: int
    gained: int
    lost: int


@dataclass(frozen=True)
class Parity:
    """How far two scorings of the same items agree (first minus second)."""

    responses: int
    largest_difference: float
    tolerance: float
    within_tolerance: float
    #: Spearman's ρ over the responses; None where either scoring is constant
    rank_correlation: float | None
    pairs: int
    #: positions of the flipped pairs, the largest |Δ logit| first
    flips: tuple[int, ...]
    accuracy: AccuracyDifference

    def worst(self, count: int = WORST_SHOWN) -> tuple[int, ...]:
        return self.flips[:count]


def _checked(values: np.ndarray | list[float], field: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise MetricInputError("expected one value per item", field=field)
    if not np.all(np.isfinite(array)):
        raise MetricInputError("expected finite scores", field=field)
    return array


def score_agreement(
    first: np.ndarray, second: np.ndarray, tolerance: float
) -> tuple[float, float, float | None]:
    """(largest |Δ|, share with |Δ| ≤ ``tolerance``, Spearman's ρ) of two scorings of the same
    responses; ρ None where either is constant (undefined)."""
    from scipy.stats import spearmanr

    a, b = _checked(first, "first"), _checked(second, "second")
    if a.size != b.size or a.size == 0:
        raise MetricInputError(f"expected {a.size} scores, at least one", field="second")
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise MetricInputError(
            "expected a finite tolerance ≥ 0", field="tolerance", value=tolerance
        )
    gaps = np.abs(a - b)
    constant = np.ptp(a) == 0 or np.ptp(b) == 0
    rho = None if constant or a.size < 2 else float(spearmanr(a, b).statistic)
    return float(gaps.max()), float(np.mean(gaps <= tolerance)), rho


def flipped_pairs(first_logits: np.ndarray, second_logits: np.ndarray) -> tuple[int, ...]:
    """Positions of the pairs whose preferred response differs, the largest |Δ logit| first."""
    a, b = _checked(first_logits, "first_logits"), _checked(second_logits, "second_logits")
    flipped = np.flatnonzero(np.sign(a) != np.sign(b))
    order = np.argsort(-np.abs(a - b)[flipped], kind="stable")
    return tuple(int(i) for i in flipped[order])


def paired_accuracy_difference(
    first_logits: np.ndarray, second_logits: np.ndarray, ci: float = 0.95
) -> AccuracyDifference:
    """Pair accuracy (a tie a loss) of the first minus the second, θ̂ = (b − c)/n with b pairs
    only the first gets right and c only the second, and Tango's score interval: every Δ
    with |Z(Δ)| ≤ z, where

    ``Z(Δ) = (θ̂ − Δ) / √((2q̃ + Δ − Δ²)/n)``

    and q̃ is the restricted maximum-likelihood P(only the second right) under θ = Δ, the root
    of ``2n q² − (b(1 + Δ) + c(1 − Δ) − 2nΔ) q − cΔ(1 − Δ) = 0`` (Tango 1998, eq. 3–5)."""
    from scipy.special import ndtri

    ci = check_fraction(ci, "ci")
    a, b = _checked(first_logits, "first_logits"), _checked(second_logits, "second_logits")
    n = a.size
    if n == 0 or b.size != n:
        raise MetricInputError(f"expected {n} pairs, at least one", field="second_logits")
    right_a = pair_credit(a, np.zeros(n)) == 1.0
    right_b = pair_credit(b, np.zeros(n)) == 1.0
    gained, lost = int(np.sum(right_a & ~right_b)), int(np.sum(~right_a & right_b))
    z = float(ndtri(0.5 + ci / 2.0))
    score = _tango_score(gained, lost, n)
    theta = (gained - lost) / n
    low = -1.0 if score(-1.0) <= z else _root(score, -1.0, theta, z)
    high = 1.0 if score(1.0) >= -z else _root(score, theta, 1.0, -z)
    return AccuracyDifference(theta, low, high, ci, n, gained, lost)


def _tango_score(gained: int, lost: int, n: int):
    """Z(Δ) of Tango's interval for ``gained`` and ``lost`` discordant pairs of ``n``."""
    theta = (gained - lost) / n

    def score(delta: float) -> float:
        linear = gained * (1 + delta) + lost * (1 - delta) - 2 * n * delta
        root = math.sqrt(max(linear**2 + 8 * n * lost * delta * (1 - delta), 0.0))
        variance = (2 * (linear + root) / (4 * n) + delta - delta**2) / n
        gap = theta - delta
        if variance <= 0:  # Δ at an end of what the table allows
            return 0.0 if gap == 0 else math.copysign(math.inf, gap)
        return gap / math.sqrt(variance)

    return score


def _root(score, low: float, high: float, target: float) -> float:
    """The Δ in [low, high] where the decreasing ``score`` crosses ``target`` (bisection)."""
    for _ in range(64):
        middle = (low + high) / 2
        if score(middle) > target:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def parity(
    first_scores: np.ndarray,
    second_scores: np.ndarray,
    first_logits: np.ndarray,
    second_logits: np.ndarray,
    *,
    tolerance: float,
    ci: float = 0.95,
) -> Parity:
    """Every figure of two scorings' parity: on the responses both scored (``*_scores``, in
    one order) and on the pairs (``*_logits``: score(chosen) − score(rejected), in one order).

    >>> p = parity([0.0, 1.0, 2.0], [0.0, 1.5, 2.0], [1.0, -1.0], [1.0, 0.5], tolerance=0.1)
    >>> p.largest_difference, p.within_tolerance, p.flips, p.accuracy.value
    (0.5, 0.6666666666666666, (1,), -0.5)
    """
    largest, within, rho = score_agreement(first_scores, second_scores, tolerance)
    accuracy = paired_accuracy_difference(first_logits, second_logits, ci)
    return Parity(
        len(first_scores),
        largest,
        tolerance,
        within,
        rho,
        accuracy.pairs,
        flipped_pairs(first_logits, second_logits),
        accuracy,
    )
