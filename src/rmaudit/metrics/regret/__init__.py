"""Does a cheap metric predict policy regret?  "Rethinking Reward Model Evaluation" (arXiv
2410.05584).

A *gold* score r* (a trusted RM, the oracle) and a *proxy* RM r score the same pools: several
responses per prompt.  Two kinds of quantity are compared across proxies:

* **RM error** — per-prompt agreement of r with r* (App. 8.3): pairwise accuracy, Pearson,
  Spearman, Kendall τ-b, Chatterjee ξ, MRR, NDCG and Bo5 (each computed per prompt, then
  averaged over prompts), and the Bradley-Terry calibration error (pooled over every pair).
* **Policy regret** — the normalised drop ratio of best-of-n sampling (Sec. 2, Eq. 2),
  :func:`ndr`.

:func:`regret_correlation` runs the N×N framework (Sec. 2, Fig. 2b): every RM in turn is the
gold and the others are proxies; for each gold, each error metric is correlated with the NDR
across proxies (Kendall τ, Pearson, Spearman, and the MRR of the best-by-metric proxy —
Table 1 / Table 4), and the per-gold correlations are averaged.  Uncertainty is a percentile
bootstrap over prompts that redraws the prompts once per replicate for every RM, metric and
regret at the same time, so the interval covers the whole pipeline.

Conventions, shared by every function here:

* Ties in the proxy are broken uniformly at random and estimators take the exact expectation
  over that tie-break (as everywhere in :mod:`rmaudit.metrics`).  Tied gold scores share
  their average rank (Spearman, NDCG) or are averaged over a random order (ξ, MRR).
* A prompt whose gold scores are all equal ranks nothing: it is an error.  A proxy that is
  constant on a prompt has no association with the gold there: Pearson, Spearman, Kendall τ-b
  and ξ are defined as 0 for that prompt (scipy returns NaN).
* Under the Regressional Goodhart normal model (Sec. 5, App. 8.4) accuracy, the seed's degree
  of overoptimization and the best-of-n NDR all have closed forms: :func:`goodhart_accuracy`,
  :func:`goodhart_overoptimization`, :func:`goodhart_ndr`.

>>> import numpy as np
>>> gold = [np.array([1.0, 2.0, 3.0, 4.0]), np.array([4.0, 1.0, 3.0, 2.0])]
>>> proxy = [np.array([1.0, 2.0, 4.0, 3.0]), np.array([4.0, 1.0, 3.0, 2.0])]
>>> round(kendall_tau_b(gold, proxy).value, 4), round(ndr(gold, gold, 2).value, 4)
(0.8333, 1.0)
"""

from rmaudit.metrics.regret.across import correlate_across, permutation_p_values
from rmaudit.metrics.regret.error_metrics import (
    ERROR_METRICS,
    LOWER_IS_BETTER,
    accuracy_pair,
    bo5,
    bt_calibration_error,
    chatterjee_xi,
    kendall_tau_b,
    mean_reciprocal_rank,
    ndcg,
    pearson_correlation,
    spearman_correlation,
    xi_correlation,
)
from rmaudit.metrics.regret.goodhart import (
    goodhart_accuracy,
    goodhart_from_accuracy,
    goodhart_ndr,
    goodhart_overoptimization,
)
from rmaudit.metrics.regret.ndr import ndr, ndr_curve
from rmaudit.metrics.regret.study import (
    CORRELATIONS,
    MIN_RELIABILITY,
    REGRET_STUDY_DESIGNS,
    CorrelationEstimate,
    RegretStudy,
    regret_correlation,
)

__all__ = [
    "CORRELATIONS",
    "REGRET_STUDY_DESIGNS",
    "ERROR_METRICS",
    "LOWER_IS_BETTER",
    "MIN_RELIABILITY",
    "CorrelationEstimate",
    "RegretStudy",
    "accuracy_pair",
    "bo5",
    "bt_calibration_error",
    "chatterjee_xi",
    "correlate_across",
    "goodhart_accuracy",
    "goodhart_from_accuracy",
    "goodhart_ndr",
    "goodhart_overoptimization",
    "kendall_tau_b",
    "mean_reciprocal_rank",
    "ndcg",
    "ndr",
    "ndr_curve",
    "pearson_correlation",
    "permutation_p_values",
    "regret_correlation",
    "spearman_correlation",
    "xi_correlation",
]
