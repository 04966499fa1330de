"""The RM error metrics of "Rethinking Reward Model Evaluation" App. 8.3 (Table 4's rows).

Each compares a proxy's scores with the gold's on the same pools, per prompt, then averages
over prompts (the BT-calibration ECE pools every pair instead).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rmaudit.metrics._results import MetricResult
from rmaudit.metrics._validation import check_integer, check_pools
from rmaudit.metrics.preference import bt_ece
from rmaudit.metrics.regret._rows import (
    ArrayLike,
    _accuracy_pair_rows,
    _bo5_rows,
    _check_gold_proxy,
    _gold_ordered_pairs,
    _kendall_rows,
    _mean_metric,
    _mrr_rows,
    _ndcg_rows,
    _pearson_rows,
    _spearman_rows,
    _xi_rows,
)

#: The error metrics of Table 4, in its row order, with their display labels.
ERROR_METRICS: dict[str, str] = {
    "pearson": "Pearson corr.",
    "spearman": "Spearman corr.",
    "kendall": "Kendall τ corr.",
    "accuracy": "accuracy",
    "bo5": "Bo5",
    "ece": "BT-calibration ECE",
    "mrr": "MRR",
    "ndcg": "NDCG",
    "xi": "ξ corr.",
    "accuracy_pair": "accuracy-pair",
}
#: Error metrics where lower is better; the study negates them so that every metric is
#: correlated with regret in its "better RM" direction.
LOWER_IS_BETTER = frozenset({"ece"})


class MeanOverPrompts:
    """The error metric ``name``, computed per prompt (by ``rows``: prompts × N → per prompt)
    and averaged over prompts, with its bootstrap CI across them; ``doc`` says what it is."""

    def __init__(
        self, name: str, rows: Callable[[np.ndarray, np.ndarray], np.ndarray], doc: str
    ) -> None:
        self.__name__, self.rows, self.__doc__ = name, rows, doc

    def __call__(
        self,
        gold: Sequence[ArrayLike],
        proxy: Sequence[ArrayLike],
        *,
        ci: float = 0.95,
        bootstrap: int = 1000,
        seed: int = 0,
    ) -> MetricResult:
        return _mean_metric(self.rows, gold, proxy, ci, bootstrap, seed)


pearson_correlation = MeanOverPrompts(
    "pearson_correlation",
    _pearson_rows,
    """Mean over prompts of Pearson's correlation of proxy and gold scores (App. 8.3, Eq. 7-8).

    Per prompt: ``ρ = cov(r(Y), r*(Y)) / (σ_r(Y) σ_r*(Y))`` over its responses Y.  "The final
    metric is the average of the coefficient of each prompt."  Needs absolute scores (the
    seed marks it *).  A proxy constant on a prompt scores 0 there.

    >>> gold = [np.array([1.0, 2.0, 4.0])]
    >>> round(pearson_correlation(gold, [np.array([0.0, 1.0, 3.0])]).value, 6)
    1.0
    """,
)


spearman_correlation = MeanOverPrompts(
    "spearman_correlation",
    _spearman_rows,
    """Mean over prompts of Spearman's rank correlation (App. 8.3, Eq. 9).

    "The same formula as the Pearson correlation coefficient, only with the reward scores
    replaced by the ranks": ``s = cov(R(Y), R*(Y)) / (σ_R(Y) σ_R*(Y))``, ties sharing their
    average rank (as :func:`scipy.stats.spearmanr`).

    >>> gold = [np.array([1.0, 2.0, 4.0])]
    >>> round(spearman_correlation(gold, [np.array([0.0, 5.0, 3.0])]).value, 6)
    0.5
    """,
)


kendall_tau_b = MeanOverPrompts(
    "kendall_tau_b",
    _kendall_rows,
    """Mean over prompts of Kendall's τ-b between proxy and gold (App. 8.3, Eq. 10).

    Eq. 10 is ``τ = (n_c − n_d) / (N(N−1)/2)`` over concordant and discordant pairs; "in
    practice, we employ τ_B which handles the ties":
    ``τ_b = (n_c − n_d) / sqrt((n_0 − n_1)(n_0 − n_2))`` with n_0 = N(N−1)/2 and n_1, n_2 the
    pairs tied in gold and in proxy (as :func:`scipy.stats.kendalltau`, ``variant="b"``).

    >>> gold = [np.array([1.0, 2.0, 3.0])]
    >>> round(kendall_tau_b(gold, [np.array([1.0, 3.0, 2.0])]).value, 6)   # (2 - 1) / 3
    0.333333
    """,
)


def chatterjee_xi(x: ArrayLike, y: ArrayLike) -> float:
    """Chatterjee's ξ_n(x, y): how much y is a function of x (Chatterjee 2020; Rethinking RM
    Evaluation, arXiv 2410.05584, Eq. 15).

    Sort the pairs by x; with r_i = #{j: y_j ≤ y_(i)} and l_i = #{j: y_j ≥ y_(i)},

        ξ = 1 − n Σ_{i<n} |r_{i+1} − r_i| / (2 Σ_i l_i (n − l_i)),

    which is the seed's ``1 − 3 Σ |R_(i+1) − R_(i)| / (n² − 1)`` when y has no ties.  Chatterjee
    breaks ties in x uniformly at random; this returns the exact expectation over that
    tie-break (so it is deterministic).  A constant y gives 0 (ξ is undefined there).  In the
    seed x is the gold score and y the proxy's.

    >>> round(chatterjee_xi([1, 2, 3, 4], [1, 2, 3, 4]), 6)    # 1 − 3·3/15
    0.4
    >>> round(chatterjee_xi([1, 2, 3, 4], [2, 4, 1, 3]), 6)
    -0.4
    """
    pools = check_pools([x], [y])
    return float(_xi_rows(pools[0][0][None, :], pools[1][0][None, :])[0])


xi_correlation = MeanOverPrompts(
    "xi_correlation",
    _xi_rows,
    """Mean over prompts of :func:`chatterjee_xi` (gold → proxy) (App. 8.3, "ξ corr.", Eq. 15).

    >>> gold = [np.array([1.0, 2.0, 3.0, 4.0])]
    >>> round(xi_correlation(gold, gold).value, 6)
    0.4
    """,
)


mean_reciprocal_rank = MeanOverPrompts(
    "mean_reciprocal_rank",
    _mrr_rows,
    """MRR: the reciprocal *golden* rank of the proxy's top response, averaged (App. 8.3, Eq. 13).

    Per prompt ``1 / R*[argmax_i r(y_i)]`` with R* the rank by gold score, 1 = the gold's best.
    As the seed's footnote 7 stresses, this is *not* the proxy rank of the gold's best
    response.  Ties are in random order: a proxy tie at the top averages over the tied
    responses, and a response tied with m others in gold behind a responses has
    ``E[1/R*] = (1/m) Σ_{k=a+1}^{a+m} 1/k``.

    >>> gold = [np.array([3.0, 1.0, 2.0])]
    >>> round(mean_reciprocal_rank(gold, [np.array([0.0, 1.0, 5.0])]).value, 6)   # rank 2
    0.5
    """,
)


ndcg = MeanOverPrompts(
    "ndcg",
    _ndcg_rows,
    """NDCG with the golden rank as relevance, averaged over prompts (App. 8.3, Eq. 14).

    Per prompt, with R* the gold rank in ascending order (1 = worst, N = best; ties share the
    average rank) and p_i the position of response i in the proxy's order (1 = its top):

        NDCG = Σ_i (R*(y_i) − 1) / log2(p_i + 1)  /  Σ_i (R*(y_i) − 1) / log2(p*_i + 1)

    with p*_i the position in the gold's own order.  Eq. 14 writes the discount as
    ``log2(N − R(Y_i) + 1)``, which read with 1-based ascending ranks divides by log2(1) = 0
    at the top response; this uses the standard IR discount log2(position + 1), which is
    Eq. 14 with 0-based ranks in the discount.  Proxy ties: each tied response gets the mean
    discount of the positions its group occupies (the expectation over a random tie-break).

    >>> gold = [np.array([1.0, 2.0, 3.0])]
    >>> round(ndcg(gold, gold).value, 6), round(ndcg(gold, [np.array([3.0, 2.0, 1.0])]).value, 4)
    (1.0, 0.6199)
    """,
)


bo5 = MeanOverPrompts(
    "bo5",
    _bo5_rows,
    """Bo5: how much of the best possible gain over a random response the proxy's pick gets
    (App. 8.3, Eq. 11), averaged over prompts.

    Per prompt ``(r*(argmax_i r(y_i)) − μ_r*(Y)) / (max r*(Y) − μ_r*(Y))`` over the prompt's
    whole pool — "a special case of NDR for N = 5" computed per prompt: the seed's pools held 5
    responses, so on pools of N it is best-of-N.  Proxy ties at the top average their gold
    scores.  Needs absolute gold scores (*).

    >>> gold = [np.array([1.0, 2.0, 6.0])]
    >>> round(bo5(gold, [np.array([0.0, 1.0, 0.5])]).value, 6)   # (2 − 3) / (6 − 3)
    -0.333333
    """,
)


def bt_calibration_error(
    gold: Sequence[ArrayLike], proxy: Sequence[ArrayLike], *, n_bins: int = 10
) -> float:
    """Bradley-Terry calibration error of the proxy against the gold (App. 8.3, Eq. 12).

    ``ECE = Σ_m |B_m|/n · |acc(B_m) − conf(B_m)|`` over the pairs of "the same strategy … as in
    the Accuracy": every within-prompt pair the gold orders, pooled over prompts (bins of a
    handful of pairs per prompt would be meaningless).  Bins split pairs by the proxy's reward
    margin at its quantiles; conf is the Bradley-Terry probability σ(|Δ|) and acc the fraction
    ordered like the gold, a proxy tie counting ½ — :func:`rmaudit.metrics.bt_ece` with
    ``binning="quantile"``, ``ties="half"``.  Lower is better.  The margins are read as
    Bradley-Terry logits, so the value depends on the proxy's score scale.

    >>> gold = [np.array([1.0, 2.0, 3.0])]
    >>> round(bt_calibration_error(gold, [np.array([0.0, 1.0, 2.0])], n_bins=1), 4)
    0.219
    """
    gold_pools, proxy_pools = _check_gold_proxy(gold, proxy)
    chosen, rejected, _ = _gold_ordered_pairs(gold_pools, proxy_pools)
    return bt_ece(chosen, rejected, n_bins=n_bins, binning="quantile", ties="half").value


def accuracy_pair(
    gold: Sequence[ArrayLike],
    proxy: Sequence[ArrayLike],
    *,
    seed: int = 0,
    ci: float = 0.95,
    bootstrap: int = 1000,
) -> MetricResult:
    """Accuracy on a single random gold-ordered pair per prompt: Table 4's "Accuracy-pair"
    baseline (the usual two-responses-per-prompt test set cut from the same pools).

    Each prompt's pair is drawn uniformly among its gold-ordered pairs by a generator keyed on
    ``seed`` and the prompt's sorted gold scores, so every proxy is judged on the same pairs
    and the order of responses does not matter; when gold ties make the pair ambiguous, the
    credit is averaged over the tied responses.  A proxy tie counts ½.

    >>> gold = [np.array([1.0, 2.0])]
    >>> accuracy_pair(gold, [np.array([0.0, 1.0])]).value
    1.0
    """
    seed = check_integer(seed, "seed", minimum=0)
    return _mean_metric(_accuracy_pair_rows(seed), gold, proxy, ci, bootstrap, seed)
