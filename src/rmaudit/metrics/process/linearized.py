"""Estimates over questions with their influence values: the ± of a ratio, an F1, a harmonic
mean or an AUROC when the solutions of one question are not independent.

A step metric is a smooth function θ = g(T) of totals T = Σ_q t_q over the Q questions of its
scope (true positives, steps, hits, …).  To first order its error is θ̂ − θ ≈ Σ_q φ_q, with
the influence of question q

    φ_q = ∇g(T) · (t_q − T/Q),

the linearisation (Taylor-series) method for a nonlinear statistic of a cluster sample
(Woodruff 1971, *A simple method for approximating the variance of a complicated estimate*,
JASA 66:411–414; for a ratio, Cochran 1977, *Sampling Techniques*, 3rd ed., §6.4 and §9.1,
with the questions as clusters).  Its standard error is

    SE² = Q/(Q−1) · Σ_q φ_q²,

which is the cluster-robust standard error (Liang & Zeger 1986) of the mean of the
per-question values y_q = θ̂ + Q·φ_q; their mean is θ̂ exactly, since Σ_q φ_q = 0.  rmaudit
stores those y_q as a metric's per-prompt values, so the paired comparison of two PRMs on the
same questions (:mod:`rmaudit.metrics.paired`: the mean and clustered standard error of
d_q = y_q(A) − y_q(B)) is the linearised difference of their estimates, and the ± of one is
the plain standard error of its y_q.  The interval printed is θ̂ ± 1.96·SE; its coverage is
measured by ``benchmarks/coverage_prm.py`` (benchmarks/README.md).

Arrays broadcast: an estimate may hold one value per threshold, ``value`` of shape (T,) and
``influence`` of shape (T, Q).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rmaudit.errors import MetricInputError

#: the normal quantile of a 95% interval, as the other metrics print theirs
Z95 = 1.959963984540054


@dataclass(frozen=True, eq=False)
class LinearizedEstimate:
    """θ̂ with its influence φ_q on each of the Q questions (0 outside ``scope``)."""

    value: np.ndarray
    influence: np.ndarray
    #: the questions the estimate is over (a class's, a split's): its clusters
    scope: np.ndarray

    @property
    def clusters(self) -> int:
        return int(np.count_nonzero(self.scope))

    def stderr(self) -> np.ndarray:
        """``√(Q/(Q−1) · Σ φ_q²)`` over the scope; NaN with fewer than two questions or an
        undefined value."""
        count = self.clusters
        if count < 2:
            return np.full(np.shape(self.value), np.nan)
        squares = np.sum(self.influence**2, axis=-1)
        return np.sqrt(count / (count - 1) * squares)

    def interval(self) -> tuple[np.ndarray, np.ndarray]:
        """θ̂ ± 1.96·SE."""
        half = Z95 * self.stderr()
        return self.value - half, self.value + half

    def per_question(self) -> np.ndarray:
        """y_q = θ̂ + Q·φ_q on the scope, NaN elsewhere: their mean is θ̂."""
        values = np.asarray(self.value)[..., None] + self.clusters * self.influence
        return np.where(self.scope, values, np.nan)


def step_scores(scores: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Each solution's step scores as a float array: at least one, every one finite."""
    checked = []
    for i, found in enumerate(scores):
        array = np.asarray(found, dtype=float)
        if array.ndim != 1 or array.size == 0:
            raise MetricInputError(
                f"solution {i}: expected one score per step, got shape {array.shape}",
                field="scores",
            )
        if not np.all(np.isfinite(array)):
            raise MetricInputError(
                f"solution {i}: expected finite step scores, got NaN or inf", field="scores"
            )
        checked.append(array)
    return checked


def _check_totals(totals: np.ndarray, questions: int, field: str) -> np.ndarray:
    array = np.asarray(totals, dtype=float)
    if array.shape[-1:] != (questions,) or not np.all(np.isfinite(array)):
        raise MetricInputError(
            f"expected finite totals per question, one for each of {questions}", field=field
        )
    return array


def ratio(numerator: np.ndarray, denominator: np.ndarray, scope: np.ndarray) -> LinearizedEstimate:
    """θ̂ = Σ_q n_q / Σ_q d_q with φ_q = (n_q − θ̂·d_q) / Σ d (Cochran 1977, §6.4): a
    proportion of steps, an accuracy over solutions, an F1 (:func:`f1`).  NaN where Σ d = 0.

    >>> r = ratio(np.array([1.0, 3.0]), np.array([2.0, 4.0]), np.array([True, True]))
    >>> float(r.value), [round(float(y), 4) for y in r.per_question()]
    (0.6666666666666666, [0.5556, 0.7778])
    """
    scope = np.asarray(scope, dtype=bool)
    numerator = _check_totals(numerator, scope.size, "numerator")
    denominator = _check_totals(denominator, scope.size, "denominator")
    total = denominator.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = numerator.sum(axis=-1) / total
        influence = (numerator - value[..., None] * denominator) / total[..., None]
    return LinearizedEstimate(value, np.where(scope, influence, 0.0), scope)


def f1(
    true_positive: np.ndarray,
    false_positive: np.ndarray,
    false_negative: np.ndarray,
    scope: np.ndarray,
) -> LinearizedEstimate:
    """F1 = 2·TP / (2·TP + FP + FN), the harmonic mean of precision and recall over the pooled
    counts, as a :func:`ratio` of per-question counts.  0 where TP = 0 and FP + FN > 0 (both
    precision and recall 0, or one undefined and the other 0); NaN with no step to count."""
    return ratio(2 * true_positive, 2 * true_positive + false_positive + false_negative, scope)


def weighted_sum(
    weights: Sequence[float], estimates: Sequence[LinearizedEstimate]
) -> LinearizedEstimate:
    """Σ_i w_i·θ̂_i, over the union of their scopes: the influences add with the same weights
    (PRMScore = ½·F1 + ½·negative F1; an average over splits)."""
    value = sum(w * e.value for w, e in zip(weights, estimates, strict=True))
    influence = sum(w * e.influence for w, e in zip(weights, estimates, strict=True))
    scope = np.logical_or.reduce([e.scope for e in estimates])
    return LinearizedEstimate(np.asarray(value), np.asarray(influence), scope)


def harmonic_mean(a: LinearizedEstimate, b: LinearizedEstimate) -> LinearizedEstimate:
    """F1 = 2ab / (a + b) of two estimates (ProcessBench's F1 of the accuracies on erroneous
    and on correct solutions), with φ = ∂F/∂a·φ_a + ∂F/∂b·φ_b, ∂F/∂a = 2b²/(a + b)²; 0 where
    a = b = 0 (its limit along a = b), with NaN influence (not differentiable there)."""
    total = a.value + b.value
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(total > 0, 2 * a.value * b.value / total, 0.0)
        slope_a = np.where(total > 0, 2 * b.value**2 / total**2, np.nan)
        slope_b = np.where(total > 0, 2 * a.value**2 / total**2, np.nan)
    value = np.where(np.isnan(total), np.nan, value)
    influence = slope_a[..., None] * a.influence + slope_b[..., None] * b.influence
    return LinearizedEstimate(value, influence, a.scope | b.scope)


def question_totals(weights: np.ndarray, question_index: np.ndarray, questions: int) -> np.ndarray:
    """Σ of ``weights`` (…, N) over each question's units: shape (…, Q)."""
    weights = np.asarray(weights, dtype=float)
    lead = weights.shape[:-1]
    rows = int(np.prod(lead)) if lead else 1
    flat = weights.reshape(rows, -1)
    index = (np.arange(rows)[:, None] * questions + question_index[None, :]).ravel()
    sums = np.bincount(index, weights=flat.ravel(), minlength=rows * questions)
    return sums.reshape(*lead, questions)
