"""ECE, AUROC and FPR@95 on many bootstrap resamples at once: each resample is a row of counts
(how often each pair is drawn; ``rmaudit.metrics.cluster_bootstrap.resample_counts``), and the
statistic of the resample is the statistic of its pairs repeated that often — the same value
:func:`~rmaudit.metrics.preference.calibration.ece`,
:func:`~rmaudit.metrics.preference.ood.auroc` and
:func:`~rmaudit.metrics.preference.ood.fpr_at_95_tpr` give on the repeated pairs, computed
with sorted cumulative counts instead of once per resample (a shift sweep has 45 points).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics.cluster_bootstrap import CHUNK_CELLS
from rmaudit.metrics.preference._inputs import ArrayLike, check_pair_scores
from rmaudit.metrics.preference.accuracy import pair_credit
from rmaudit.metrics.preference.calibration import bin_index, confidence, confidence_edges
from rmaudit.metrics.preference.ood import check_detector_scores


def _in_chunks(counts: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``statistic`` of each row of ``counts``, over blocks of rows of at most CHUNK_CELLS."""
    rows = max(1, CHUNK_CELLS // max(1, counts.shape[1]))
    return np.concatenate([statistic(counts[i : i + rows]) for i in range(0, len(counts), rows)])


def resampled_ece(
    chosen: ArrayLike,
    rejected: ArrayLike,
    counts: np.ndarray,
    *,
    n_bins: int = 10,
    ties: str = "loss",
) -> np.ndarray:
    """Each resample's ECE (RMs Under Distribution Shift, arXiv 2311.14743, Sec. 3.1): per
    confidence bin, |Σ counts·(conf − credit)|, summed over bins, over the resample's size."""
    chosen_scores, rejected_scores = check_pair_scores(chosen, rejected)
    conf = confidence(chosen_scores, rejected_scores)
    gap = conf - pair_credit(chosen_scores, rejected_scores, ties=ties)
    edges = confidence_edges(n_bins)
    in_bin = np.zeros((gap.size, edges.size - 1))
    in_bin[np.arange(gap.size), bin_index(conf, edges)] = 1.0
    return _in_chunks(
        counts, lambda block: np.abs((block * gap) @ in_bin).sum(axis=1) / block.sum(axis=1)
    )


def _paired(id_scores: ArrayLike, ood_scores: ArrayLike, counts: np.ndarray) -> tuple:
    """The detector scores, one ID and one OOD score per position of ``counts``' rows."""
    ind, ood = check_detector_scores(id_scores, ood_scores)
    if not ind.size == ood.size == counts.shape[1]:
        raise MetricInputError(
            f"expected as many ID and OOD scores as counts per resample ({counts.shape[1]}), "
            f"got {ind.size} and {ood.size}",
            field="ood_scores",
        )
    return ind, ood


def _cumulative(counts: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The counts of the first j positions of ``order`` (j = 0 … n) as an (n + 1) × draws
    array (pairs first: numpy sums rows fastest)."""
    cumulative = np.zeros((order.size + 1, counts.shape[0]), dtype=np.int64)
    np.cumsum(counts.T[order], axis=0, out=cumulative[1:])
    return cumulative


def resampled_auroc(id_scores: ArrayLike, ood_scores: ArrayLike, counts: np.ndarray) -> np.ndarray:
    """Each resample's AUROC (the Mann-Whitney statistic, RMs Under Distribution Shift Sec.
    5.3), the ID and OOD score at one position drawn together: Σ_i c_i·(#OOD below s_i +
    #OOD at or below s_i)/2 over (Σ c)²."""
    ind, ood = _paired(id_scores, ood_scores, counts)
    order = np.argsort(ood, kind="stable")
    left = np.searchsorted(ood[order], ind, side="left")
    right = np.searchsorted(ood[order], ind, side="right")

    def auroc_of(block: np.ndarray) -> np.ndarray:
        cumulative = _cumulative(block, order)
        pairs_below = (block.T * (cumulative[left] + cumulative[right])).sum(axis=0)
        return pairs_below / 2.0 / block.sum(axis=1).astype(float) ** 2

    return _in_chunks(counts, auroc_of)


def resampled_fpr95(id_scores: ArrayLike, ood_scores: ArrayLike, counts: np.ndarray) -> np.ndarray:
    """Each resample's FPR@95 (RMs Under Distribution Shift Sec. 5.3): the threshold is its
    k-th largest ID score, k = ⌈0.95·(Σ c)⌉, and the OOD scores at or above it are accepted."""
    ind, ood = _paired(id_scores, ood_scores, counts)
    descending = np.argsort(-ind, kind="stable")
    order = np.argsort(ood, kind="stable")

    def fpr_of(block: np.ndarray) -> np.ndarray:
        total = block.sum(axis=1, dtype=np.int64)
        k = (95 * total + 99) // 100  # ⌈0.95 n⌉ in integers, as fpr_at_95_tpr
        reached = np.cumsum(block.T[descending], axis=0) >= k
        threshold = ind[descending][np.argmax(reached, axis=0)]
        below = _cumulative(block, order)[
            np.searchsorted(ood[order], threshold, side="left"), np.arange(total.size)
        ]
        return (total - below) / total

    return _in_chunks(counts, fpr_of)
