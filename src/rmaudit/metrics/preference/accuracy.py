"""Pair accuracy — the share of pairs whose chosen response the RM scores higher (RewardBench,
RewardBench, arXiv 2403.13787; RMs Under Distribution Shift, arXiv 2311.14743, Sec. 3.2) — with its
standard error and Wilson interval."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from rmaudit.metrics._results import MetricResult
from rmaudit.metrics._validation import check_fraction
from rmaudit.metrics.preference._inputs import (
    ArrayLike,
    LabelT,
    check_labels,
    check_pair_scores,
    tie_credit,
)


def pair_credit(chosen: ArrayLike, rejected: ArrayLike, *, ties: str = "loss") -> np.ndarray:
    """Per-pair credit: 1 if the RM scores chosen above rejected, the tie credit if equal, else 0.

    The tie credit is 0 for ``ties="loss"`` (RewardBench and RMs Under Distribution Shift's acc^rwd
    use a strict ``>``) and 1/2 for ``ties="half"``.

    >>> pair_credit([1.0, 0.0, 2.0], [0.0, 1.0, 2.0], ties="half").tolist()
    [1.0, 0.0, 0.5]
    """
    chosen_scores, rejected_scores = check_pair_scores(chosen, rejected)
    credit = (chosen_scores > rejected_scores).astype(float)
    credit[chosen_scores == rejected_scores] = tie_credit(ties)
    return credit


#: Below this many successes or failures (n·min(acc, 1 − acc)) the normal interval
#: acc ± 1.96·stderr of an accuracy misses the truth too often — coverage 0.75 at 28 pairs and
#: accuracy 0.95, 0.88 at 100 pairs and 0.95 (``benchmarks/coverage.py``; exact binomial
#: sums agree) — so callers label that ± approximate; the Wilson CI keeps 0.94-0.96 there.
WALD_MINIMUM = 10


def wald_is_approximate(value: float, count: int) -> bool:
    """Whether ``value ± 1.96·stderr`` of an accuracy over ``count`` pairs is approximate."""
    return count * min(value, 1.0 - value) < WALD_MINIMUM


def wilson_interval(
    value: np.ndarray | float, count: np.ndarray | float, ci: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval of a proportion ``value`` observed over ``count`` trials.

    Unlike the normal interval it never collapses to a point at 0 or 1 and keeps close to
    its nominal coverage for small counts (Brown, Cai & DasGupta 2001).
    """
    return wilson_at_quantile(value, count, _normal_quantile(ci))


def _normal_quantile(ci: float) -> float:
    from scipy.special import ndtri  # scipy loads when an interval is computed, not on import

    return float(ndtri(0.5 + check_fraction(ci, "ci") / 2.0))


def wilson_at_quantile(
    value: np.ndarray | float, count: np.ndarray | float, z: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`wilson_interval` with the quantile ``z`` given (Student's t in place of the
    normal one, for clustered data)."""
    value, count = np.asarray(value, dtype=float), np.asarray(count, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        shrink = 1.0 + z * z / count
        centre = (value + z * z / (2.0 * count)) / shrink
        half = z / shrink * np.sqrt(value * (1.0 - value) / count + z * z / (4.0 * count**2))
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


#: successes (or failures) at most this many: the bound beside them is the Poisson one
#: (Brown, Cai & DasGupta 2001, Sec. 4.1.1: x* = 3 above 50 trials)
POISSON_EDGE = 3


def edge_wilson_interval(
    value: float, count: float, ci: float = 0.95, *, quantile: float | None = None
) -> tuple[float, float]:
    """Wilson's interval of a proportion ``value`` over ``count`` trials, with Brown, Cai &
    DasGupta's modification at the edges (*Interval estimation for a binomial proportion*,
    Statistical Science 16, 2001, Sec. 4.1.1, the "modified Wilson" interval): where the
    successes x = count·value are more than 0 and at most :data:`POISSON_EDGE`, the lower
    bound is the Poisson one, ½χ²(2x; α/2)/count, if that lies further out; where the
    failures are, the upper bound likewise.  Wilson's own bound there lies past the true
    rate too often (at a true accuracy of 0.999 over 160 trials, one failure seen puts
    Wilson's upper bound below 0.999).  ``x`` may be fractional (a half credit counts half a
    success).  ``quantile``: the quantile in place of the normal one of ``ci`` (Student's t),
    the Poisson bound's tail α/2 the normal tail beyond it.

    >>> [round(b, 4) for b in edge_wilson_interval(159 / 160, 160)]
    [0.9655, 0.9998]
    >>> [round(b, 4) for b in edge_wilson_interval(1.0, 160)]
    [0.9766, 1.0]
    """
    from scipy.special import gammaincinv, ndtr

    z = _normal_quantile(ci) if quantile is None else quantile
    low, high = (float(b) for b in wilson_at_quantile(value, count, z))
    tail = float(ndtr(-z))
    successes, failures = count * value, count * (1.0 - value)
    if 0.0 < successes <= POISSON_EDGE:
        low = min(low, float(gammaincinv(successes, tail)) / count)
    if 0.0 < failures <= POISSON_EDGE:
        high = max(high, 1.0 - float(gammaincinv(failures, tail)) / count)
    return min(low, value), max(high, value)


def clustered_stderr(values: np.ndarray, clusters: Sequence[Hashable] | np.ndarray | None) -> float:
    """Standard error of the mean of ``values`` when the items of one cluster (the pairs of
    one prompt) are not independent: the cluster-robust (sandwich) form

    ``SE² = C/(C−1) · Σ_c (Σ_{i∈c} (x_i − x̄))² / n²``

    over C clusters (Liang & Zeger 1986, with the usual C/(C−1) correction).  With one item
    per cluster it is the plain std(x, ddof=1)/√n; with equal-sized clusters it is the
    standard error of the cluster means, std(m_c, ddof=1)/√C.  ``None``: one cluster per
    item.  NaN with fewer than two clusters.

    >>> x = np.array([1.0, 1.0, 0.0, 0.0])
    >>> clustered_stderr(x, None) == float(x.std(ddof=1) / 2)
    True
    >>> clustered_stderr(x, ["a", "a", "b", "b"])   # two prompts, each all right or all wrong
    0.5
    """
    n = values.size
    if clusters is None:
        return float(values.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0
    if isinstance(clusters, np.ndarray) and clusters.dtype.kind in "iu":  # coded already
        if clusters.size != n:
            check_labels(clusters, n, "clusters")  # the error it raises
        _, index = np.unique(clusters, return_inverse=True)
    else:
        labels = [str(c) for c in check_labels(clusters, n, "clusters")]
        _, index = np.unique(labels, return_inverse=True)
    sums = np.bincount(index, weights=values - values.mean())
    count = sums.size
    if count < 2:
        return float("nan")
    return float(np.sqrt(count / (count - 1) * np.sum(sums**2)) / n)


def effective_count(values: np.ndarray, clusters: Sequence[Hashable] | None) -> float:
    """How many independent items ``values`` are worth: n without ``clusters``; with them, n
    over the design effect deff = (:func:`clustered_stderr` / the plain one)², at least 1
    (Kish 1965), or 1 when a single cluster holds them all."""
    n = values.size
    if clusters is None:
        return float(n)
    clustered = clustered_stderr(values, clusters)
    if not np.isfinite(clustered):  # one prompt: one independent unit
        return 1.0
    plain = clustered_stderr(values, None)
    return n / max((clustered / plain) ** 2, 1.0) if plain > 0 else float(n)


def _mean_result(
    values: np.ndarray, *, ci: float, clusters: Sequence[Hashable] | None = None
) -> MetricResult:
    """Mean of per-pair credits with its standard error and Wilson interval (a tie's half
    credit counts as half a success).  With ``clusters`` the standard error is
    :func:`clustered_stderr` and Wilson's interval takes the :func:`effective_count`."""
    value = float(values.mean())
    stderr = clustered_stderr(values, clusters)
    low, high = wilson_interval(value, effective_count(values, clusters), ci)
    # rounding must not leave an accuracy of exactly 0 or 1 a hair outside its interval
    return MetricResult(value, stderr, min(float(low), value), max(float(high), value), values)


def accuracy(
    chosen: ArrayLike,
    rejected: ArrayLike,
    *,
    ties: str = "loss",
    ci: float = 0.95,
    clusters: Sequence[Hashable] | None = None,
) -> MetricResult:
    """Fraction of pairs the RM orders correctly (RewardBench, arXiv 2403.13787; RMs Under
    Distribution Shift, arXiv 2311.14743, Sec. 3.2).

    ``acc = (1/N) Σ_i ( 1[L(chosen_i) > L(rejected_i)] + t · 1[L(chosen_i) = L(rejected_i)] )``
    with t = 0 for ``ties="loss"`` (RewardBench's rule: a tie is not a win) and t = 1/2 for
    ``ties="half"``.  ``per_prompt`` holds the per-pair credit; the standard error is across
    pairs and the interval is Wilson's (:func:`wilson_interval`), which keeps its coverage
    for the small subsets and extreme accuracies of RewardBench where the normal interval
    does not (see :data:`WALD_MINIMUM`).  ``clusters[i]`` (e.g. pair i's prompt) makes the
    standard error cluster-robust, for pairs that share a prompt (RM-Bench's 9 style pairs
    per prompt): see :func:`clustered_stderr`.

    >>> accuracy([3.0, 1.0, 0.0, 2.0], [1.0, 2.0, 0.0, 0.0]).value
    0.5
    >>> accuracy([3.0, 1.0, 0.0, 2.0], [1.0, 2.0, 0.0, 0.0], ties="half").value
    0.625
    """
    credit = pair_credit(chosen, rejected, ties=ties)
    return _mean_result(credit, ci=ci, clusters=clusters)


def subset_accuracy(
    chosen: ArrayLike,
    rejected: ArrayLike,
    subsets: Sequence[LabelT],
    *,
    ties: str = "loss",
    ci: float = 0.95,
    clusters: Sequence[Hashable] | None = None,
) -> dict[LabelT, MetricResult]:
    """:func:`accuracy` within each subset, keyed by subset label in order of first appearance.

    ``subsets[i]`` labels pair i (e.g. RewardBench's ``"llmbar-natural"``).  Each subset's
    result is computed from its own pairs, so its ``per_prompt`` has one entry per pair of the
    subset and its size is the subset's pair count.  ``clusters``: as in :func:`accuracy`.

    >>> result = subset_accuracy([1.0, 0.0, 1.0], [0.0, 1.0, 0.0], ["a", "b", "a"])
    >>> {name: r.value for name, r in result.items()}
    {'a': 1.0, 'b': 0.0}
    """
    credit = pair_credit(chosen, rejected, ties=ties)
    labels = check_labels(subsets, credit.size, "subsets")
    members: dict[LabelT, list[int]] = {}
    for i, label in enumerate(labels):
        members.setdefault(label, []).append(i)
    if clusters is not None:
        clusters = check_labels(clusters, credit.size, "clusters")
    return {
        label: _mean_result(
            credit[rows], ci=ci, clusters=None if clusters is None else [clusters[i] for i in rows]
        )
        for label, rows in members.items()
    }
