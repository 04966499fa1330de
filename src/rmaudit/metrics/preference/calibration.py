"""Confidence and calibration: the max-softmax confidence of a pair's two logits, ECE with
equal-width confidence bins (RMs Under Distribution Shift, arXiv 2311.14743, Sec. 3.1-3.2), and
the Bradley-Terry ECE (Rethinking RM Evaluation, arXiv 2410.05584, App. 8.3)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from rmaudit.metrics._validation import check_choice, check_integer
from rmaudit.metrics.preference._inputs import ArrayLike, check_labels, check_pair_scores
from rmaudit.metrics.preference.accuracy import effective_count, pair_credit, wilson_interval


def confidence(chosen: ArrayLike, rejected: ArrayLike) -> np.ndarray:
    """Max softmax of the two logits: ``max_j e^{L_j} / (e^{L_0} + e^{L_1})`` (RMs Under
    Distribution Shift, arXiv 2311.14743, Sec. 3.2).

    This is also the MSP out-of-distribution score (higher = more in-distribution).  It equals
    ``σ(|L_0 − L_1|)`` with σ the logistic function, computed that way so that it stays exact
    for logits of any size; it lies in [1/2, 1].

    >>> confidence([0.0, 2.0], [0.0, 0.0]).round(4).tolist()
    [0.5, 0.8808]
    """
    chosen_scores, rejected_scores = check_pair_scores(chosen, rejected)
    return 1.0 / (1.0 + np.exp(-np.abs(chosen_scores - rejected_scores)))


@dataclass(frozen=True, eq=False)
class CalibrationResult:
    """An ECE and its reliability diagram.

    ``bin_edges`` has M + 1 entries on the binned quantity (confidence for :func:`ece`, the
    absolute reward margin for :func:`bt_ece`); per bin, ``count`` pairs, their
    ``mean_confidence`` and their ``accuracy`` (NaN for an empty bin).  ``effective_count``:
    with pairs clustered by prompt, each bin's count over its design effect (at most
    ``count``; see :func:`~rmaudit.metrics.preference.accuracy.clustered_stderr`); else None.
    """

    value: float
    bin_edges: np.ndarray
    count: np.ndarray
    mean_confidence: np.ndarray
    accuracy: np.ndarray
    effective_count: np.ndarray | None = None

    def accuracy_interval(self, ci: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Wilson interval of each bin's accuracy (NaN for an empty bin), over the bin's
        effective count when pairs are clustered: bins often hold a handful of pairs with an
        accuracy near 0 or 1, where acc ± 1.96·stderr collapses to a point and misses the
        truth (coverage in ``benchmarks/coverage.py``)."""
        count = self.count if self.effective_count is None else self.effective_count
        return wilson_interval(self.accuracy, count, ci)


def bin_index(binned_on: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each value's bin among I_1 = [e_0, e_1], I_m = (e_{m-1}, e_m]."""
    # side="left" puts a value equal to an inner edge e_m in the bin that ends at e_m.
    return np.searchsorted(edges[1:-1], binned_on, side="left")


def confidence_edges(n_bins: int) -> np.ndarray:
    """The edges of :func:`ece`'s ``n_bins`` equal-width confidence bins on [0, 1]."""
    return np.linspace(0.0, 1.0, check_integer(n_bins, "n_bins", minimum=1) + 1)


def _binned_calibration(
    binned_on: np.ndarray,
    edges: np.ndarray,
    conf: np.ndarray,
    credit: np.ndarray,
    clusters: Sequence[Hashable] | None = None,
) -> CalibrationResult:
    """ECE over bins I_1 = [e_0, e_1], I_m = (e_{m-1}, e_m]: Σ_m |B_m|/n · |conf(B_m) −
    acc(B_m)|; with ``clusters``, each bin's effective count for its interval."""
    n_bins = edges.size - 1
    bins = bin_index(binned_on, edges)
    count = np.bincount(bins, minlength=n_bins)
    conf_sum = np.bincount(bins, weights=conf, minlength=n_bins)
    acc_sum = np.bincount(bins, weights=credit, minlength=n_bins)
    value = float(np.abs(conf_sum - acc_sum).sum() / conf.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(count > 0, conf_sum / count, np.nan)
        acc = np.where(count > 0, acc_sum / count, np.nan)
    effective = None if clusters is None else _effective_counts(bins, credit, clusters, count)
    return CalibrationResult(value, edges, count, mean_conf, acc, effective)


def _effective_counts(
    bins: np.ndarray, credit: np.ndarray, clusters: Sequence[Hashable], count: np.ndarray
) -> np.ndarray:
    """Each bin's :func:`~rmaudit.metrics.preference.accuracy.effective_count`."""
    labels = check_labels(clusters, credit.size, "clusters")
    effective = count.astype(float)
    for b in np.flatnonzero(count > 1):
        members = np.flatnonzero(bins == b)
        effective[b] = effective_count(credit[members], [labels[i] for i in members])
    return effective


def ece(
    chosen: ArrayLike,
    rejected: ArrayLike,
    *,
    n_bins: int = 10,
    ties: str = "loss",
    clusters: Sequence[Hashable] | None = None,
) -> CalibrationResult:
    """Expected calibration error with ``n_bins`` equal-width confidence bins (RMs Under
    Distribution Shift, arXiv 2311.14743, Sec. 3.1).

    ``ECE = Σ_m |B_m|/N · |p̂(B_m) − acc(B_m)|`` where B_m holds the pairs whose :func:`confidence`
    falls in I_1 = [0, 1/M] or I_m = ((m−1)/M, m/M], p̂(B_m) is their mean confidence and acc(B_m)
    the fraction the RM got right (scored chosen above rejected; a tie earns the ``ties`` credit, 0
    by default as in RMs Under Distribution Shift's strict acc^rwd).  The paper uses M = 10.
    Confidence is at least 1/2, so for M = 10 the bins below (0.4, 0.5] stay empty.
    ``clusters[i]`` (pair i's prompt): pairs of one prompt are not independent, so each bin's
    interval counts them by its design effect (:class:`CalibrationResult`).

    >>> result = ece([2.0, 0.0, 1.0, 3.0], [0.0, 2.0, 1.0, 0.0])
    >>> round(result.value, 4), result.count.tolist()
    (0.3273, [0, 0, 0, 0, 1, 0, 0, 0, 2, 1])
    """
    conf = confidence(chosen, rejected)
    credit = pair_credit(chosen, rejected, ties=ties)
    return _binned_calibration(conf, confidence_edges(n_bins), conf, credit, clusters)


def bt_ece(
    chosen: ArrayLike,
    rejected: ArrayLike,
    *,
    n_bins: int = 10,
    binning: str = "quantile",
    ties: str = "loss",
) -> CalibrationResult:
    """Bradley-Terry ECE with bins that split pairs by reward margin (Rethinking RM Evaluation,
    arXiv 2410.05584, App. 8.3, Eq. 12).

    ``ECE = Σ_m |B_m|/n · |acc(B_m) − conf(B_m)|``.  Each pair's margin is
    ``Δ = |L(chosen) − L(rejected)|``, the gap between the response the RM prefers and the
    other one; the Bradley-Terry model turns it into the RM's expected accuracy on the pair,
    ``σ(Δ) = 1 / (1 + e^{−Δ})``, and conf(B_m) is its mean over the bin; acc(B_m) is the
    fraction of the bin's pairs the RM orders correctly (a tie earns the ``ties`` credit).

    The paper does not say where the margin bins' edges lie.  ``binning="quantile"`` (the
    default) puts them at the 0, 1/M, …, 1 quantiles of Δ, so bins hold equal numbers of pairs
    whatever the RM's score scale; ``binning="uniform"`` uses M equal widths over [0, max Δ].
    Bins are right-closed as in :func:`ece` (I_1 = [e_0, e_1], I_m = (e_{m−1}, e_m]), so equal
    margins always share a bin.  Because σ is increasing, margin bins are confidence bins with
    edges σ(e_m): what differs from :func:`ece` is where the edges are, not the confidence.

    >>> result = bt_ece([2.0, 0.0, 1.0, 3.0], [0.0, 2.0, 1.0, 0.0], n_bins=2)
    >>> round(result.value, 4), result.count.tolist()
    (0.3273, [3, 1])
    """
    n_bins = check_integer(n_bins, "n_bins", minimum=1)
    binning = check_choice(binning, ("quantile", "uniform"), "binning")
    chosen_scores, rejected_scores = check_pair_scores(chosen, rejected)
    margin = np.abs(chosen_scores - rejected_scores)
    conf = 1.0 / (1.0 + np.exp(-margin))
    credit = pair_credit(chosen_scores, rejected_scores, ties=ties)
    if binning == "quantile":
        edges = np.quantile(margin, np.linspace(0.0, 1.0, n_bins + 1))
    else:
        edges = np.linspace(0.0, float(margin.max()), n_bins + 1)
    return _binned_calibration(margin, edges, conf, credit)
