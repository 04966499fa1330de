"""Out-of-distribution detection under shift (RMs Under Distribution Shift, arXiv 2311.14743, Sec.
5): the energy score and an OOD
detector's AUROC and FPR at 95% TPR between an in-distribution and a shifted set."""

from __future__ import annotations

from typing import Any

import numpy as np

from rmaudit.metrics.preference._inputs import ArrayLike, check_pair_scores, check_scores


def energy_score(chosen: ArrayLike, rejected: ArrayLike) -> np.ndarray:
    """Energy score of each pair: ``S = −log(e^{L_0} + e^{L_1})`` (RMs Under Distribution Shift,
    arXiv 2311.14743, Sec. 5.1).

    Computed as ``−logaddexp(L_0, L_1)``, which does not overflow for large logits.  Lower
    energy means more in-distribution, so an OOD detector in :func:`auroc` and
    :func:`fpr_at_95_tpr` passes ``−energy_score(...)``.

    >>> energy_score([0.0, 1000.0], [0.0, 1000.0]).round(4).tolist()
    [-0.6931, -1000.6931]
    """
    chosen_scores, rejected_scores = check_pair_scores(chosen, rejected)
    return -np.logaddexp(chosen_scores, rejected_scores)


def check_detector_scores(id_scores: Any, ood_scores: Any) -> tuple[np.ndarray, np.ndarray]:
    return check_scores(id_scores, "id_scores"), check_scores(ood_scores, "ood_scores")


def auroc(id_scores: ArrayLike, ood_scores: ArrayLike) -> float:
    """Area under the ROC curve of an OOD detector; in-distribution is the positive class.

    Scores are the detector's, **higher meaning more in-distribution** (``−energy``, or the MSP
    :func:`confidence`).  ``AUROC = P(s_id > s_ood) + ½ P(s_id = s_ood)`` over all (ID, OOD)
    sample pairs — the Mann-Whitney statistic, computed from average ranks; it equals
    ``sklearn.metrics.roc_auc_score`` with label 1 for ID.  1 separates perfectly, 1/2 is
    chance (RMs Under Distribution Shift, arXiv 2311.14743, Sec. 5.3, Table 2).

    >>> auroc([3.0, 2.0, 1.0], [1.0, 0.0])
    0.9166666666666666
    """
    ind, ood = check_detector_scores(id_scores, ood_scores)
    from scipy.stats import rankdata  # scipy.stats loads only when AUROC is computed

    ranks = rankdata(np.concatenate([ind, ood]))  # ties share their average rank
    u_statistic = ranks[: ind.size].sum() - ind.size * (ind.size + 1) / 2.0
    return float(u_statistic / (ind.size * ood.size))


def fpr_at_95_tpr(id_scores: ArrayLike, ood_scores: ArrayLike) -> float:
    """Fraction of shifted samples accepted at the threshold that accepts 95% of ID samples.

    A sample is accepted as in-distribution when its score is ``>= t`` (higher = more ID, as in
    :func:`auroc`).  t is the largest threshold with TPR(t) = #{s_id >= t}/n_id >= 0.95, i.e. the
    k-th largest ID score with k = ⌈0.95 · n_id⌉; then ``FPR@95 = #{s_ood >= t} / n_ood``.  Ties at
    t are all accepted, ID and OOD alike, so the achieved TPR can exceed 95%.  Lower is better (RMs
    Under Distribution Shift, arXiv 2311.14743, Sec. 5.3, Table 2).

    >>> ind = np.arange(1.0, 21.0)                      # 20 ID scores 1..20: t = 2 (k = 19)
    >>> fpr_at_95_tpr(ind, [0.0, 1.0, 2.0, 3.0])        # 2 and 3 are accepted
    0.5
    """
    ind, ood = check_detector_scores(id_scores, ood_scores)
    k = (95 * ind.size + 99) // 100  # ⌈0.95 n⌉ in integers, free of float rounding
    threshold = np.partition(ind, ind.size - k)[ind.size - k]
    return float(np.count_nonzero(ood >= threshold) / ood.size)
