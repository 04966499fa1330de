"""Paired comparisons of reward models scored on the same items: the difference of a metric
with its standard error and interval from the per-unit differences, Holm-adjusted p-values,
significance groups (a compact letter display) and simultaneous rank intervals.

A headline metric is a mean of per-unit values (a pair's credit, a prompt's RETA or best-of-n):
two models scored on the same units differ by the mean of the per-unit differences
d_u = x_u(A) − x_u(B), whose standard error is :func:`clustered_stderr` of d (cluster-robust
by prompt where units share one; Liang & Zeger 1986).  Pairing removes the variance the two
models share (the items' difficulty): narrower than √(se_A² + se_B²) where they err alike.  The test
of "no difference" is t = d̄ / se(d̄), two-sided against Student's t with C − 1 degrees of
freedom for C clusters (Cameron & Miller 2015, *A practitioner's guide to cluster-robust
inference*, J. Human Resources 50:317–372, Sec. VI.C: the normal reference over-rejects with
few clusters: the groups' family-wise error was 0.062 at 30 prompts with it, 0.037 with t);
the K(K−1)/2 tests of K models are adjusted by Holm's step-down method (Holm 1979, *A simple
sequentially rejective multiple test procedure*, Scand. J. Statist. 6:65–70), which keeps
the family-wise error rate at α for any dependence between the tests.

Groups and ranks follow from the pairs Holm separates.  The compact letter display is Piepho's
insert-and-absorb algorithm (Piepho 2004, *An algorithm for a letter-based representation of
all-pairwise comparisons*, J. Comput. Graph. Statist. 13:456–466): two models share a letter
exactly when they are not separable; the letter ``a`` is the best model's group.  Model i's
rank interval is [1 + #{j separably better than i}, K − #{j separably worse than i}]: every
interval holds its true rank unless some separation is false or points the wrong way, which
Holm's procedure bounds by α (Shaffer 1980, *Control of directional errors with stagewise
multiple test procedures*, Ann. Statist. 8:1342–1347), so the K intervals are simultaneous at
1 − α (the construction of Holm's "ranking with confidence" used by Al Mohamad, Goeman & van
Zwet 2022, arXiv 1805.06720, Sec. 3, with Holm in place of Tukey).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._validation import check_flag, check_fraction
from rmaudit.metrics.preference.accuracy import clustered_stderr
from rmaudit.metrics.student_t import t_quantile, t_sf, t_sfs

from .letters import letter_display


@dataclass(frozen=True)
class PairedDifference:
    """Model A's value minus model B's on the same units, with its standard error, interval
    (value ± t·stderr, t the quantile of Student's t with clusters − 1 degrees of freedom)
    and two-sided p-value of "no difference"."""

    value: float
    stderr: float
    ci_low: float
    ci_high: float
    p_value: float
    #: how many units (pairs or prompts) both models have a value on
    units: int
    #: how many independent clusters they form (= units without clusters)
    clusters: int


def _check_values(values: object, field: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise MetricInputError(
            f"expected a non-empty 1-D array of per-unit values, got shape {array.shape}",
            field=field,
        )
    if not np.all(np.isfinite(array)):
        raise MetricInputError("expected finite values, got NaN or inf", field=field)
    return array


def stratified_stderr(
    values: np.ndarray,
    strata: Sequence[Hashable],
    clusters: Sequence[Hashable] | np.ndarray | None = None,
) -> float:
    """Standard error of the mean of ``values`` when the units were drawn within fixed strata
    (a section score's subsets), clusters (prompts) within a stratum:

    ``SE² = Σ_h C_h/(C_h−1) · Σ_{c∈h} (Σ_{i∈c} (x_i − x̄_h))² / n²``

    each stratum's cluster sums centred on its own mean x̄_h (Cochran 1977, *Sampling
    Techniques*, 3rd ed., Theorem 5.3, with clusters as the units, Ch. 9).  A weighted mean of
    subset means, Σ_k v_k · mean_k(c), is the mean of x_i = n·v_k·c_i/n_k, and centring per
    stratum leaves the differences between subsets out of its variance, which they are not
    part of when the subsets' sizes are fixed.  With one stratum it is :func:`clustered_stderr`.
    A cluster in two strata counts as one in each.  NaN where a stratum whose values vary has
    fewer than two clusters.

    >>> x = np.array([1.0, 0.0, 1.0, 0.0, 5.0, 3.0])
    >>> round(stratified_stderr(x, ["a"] * 4 + ["b"] * 2), 4)  # √(4/3·1 + 2/1·2) / 6
    0.3849
    """
    labels = [str(s) for s in strata]
    if len(labels) != values.size:
        raise MetricInputError(
            f"expected a stratum for each of the {values.size} values, got {len(labels)}",
            field="strata",
        )
    owners = [str(c) for c in clusters] if clusters is not None else list(range(values.size))
    _, stratum = np.unique(labels, return_inverse=True)
    _, owner = np.unique(owners, return_inverse=True)
    centred = values - (np.bincount(stratum, weights=values) / np.bincount(stratum))[stratum]
    cells, cell = np.unique(stratum * (owner.max() + 1) + owner, return_inverse=True)
    sums = np.bincount(cell, weights=centred)
    cell_stratum = cells // (owner.max() + 1)
    count = np.bincount(cell_stratum, minlength=stratum.max() + 1)
    squares = np.bincount(cell_stratum, weights=sums**2, minlength=count.size)
    spread = np.bincount(stratum, weights=np.abs(centred), minlength=count.size)
    if np.any((count < 2) & (spread > 0)):
        return math.nan
    several = count >= 2
    total = float(np.sum(count[several] / (count[several] - 1) * squares[several]))
    return math.sqrt(total) / values.size


def paired_difference(
    first: Sequence[float] | np.ndarray,
    second: Sequence[float] | np.ndarray,
    *,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    strata: Sequence[Hashable] | None = None,
    ci: float = 0.95,
) -> PairedDifference:
    """mean(first − second) over units both models are scored on, with the cluster-robust
    standard error of the mean difference (:func:`clustered_stderr`; within ``strata``,
    :func:`stratified_stderr`), the interval mean ± t·stderr and the two-sided p-value of
    t = mean / stderr against Student's t with C − H degrees of freedom (C clusters in H
    strata, H = 1 without strata; without clusters or strata it is the paired t-test).

    >>> d = paired_difference([1.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0])
    >>> d.value, round(d.stderr, 4), d.units
    (0.5, 0.2887, 4)
    """
    a, b = _check_values(first, "first"), _check_values(second, "second")
    if a.size != b.size:
        raise MetricInputError(
            f"expected as many values as first ({a.size}), got {b.size}", field="second"
        )
    ci = check_fraction(ci, "ci")
    differences = a - b
    value = float(differences.mean())
    owners = codes(clusters, differences.size, "clusters")
    layers = codes(strata, differences.size, "strata")
    count = np.unique(layers * (owners.max() + 1) + owners).size
    if differences.size < 2:
        stderr = math.nan
    elif strata is None:
        stderr = clustered_stderr(differences, None if clusters is None else owners)
    else:
        stderr = stratified_stderr(differences, strata, clusters)
    freedom = max(count - np.unique(layers).size, 1)
    z = t_quantile(freedom, 0.5 + ci / 2.0)
    tail = t_sf(freedom, _statistic(value, stderr))
    return _tested(value, stderr, z, tail, differences.size, count)


def _statistic(value: float, stderr: float) -> float:
    """|t| of a mean difference (NaN without a positive standard error)."""
    return abs(value) / stderr if math.isfinite(stderr) and stderr > 0 else math.nan


def _tested(
    value: float, stderr: float, z: float, tail: float, units: int, clusters: int
) -> PairedDifference:
    """A mean difference and its standard error with its interval (``z``: the quantile of
    t) and p-value (``tail``: P(T > |t|))."""
    if math.isfinite(stderr) and stderr > 0:
        p_value = 2.0 * tail
    elif math.isfinite(stderr):  # every unit differs by the same amount
        p_value = 1.0 if value == 0 else 0.0
    else:
        p_value = math.nan
    return PairedDifference(
        value, stderr, value - z * stderr, value + z * stderr, p_value, units, clusters
    )


def _every_pair(values: np.ndarray, owners: np.ndarray | None) -> list[PairedDifference]:
    """:func:`paired_difference` (no strata) of rows i and j of ``values`` for every i < j,
    row-major, computed a block of pairs at a time: each row's mean, deviations and sums are
    the 1-D ones in the same order, so the numbers are the same, bit for bit."""
    k, n = values.shape
    index = np.unique(owners, return_inverse=True)[1] if owners is not None else np.arange(n)
    count = int(index.max()) + 1
    freedom = max(count - 1, 1)
    z = t_quantile(freedom, 0.5 + 0.95 / 2.0)
    first, second = np.triu_indices(k, 1)
    block = max(1, 2**20 // n)  # pairs at a time: a block's differences in a few MiB
    means, errors = [], []
    for start in range(0, first.size, block):
        d = values[first[start : start + block]] - values[second[start : start + block]]
        mean = d.mean(axis=1)
        if n < 2 or (owners is not None and count < 2):
            stderr = np.full(mean.size, math.nan)
        elif owners is None:
            stderr = d.std(axis=1, ddof=1) / np.sqrt(n)
        else:  # clustered_stderr's cluster sums, each row's bins after the last row's
            cells = (np.arange(mean.size)[:, None] * count + index).ravel()
            centred = (d - mean[:, None]).ravel()
            sums = np.bincount(cells, weights=centred, minlength=mean.size * count)
            squares = np.sum(sums.reshape(mean.size, count) ** 2, axis=1)
            stderr = np.sqrt(count / (count - 1) * squares) / n
        means += mean.tolist()
        errors += stderr.tolist()
    tails = t_sfs(freedom, [_statistic(v, e) for v, e in zip(means, errors, strict=True)])
    return [
        _tested(v, e, z, tail, n, count) for v, e, tail in zip(means, errors, tails, strict=True)
    ]


def codes(labels: Sequence[Hashable] | np.ndarray | None, size: int, field: str) -> np.ndarray:
    """Labels (clusters, strata) as integer codes, equal labels equal codes (each as its
    text); None: each unit its own (a stratum: one for all, code 0 — see the callers).  An
    integer array passes as it is, so a comparison of many models codes its labels once.

    >>> codes(["q1", "q2", "q1"], 3, "clusters").tolist(), codes(None, 2, "clusters").tolist()
    ([0, 1, 0], [0, 1])
    """
    if labels is None:
        return np.arange(size) if field == "clusters" else np.zeros(size, dtype=int)
    if isinstance(labels, np.ndarray) and labels.dtype.kind in "iu":
        found = labels
    else:
        _, found = np.unique([str(x) for x in labels], return_inverse=True)
    if found.size != size:
        raise MetricInputError(
            f"expected one label per value ({size}), got {found.size}", field=field
        )
    return found.astype(int)


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979): sorted ascending, p_(i) times
    (m − i + 1), made monotone, capped at 1; NaN stays NaN (and does not count in m).

    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise MetricInputError(f"expected a 1-D array, got shape {p.shape}", field="p_values")
    known = np.flatnonzero(np.isfinite(p))
    if np.any((p[known] < 0) | (p[known] > 1)):
        raise MetricInputError("expected p-values in [0, 1]", field="p_values")
    adjusted = np.full(p.shape, np.nan)
    order = known[np.argsort(p[known], kind="stable")]
    m = order.size
    running = 0.0
    for i, index in enumerate(order):
        running = max(running, min(1.0, (m - i) * float(p[index])))
        adjusted[index] = running
    return adjusted


@dataclass(frozen=True)
class HeadToHead:
    """Two models of a comparison head to head: ``first`` minus ``second`` (``first`` the
    better of the two by value)."""

    first: str
    second: str
    difference: PairedDifference
    #: Holm-adjusted over every pair of the comparison
    adjusted_p: float
    #: the adjusted p-value is below α: the two are told apart
    separable: bool


@dataclass(frozen=True)
class Standing:
    """One model in a comparison: its value, letters and simultaneous rank interval."""

    model: str
    value: float
    #: compact letter display: models that share a letter are not separable; ``a`` is the
    #: best model's group
    letters: str
    rank_low: int
    rank_high: int

    @property
    def ranks(self) -> str:
        """``1``, or ``1–3``."""
        return rank_range(self.rank_low, self.rank_high)


def rank_range(low: int, high: int) -> str:
    """A rank interval as the tables show it: ``1``, ``1–3``, or "" where not ranked (0)."""
    if not low:
        return ""
    return str(low) if low == high else f"{low}–{high}"


@dataclass(frozen=True)
class Comparison:
    """Every two models on one metric head to head, and each model's standing (best first)."""

    standings: tuple[Standing, ...]
    head_to_heads: tuple[HeadToHead, ...]
    alpha: float
    higher_is_better: bool


def compare_models(
    values: Mapping[str, Sequence[float] | np.ndarray],
    *,
    clusters: Sequence[Hashable] | None = None,
    strata: Sequence[Hashable] | None = None,
    higher_is_better: bool = True,
    alpha: float = 0.05,
) -> Comparison:
    """Every pair of ``values`` (model → per-unit values, the same units in the same order),
    compared by :func:`paired_difference` (clustered, and within ``strata`` where given),
    Holm-adjusted (:func:`holm`); the significance
    groups (:func:`letter_display`) and rank intervals (:func:`rank_intervals`) at ``alpha``.

    >>> c = compare_models({"a": [1.0, 1.0, 1.0, 0.0] * 10, "b": [0.0, 0.0, 1.0, 0.0] * 10})
    >>> [(s.model, s.letters, s.ranks) for s in c.standings]
    [('a', 'a', '1'), ('b', 'b', '2')]
    """
    alpha = check_fraction(alpha, "alpha")
    higher_is_better = check_flag(higher_is_better, "higher_is_better")
    if len(values) < 2:
        raise MetricInputError(
            f"expected at least two models to compare, got {len(values)}", field="values"
        )
    arrays = {str(model): _check_values(v, f"values[{model!r}]") for model, v in values.items()}
    sizes = {a.size for a in arrays.values()}
    if len(sizes) != 1:
        raise MetricInputError(
            f"expected every model's values over the same units, got sizes {sorted(sizes)}",
            field="values",
        )
    sign = 1.0 if higher_is_better else -1.0
    means = {model: float(a.mean()) for model, a in arrays.items()}
    order = sorted(arrays, key=lambda m: -sign * means[m])
    size = next(iter(sizes))
    # coded once for the K(K−1)/2 differences (a stratified ± keeps the labels given)
    owners = None if clusters is None else codes(clusters, size, "clusters")
    named = [(better, worse) for i, better in enumerate(order) for worse in order[i + 1 :]]
    differences = (
        _every_pair(np.stack([arrays[m] for m in order]), owners)
        if strata is None
        else [
            paired_difference(arrays[b], arrays[w], clusters=clusters, strata=strata)
            for b, w in named
        ]
    )
    raw = [(b, w, d) for (b, w), d in zip(named, differences, strict=True)]
    adjusted = holm([d.p_value for _, _, d in raw])
    head_to_heads = tuple(
        HeadToHead(better, worse, d, float(p), bool(p < alpha))
        for (better, worse, d), p in zip(raw, adjusted, strict=True)
    )
    separated = {(p.first, p.second) for p in head_to_heads if p.separable}
    letters = letter_display(order, separated)
    ranks = rank_intervals(order, separated)
    standings = tuple(Standing(m, means[m], letters[m], ranks[m][0], ranks[m][1]) for m in order)
    return Comparison(standings, head_to_heads, alpha, higher_is_better)


def rank_intervals(
    order: Sequence[str], separated: set[tuple[str, str]]
) -> dict[str, tuple[int, int]]:
    """Each model's plausible ranks: from 1 + the models separably better than it to K − the
    models separably worse.  ``separated`` holds (better, worse) pairs.

    >>> rank_intervals(["a", "b", "c"], {("a", "c")})
    {'a': (1, 2), 'b': (1, 3), 'c': (2, 3)}
    """
    k = len(order)
    return {
        m: (
            1 + sum((other, m) in separated for other in order),
            k - sum((m, other) in separated for other in order),
        )
        for m in order
    }
