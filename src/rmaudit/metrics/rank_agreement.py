"""Do two benchmarks rank the same models alike?  The rank correlation of the models' headline
numbers on benchmark A with theirs on benchmark B, with intervals that hold the sampling error
of both benchmarks' units.  "Rethinking Reward Model Evaluation: Are We Barking up the Wrong
Tree?" (arXiv 2410.05584) asks how well an RM's accuracy on one benchmark predicts what it does
for a policy, and measures it with Spearman's and Kendall's correlations (its App. 8.3); the
RewardMATH paper (Kim et al., arXiv 2410.01729) asks it of RewardBench's math subset against a
one-correct-of-ten benchmark.

Each model's number is a mean of per-unit values (a pair's credit, a problem's accuracy, MRR or
RETA), so the data are two matrices, ``units_a`` (units of A × models) and ``units_b``, one column
per model in the same order.  The statistics are Spearman's ρ (Pearson's correlation of the
average ranks) and Kendall's τ_b (ties counted as neither concordant nor discordant, the
denominator √((P − T_A)(P − T_B)) of Kendall 1945) of the two columns' means; they agree with
:func:`scipy.stats.spearmanr` and :func:`scipy.stats.kendalltau`.

The interval holds every value the correlation can take over the orderings the data leave
possible.  On each benchmark the models are compared pairwise (:func:`compare_models`: paired
differences, Holm-adjusted); with probability at least 1 − α' every pair it separates is
ordered the right way (Shaffer 1980, the guarantee behind the rank intervals), so the models'
true order is one of the linear extensions of the separated pairs.  The two benchmarks are
independent, so at α' = 1 − √(1 − α) on each, both true orders are among the extensions with
probability at least 1 − α, and the interval [min, max] of ρ (τ) over every pair of extensions
covers the correlation of the models' expected numbers at least that often, whatever they are
(a projection of the simultaneous confidence set of the two orders).  It is
conservative by construction; a percentile bootstrap was tried first and covered 0.00–0.56 when
models are close and the benchmarks agree (benchmarks/coverage_rank_agreement.py, where the
measured coverage of this interval is too).  When more than :data:`MOST_ORDERINGS` orderings
remain on one side, or their pairs are too many to visit, the interval is [−1, 1] and
``unbounded`` says so.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import rankdata

from rmaudit.errors import MetricInputError
from rmaudit.metrics._validation import check_fraction
from rmaudit.metrics.paired import compare_models

#: orderings enumerated on one side at most; beyond, the interval is [−1, 1]
MOST_ORDERINGS = 5_000
#: pairs of orderings visited at most (in blocks), for the same reason
_MOST_PAIRS = 10_000_000
_BLOCK = 2_000


@dataclass(frozen=True)
class Correlation:
    """One rank correlation with its interval."""

    value: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class RankAgreement:
    """Spearman's ρ and Kendall's τ_b between two benchmarks' numbers for the same models."""

    spearman: Correlation
    kendall: Correlation
    models: int
    units_a: int
    units_b: int
    #: the orderings of the models each benchmark leaves possible (0: more than the cap)
    orderings_a: int
    orderings_b: int
    #: too many orderings to bound the correlations: the interval is [−1, 1]
    unbounded: bool


def rank_agreement(
    units_a: Any,
    units_b: Any,
    *,
    clusters_a: Sequence[Hashable] | None = None,
    clusters_b: Sequence[Hashable] | None = None,
    level: float = 0.95,
) -> RankAgreement:
    """The rank correlations of the column means of ``units_a`` and ``units_b`` (units ×
    models, the models in the same order), with their intervals at ``level``; a side's units
    that share a cluster (pairs of one prompt) are compared clustered.

    >>> a = np.array([[1.0, 0, 0], [1, 1, 0]]); b = np.array([[0.9, 0.5, 0.1], [0.8, 0.6, 0.0]])
    >>> found = rank_agreement(a, b)
    >>> found.spearman.value, found.kendall.value, found.spearman.ci_low  # 0 beats 2 in every unit
    (1.0, 1.0, -0.5)
    """
    a, b = _units(units_a, "units_a"), _units(units_b, "units_b")
    if a.shape[1] != b.shape[1]:
        raise MetricInputError(
            f"expected the same models on both sides, got {a.shape[1]} and {b.shape[1]}",
            field="units_b",
        )
    level = check_fraction(level, "level")
    alpha = 1 - np.sqrt(level)
    point_a, point_b = a.mean(axis=0, keepdims=True), b.mean(axis=0, keepdims=True)
    for point, field in ((point_a, "units_a"), (point_b, "units_b")):
        if np.all(point == point[0, 0]):
            raise MetricInputError(
                "every model has the same number: no ranking to correlate", field=field
            )
    ranks_a, ranks_b = _orderings(a, clusters_a, alpha), _orderings(b, clusters_b, alpha)
    unbounded = ranks_a is None or ranks_b is None or len(ranks_a) * len(ranks_b) > _MOST_PAIRS
    if unbounded:
        rho_range = tau_range = (-1.0, 1.0)
    else:
        assert ranks_a is not None and ranks_b is not None
        rho_range, tau_range = _ranges(ranks_a, ranks_b)
    return RankAgreement(
        spearman=Correlation(float(spearman(point_a, point_b)[0]), *rho_range),
        kendall=Correlation(float(kendall(point_a, point_b)[0]), *tau_range),
        models=a.shape[1],
        units_a=len(a),
        units_b=len(b),
        orderings_a=0 if ranks_a is None else len(ranks_a),
        orderings_b=0 if ranks_b is None else len(ranks_b),
        unbounded=unbounded,
    )


def spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's ρ of each row of ``x`` with the same row of ``y`` (average ranks for ties;
    nan where a row is all tied)."""
    rx = rankdata(x, axis=1) - (x.shape[1] + 1) / 2
    ry = rankdata(y, axis=1) - (y.shape[1] + 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(rx * ry, axis=1) / np.sqrt(np.sum(rx**2, axis=1) * np.sum(ry**2, axis=1))


def kendall(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ_b of each row of ``x`` with the same row of ``y`` (nan where a row is all
    tied)."""
    sx, sy = _signs(x), _signs(y)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(sx * sy, axis=1) / np.sqrt(np.sum(sx != 0, axis=1) * np.sum(sy != 0, axis=1))


def _signs(x: np.ndarray) -> np.ndarray:
    i, j = np.triu_indices(x.shape[1], k=1)
    return np.sign(x[:, i] - x[:, j])


def _orderings(
    units: np.ndarray, clusters: Sequence[Hashable] | None, alpha: float
) -> np.ndarray | None:
    """Every order of the models consistent with the pairs told apart at ``alpha``, as rows
    of scores (the higher, the better placed); None past :data:`MOST_ORDERINGS`."""
    models = [str(k) for k in range(units.shape[1])]
    found = compare_models(dict(zip(models, units.T, strict=True)), clusters=clusters, alpha=alpha)
    better_than = [0] * len(models)
    for pair in found.head_to_heads:
        if pair.separable:
            better_than[int(pair.second)] |= 1 << int(pair.first)
    rows: list[np.ndarray] = []
    for order in _extensions(better_than):
        if len(rows) == MOST_ORDERINGS:
            return None
        scores = np.empty(len(models))
        scores[order] = np.arange(len(models), 0, -1)
        rows.append(scores)
    return np.array(rows)


def _extensions(better_than: list[int]) -> Iterator[list[int]]:
    """The linear extensions of a partial order: ``better_than[k]`` is the bit set of the
    models that must come before model k."""
    everyone = len(better_than)

    def extend(placed: int, order: list[int]) -> Iterator[list[int]]:
        if len(order) == everyone:
            yield order
            return
        for k in range(everyone):
            if not placed >> k & 1 and better_than[k] & ~placed == 0:
                yield from extend(placed | 1 << k, [*order, k])

    return extend(0, [])


def _ranges(
    ranks_a: np.ndarray, ranks_b: np.ndarray
) -> tuple[tuple[float, float], tuple[float, float]]:
    """The least and greatest ρ and τ over every pair of orderings (untied ranks, so both
    are one matrix product of centred ranks or of pair signs)."""
    m = ranks_a.shape[1]
    centred_b = ranks_b - (m + 1) / 2
    signs_b = _signs(ranks_b)
    rho_scale, tau_scale = m * (m * m - 1) / 12, m * (m - 1) / 2
    rho, tau = [np.inf, -np.inf], [np.inf, -np.inf]
    for start in range(0, len(ranks_a), _BLOCK):
        block = ranks_a[start : start + _BLOCK]
        r = (block - (m + 1) / 2) @ centred_b.T / rho_scale
        t = _signs(block) @ signs_b.T / tau_scale
        rho = [min(rho[0], r.min()), max(rho[1], r.max())]
        tau = [min(tau[0], t.min()), max(tau[1], t.max())]
    return (float(rho[0]), float(rho[1])), (float(tau[0]), float(tau[1]))


def _units(units: Any, field: str) -> np.ndarray:
    try:
        array = np.asarray(units, dtype=float)
    except (TypeError, ValueError) as error:
        raise MetricInputError(
            f"expected a units × models array of numbers: {error}", field=field
        ) from None
    if array.ndim != 2 or array.shape[0] < 2 or array.shape[1] < 3:
        raise MetricInputError(
            f"expected at least 2 units × 3 models, got shape {array.shape}", field=field
        )
    if not np.all(np.isfinite(array)):
        row = int(np.argwhere(~np.isfinite(array))[0][0])
        raise MetricInputError(f"unit {row}: expected finite values", field=field)
    return array
