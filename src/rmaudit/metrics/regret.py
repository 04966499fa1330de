"""Does a cheap metric predict policy regret?  "Rethinking Reward Model Evaluation" (seed 002).

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

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import rankdata

from rmaudit.errors import MetricInputError
from rmaudit.metrics._positional import stack_by_size
from rmaudit.metrics._results import CurveResult, MetricResult
from rmaudit.metrics._validation import (check_choice, check_fraction, check_integer,
                                         check_integers, check_pools, check_subset_size)
from rmaudit.metrics.best_of_n import best_of_n, best_of_n_curve
from rmaudit.metrics.pairwise import pairwise_accuracy
from rmaudit.metrics.preference import bt_ece

ArrayLike = Sequence[float] | np.ndarray
Pools = list[np.ndarray]

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
#: Correlation statistics of Table 1 / Table 4, with their column labels.
CORRELATIONS: dict[str, str] = {
    "kendall": "Kendall τ",
    "pearson": "Pearson",
    "spearman": "Spearman",
    "mrr": "MRR",
}

# Pair comparisons are vectorised over (prompts × N × N); this caps one batch at about 16 MB.
_PAIR_BATCH_ELEMENTS = 1 << 21


# ---------------------------------------------------------------------------------------------
# Input checks


def _check_gold_proxy(gold: Sequence[ArrayLike], proxy: Sequence[ArrayLike]) -> tuple[Pools, Pools]:
    """Pools as float arrays; every prompt must hold >= 2 responses and a non-constant gold."""
    gold_pools, proxy_pools = check_pools(gold, proxy)
    for q, pool in enumerate(gold_pools):
        if np.all(pool == pool[0]):
            raise MetricInputError(
                f"prompt {q}: expected at least two different gold scores (a constant gold "
                f"ranks nothing), got all {pool.size} equal to {pool[0]:g}",
                field="gold", prompt_index=q)
    return gold_pools, proxy_pools


def _by_size(gold_pools: Pools, proxy_pools: Pools,
             rows: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Apply a row-wise (prompts × N) implementation to prompts grouped by pool size."""
    per_prompt = np.empty(len(gold_pools))
    for size, prompts, gold, proxy in stack_by_size(gold_pools, proxy_pools):
        batch = max(1, _PAIR_BATCH_ELEMENTS // (size * size))
        for start in range(0, prompts.size, batch):
            chunk = slice(start, start + batch)
            per_prompt[prompts[chunk]] = rows(gold[chunk], proxy[chunk])
    return per_prompt


def _mean_metric(rows, gold, proxy, ci, bootstrap, seed) -> MetricResult:
    gold_pools, proxy_pools = _check_gold_proxy(gold, proxy)
    per_prompt = _by_size(gold_pools, proxy_pools, rows)
    return MetricResult.from_per_prompt(per_prompt, ci=ci, bootstrap=bootstrap, seed=seed)


# ---------------------------------------------------------------------------------------------
# Row-wise implementations: gold and proxy are (prompts × N) arrays, the result is (prompts,).


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    spread = np.sqrt((xc * xc).sum(axis=-1) * (yc * yc).sum(axis=-1))
    covariance = (xc * yc).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        # a zero spread means a constant row: no association, 0 by this module's convention
        return np.where(spread > 0, covariance / np.where(spread > 0, spread, 1.0), 0.0)


def _spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _pearson_rows(rankdata(x, axis=-1), rankdata(y, axis=-1))


def _pair_signs(values: np.ndarray) -> np.ndarray:
    return np.sign(values[..., :, None] - values[..., None, :])


def _kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    sx, sy = _pair_signs(x), _pair_signs(y)
    # Over ordered pairs every unordered pair counts twice, in numerator and denominator alike.
    concordance = (sx * sy).sum(axis=(-2, -1))
    untied = np.sqrt(np.abs(sx).sum(axis=(-2, -1)) * np.abs(sy).sum(axis=(-2, -1)))
    return np.where(untied > 0, concordance / np.where(untied > 0, untied, 1.0), 0.0)


def _xi_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Chatterjee's ξ(x → y) per row, the expectation over a random order of tied x."""
    size = x.shape[-1]
    # r_i = #{j: y_j <= y_i} and l_i = #{j: y_j >= y_i} (Chatterjee 2020, Sec. 1.2).
    r = rankdata(y, axis=-1, method="max")
    l = size - rankdata(y, axis=-1, method="min") + 1
    group = rankdata(x, axis=-1, method="dense")  # tie groups of x, numbered in x order
    group_size = (group[..., :, None] == group[..., None, :]).sum(axis=-1)
    same = group[..., :, None] == group[..., None, :]
    following = group[..., None, :] == group[..., :, None] + 1
    # Sorting by x with ties in random order, adjacent positions inside a tie group of m hold
    # a random ordered pair of it (m - 1 such positions: weight 1/m on each ordered pair), and
    # the boundary between consecutive groups holds one random member of each (1/(m m')).
    weight = (same / group_size[..., :, None]
              + following / (group_size[..., :, None] * group_size[..., None, :]))
    jumps = (weight * np.abs(r[..., :, None] - r[..., None, :])).sum(axis=(-2, -1))
    spread = 2.0 * (l * (size - l)).sum(axis=-1)
    # a constant y gives spread 0: ξ is undefined there, 0 by this module's convention
    return np.where(spread > 0, 1.0 - size * jumps / np.where(spread > 0, spread, 1.0), 0.0)


def _harmonic(upto: int) -> np.ndarray:
    """H(0..upto): H(k) = Σ_{i<=k} 1/i."""
    return np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, upto + 1))])


def _top_mask(proxy: np.ndarray) -> np.ndarray:
    """The proxy's top response(s) per row, each weighted 1/(number tied at the top)."""
    top = proxy == proxy.max(axis=-1, keepdims=True)
    return top / top.sum(axis=-1, keepdims=True)


def _reciprocal_gold_rank(gold: np.ndarray) -> np.ndarray:
    """E[1 / R*(i)] with R* the gold rank (1 = best) and gold ties in random order."""
    above = (gold[..., None, :] > gold[..., :, None]).sum(axis=-1)
    tied = (gold[..., None, :] == gold[..., :, None]).sum(axis=-1)
    harmonic = _harmonic(gold.shape[-1])
    return (harmonic[above + tied] - harmonic[above]) / tied


def _mrr_rows(gold: np.ndarray, proxy: np.ndarray) -> np.ndarray:
    return (_top_mask(proxy) * _reciprocal_gold_rank(gold)).sum(axis=-1)


def _ndcg_rows(gold: np.ndarray, proxy: np.ndarray) -> np.ndarray:
    size = gold.shape[-1]
    relevance = rankdata(gold, axis=-1) - 1.0  # golden rank, 1 = worst, minus 1
    discount = 1.0 / np.log2(np.arange(1, size + 1) + 1.0)  # position 1 = the top
    cumulative = np.concatenate([[0.0], np.cumsum(discount)])
    ahead = (proxy[..., None, :] > proxy[..., :, None]).sum(axis=-1)
    tied = (proxy[..., None, :] == proxy[..., :, None]).sum(axis=-1)
    # a proxy tie group at positions ahead+1..ahead+tied: each member's expected discount
    expected_discount = (cumulative[ahead + tied] - cumulative[ahead]) / tied
    ideal = (np.sort(relevance, axis=-1)[..., ::-1] * discount).sum(axis=-1)
    return (relevance * expected_discount).sum(axis=-1) / ideal


def _bo5_rows(gold: np.ndarray, proxy: np.ndarray) -> np.ndarray:
    mean = gold.mean(axis=-1)
    picked = (_top_mask(proxy) * gold).sum(axis=-1)
    return (picked - mean) / (gold.max(axis=-1) - mean)


# ---------------------------------------------------------------------------------------------
# Public per-prompt error metrics (App. 8.3)


def pearson_correlation(gold: Sequence[ArrayLike], proxy: Sequence[ArrayLike], *,
                        ci: float = 0.95, bootstrap: int = 1000, seed: int = 0) -> MetricResult:
    """Mean over prompts of Pearson's correlation of proxy and gold scores (App. 8.3, Eq. 7-8).

    Per prompt: ``ρ = cov(r(Y), r*(Y)) / (σ_r(Y) σ_r*(Y))`` over its responses Y.  "The final
    metric is the average of the coefficient of each prompt."  Needs absolute scores (the
    seed marks it *).  A proxy constant on a prompt scores 0 there.

    >>> gold = [np.array([1.0, 2.0, 4.0])]
    >>> round(pearson_correlation(gold, [np.array([0.0, 1.0, 3.0])]).value, 6)
    1.0
    """
    return _mean_metric(_pearson_rows, gold, proxy, ci, bootstrap, seed)


def spearman_correlation(gold: Sequence[ArrayLike], proxy: Sequence[ArrayLike], *,
                         ci: float = 0.95, bootstrap: int = 1000,
                         seed: int = 0) -> MetricResult:
    """Mean over prompts of Spearman's rank correlation (App. 8.3, Eq. 9).

    "The same formula as the Pearson correlation coefficient, only with the reward scores
    replaced by the ranks": ``s = cov(R(Y), R*(Y)) / (σ_R(Y) σ_R*(Y))``, ties sharing their
    average rank (as :func:`scipy.stats.spearmanr`).

    >>> gold = [np.array([1.0, 2.0, 4.0])]
    >>> round(spearman_correlation(gold, [np.array([0.0, 5.0, 3.0])]).value, 6)
    0.5
    """
    return _mean_metric(_spearman_rows, gold, proxy, ci, bootstrap, seed)


def kendall_tau_b(gold: Sequence[ArrayLike], proxy: Sequence[ArrayLike], *, ci: float = 0.95,
                  bootstrap: int = 1000, seed: int = 0) -> MetricResult:
    """Mean over prompts of Kendall's τ-b between proxy and gold (App. 8.3, Eq. 10).

    Eq. 10 is ``τ = (n_c − n_d) / (N(N−1)/2)`` over concordant and discordant pairs; "in
    practice, we employ τ_B which handles the ties":
    ``τ_b = (n_c − n_d) / sqrt((n_0 − n_1)(n_0 − n_2))`` with n_0 = N(N−1)/2 and n_1, n_2 the
    pairs tied in gold and in proxy (as :func:`scipy.stats.kendalltau`, ``variant="b"``).

    >>> gold = [np.array([1.0, 2.0, 3.0])]
    >>> round(kendall_tau_b(gold, [np.array([1.0, 3.0, 2.0])]).value, 6)   # (2 - 1) / 3
    0.333333
    """
    return _mean_metric(_kendall_rows, gold, proxy, ci, bootstrap, seed)


def chatterjee_xi(x: ArrayLike, y: ArrayLike) -> float:
    """Chatterjee's ξ_n(x, y): how much y is a function of x (Chatterjee 2020; seed 002 Eq. 15).

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


def xi_correlation(gold: Sequence[ArrayLike], proxy: Sequence[ArrayLike], *, ci: float = 0.95,
                   bootstrap: int = 1000, seed: int = 0) -> MetricResult:
    """Mean over prompts of :func:`chatterjee_xi` (gold → proxy) (App. 8.3, "ξ corr.", Eq. 15).

    >>> gold = [np.array([1.0, 2.0, 3.0, 4.0])]
    >>> round(xi_correlation(gold, gold).value, 6)
    0.4
    """
    return _mean_metric(_xi_rows, gold, proxy, ci, bootstrap, seed)


def mean_reciprocal_rank(gold: Sequence[ArrayLike], proxy: Sequence[ArrayLike], *,
                         ci: float = 0.95, bootstrap: int = 1000,
                         seed: int = 0) -> MetricResult:
    """MRR: the reciprocal *golden* rank of the proxy's top response, averaged (App. 8.3, Eq. 13).

    Per prompt ``1 / R*[argmax_i r(y_i)]`` with R* the rank by gold score, 1 = the gold's best.
    As the seed's footnote 7 stresses, this is *not* the proxy rank of the gold's best
    response.  Ties are in random order: a proxy tie at the top averages over the tied
    responses, and a response tied with m others in gold behind a responses has
    ``E[1/R*] = (1/m) Σ_{k=a+1}^{a+m} 1/k``.

    >>> gold = [np.array([3.0, 1.0, 2.0])]
    >>> round(mean_reciprocal_rank(gold, [np.array([0.0, 1.0, 5.0])]).value, 6)   # rank 2
    0.5
    """
    return _mean_metric(_mrr_rows, gold, proxy, ci, bootstrap, seed)


def ndcg(gold: Sequence[ArrayLike], proxy: Sequence[ArrayLike], *, ci: float = 0.95,
         bootstrap: int = 1000, seed: int = 0) -> MetricResult:
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
    """
    return _mean_metric(_ndcg_rows, gold, proxy, ci, bootstrap, seed)


def bo5(gold: Sequence[ArrayLike], proxy: Sequence[ArrayLike], *, ci: float = 0.95,
        bootstrap: int = 1000, seed: int = 0) -> MetricResult:
    """Bo5: how much of the best possible gain over a random response the proxy's pick gets
    (App. 8.3, Eq. 11), averaged over prompts.

    Per prompt ``(r*(argmax_i r(y_i)) − μ_r*(Y)) / (max r*(Y) − μ_r*(Y))`` over the prompt's
    whole pool — "a special case of NDR for N = 5" computed per prompt: the seed's pools held 5
    responses, so on pools of N it is best-of-N.  Proxy ties at the top average their gold
    scores.  Needs absolute gold scores (*).

    >>> gold = [np.array([1.0, 2.0, 6.0])]
    >>> round(bo5(gold, [np.array([0.0, 1.0, 0.5])]).value, 6)   # (2 − 3) / (6 − 3)
    -0.333333
    """
    return _mean_metric(_bo5_rows, gold, proxy, ci, bootstrap, seed)


def _gold_ordered_pairs(gold_pools: Pools, proxy_pools: Pools) -> tuple[np.ndarray, ...]:
    """Every within-prompt pair the gold orders: proxy scores of (gold-better, gold-worse) and
    the prompt each pair comes from."""
    chosen, rejected, prompt = [], [], []
    for q, (g, p) in enumerate(zip(gold_pools, proxy_pools)):
        better, worse = np.nonzero(g[:, None] > g[None, :])
        chosen.append(p[better])
        rejected.append(p[worse])
        prompt.append(np.full(better.size, q))
    return np.concatenate(chosen), np.concatenate(rejected), np.concatenate(prompt)


def bt_calibration_error(gold: Sequence[ArrayLike], proxy: Sequence[ArrayLike], *,
                         n_bins: int = 10) -> float:
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


def _ece_bin_stats(gold_pools: Pools, proxy_pools: Pools, n_bins: int) -> np.ndarray:
    """Per-prompt (count, Σ conf, Σ credit) per margin bin, shape (Q, 3, n_bins); bin edges are
    those of the full sample, so a bootstrap replicate re-weights prompts with fixed bins."""
    chosen, rejected, prompt = _gold_ordered_pairs(gold_pools, proxy_pools)
    edges = bt_ece(chosen, rejected, n_bins=n_bins, binning="quantile", ties="half").bin_edges
    margin = np.abs(chosen - rejected)
    bins = np.searchsorted(edges[1:-1], margin, side="left")  # as bt_ece bins them
    credit = np.where(chosen > rejected, 1.0, np.where(chosen == rejected, 0.5, 0.0))
    cell = prompt * n_bins + bins
    size = len(gold_pools) * n_bins
    stats = [np.bincount(cell, weights=w, minlength=size)
             for w in (np.ones_like(margin), 1.0 / (1.0 + np.exp(-margin)), credit)]
    return np.stack(stats, axis=1).reshape(len(gold_pools), n_bins, 3).transpose(0, 2, 1)


def _accuracy_pair_rows(seed: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Accuracy on one random gold-ordered pair per prompt (Table 4's "Accuracy-pair").

    The pair is drawn uniformly among the gold-ordered pairs as (gold level u, gold level v)
    with probability ∝ m_u m_v, m the number of responses at a level, and the credit is the
    mean over the responses at those levels — the expectation over which tied response the
    draw names.  The generator is keyed on ``seed`` and the prompt's sorted gold scores, so
    every proxy is judged on the same pair and the order of responses does not matter.
    """

    def rows(gold: np.ndarray, proxy: np.ndarray) -> np.ndarray:
        out = np.empty(gold.shape[0])
        for q in range(gold.shape[0]):
            levels, level_of = np.unique(gold[q], return_inverse=True)
            counts = np.bincount(level_of)
            upper, lower = np.nonzero(np.tril(np.outer(counts, counts), k=-1))
            weight = counts[upper] * counts[lower]
            key = np.frombuffer(np.sort(gold[q]).tobytes(), np.uint32)
            k = np.random.default_rng([seed, *key]).choice(weight.size, p=weight / weight.sum())
            better, worse = proxy[q, level_of == upper[k]], proxy[q, level_of == lower[k]]
            credit = (better[:, None] > worse[None, :]) + 0.5 * (better[:, None] == worse[None, :])
            out[q] = credit.mean()
        return out

    return rows


# ---------------------------------------------------------------------------------------------
# Policy regret: the normalised drop ratio (Sec. 2, Eq. 2)


def _check_ndr_n(n: int, gold_pools: Pools) -> int:
    n = check_integer(n, "n", minimum=2)  # n = 1 is π0 itself: the ratio would be 0/0
    check_subset_size(n, [pool.size for pool in gold_pools])
    return n


def _ndr_gains(gold_pools: Pools, proxy_pools: Pools, ns: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per-prompt gains over π0 of the proxy's and the gold's best-of-n picks, (len(ns), Q)."""
    random_pick = best_of_n(gold_pools, gold_pools, 1, bootstrap=1).per_prompt
    proxy_pick = best_of_n_curve(gold_pools, proxy_pools, ns, bootstrap=1).per_prompt
    gold_pick = best_of_n_curve(gold_pools, gold_pools, ns, bootstrap=1).per_prompt
    return proxy_pick - random_pick, gold_pick - random_pick


def _bootstrap_counts(n_prompts: int, bootstrap: int, seed: int) -> np.ndarray:
    """(bootstrap × Q) counts of each prompt in each resample (prompts drawn with replacement),
    drawn as :class:`MetricResult` draws them, so the same seed resamples the same prompts."""
    draws = np.random.default_rng(seed).integers(0, n_prompts, size=(bootstrap, n_prompts))
    offsets = n_prompts * np.arange(bootstrap)[:, None]
    counts = np.bincount((draws + offsets).ravel(), minlength=bootstrap * n_prompts)
    return counts.reshape(bootstrap, n_prompts).astype(float)


def _interval(draws: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Standard deviation and percentile interval of bootstrap draws along the last axis."""
    tail = 100.0 * (1.0 - ci) / 2.0
    low, high = np.nanpercentile(draws, [tail, 100.0 - tail], axis=-1)
    return np.nanstd(draws, axis=-1, ddof=1), low, high


def ndr_curve(gold: Sequence[ArrayLike], proxy: Sequence[ArrayLike], ns: Sequence[int], *,
              ci: float = 0.95, bootstrap: int = 1000, seed: int = 0) -> CurveResult:
    """:func:`ndr` at each n in ``ns`` (x = n; plot against :func:`rmaudit.metrics.bon_kl` for
    the KL axis, as the seed's Fig. 9 does).

    >>> gold = [np.array([1.0, 2.0, 3.0, 4.0])]
    >>> ndr_curve(gold, [np.array([4.0, 3.0, 2.0, 1.0])], [2, 4]).value.round(4).tolist()
    [-1.0, -1.0]
    """
    gold_pools, proxy_pools = _check_gold_proxy(gold, proxy)
    sizes = check_integers(ns, "ns", minimum=2)
    for size in sizes:
        check_subset_size(int(size), [pool.size for pool in gold_pools], field="ns")
    check_fraction(ci, "ci")
    bootstrap = check_integer(bootstrap, "bootstrap", minimum=1)
    proxy_gain, gold_gain = _ndr_gains(gold_pools, proxy_pools, sizes)
    value = proxy_gain.sum(axis=1) / gold_gain.sum(axis=1)
    counts = _bootstrap_counts(len(gold_pools), bootstrap, check_integer(seed, "seed", minimum=0))
    draws = (proxy_gain @ counts.T) / (gold_gain @ counts.T)
    stderr, low, high = _interval(draws, ci)
    # Per-prompt contributions: each prompt's gain over the mean gold gain, whose mean over
    # prompts is exactly the ratio of prompt-averaged expectations.
    contributions = proxy_gain / gold_gain.mean(axis=1, keepdims=True)
    return CurveResult(sizes, value, stderr, low, high, contributions)


def ndr(gold: Sequence[ArrayLike], proxy: Sequence[ArrayLike], n: int, *, ci: float = 0.95,
        bootstrap: int = 1000, seed: int = 0) -> MetricResult:
    """Normalised drop ratio of best-of-n sampling: the seed's estimate of policy regret (Eq. 2).

        NDR = (E_π[r*] − E_π0[r*]) / (E_π*[r*] − E_π0[r*])

    with π0 a random response of the pool (best-of-1), π the proxy's best-of-n pick and π* the
    gold's best-of-n pick, every expectation averaged over prompts before the ratio is taken
    (a ratio of prompt-averaged expectations, not a mean of per-prompt ratios).  Each
    expectation is the exact unbiased best-of-n estimator over all size-n subsets of the pool
    (:func:`rmaudit.metrics.best_of_n`, proxy ties broken at random).  1 = as good as
    optimising the gold itself, 0 = no better than a random response, < 0 = worse.  NDR is
    the *complement* of regret: higher is better.

    ``stderr`` and the CI come from a percentile bootstrap of the ratio over prompts (seeded);
    ``per_prompt`` holds each prompt's gain over π0 divided by the mean gold gain, whose mean
    is the value.

    >>> gold = [np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 1.0, 4.0, 3.0])]
    >>> round(ndr(gold, gold, 2).value, 6)
    1.0
    >>> round(ndr(gold, [np.array([1.0, 2.0, 4.0, 3.0]), np.array([2.0, 1.0, 4.0, 3.0])], 4).value, 6)   # (0.5 + 1.5) / (1.5 + 1.5)
    0.666667
    """
    gold_pools, _ = _check_gold_proxy(gold, proxy)
    n = _check_ndr_n(n, gold_pools)
    return ndr_curve(gold, proxy, [n], ci=ci, bootstrap=bootstrap, seed=seed).point(0)


# ---------------------------------------------------------------------------------------------
# The Regressional Goodhart normal model (Sec. 5, App. 8.4)


def _check_sigmas(sigma_r, sigma) -> tuple[np.ndarray, np.ndarray]:
    values = []
    for name, value in (("sigma_r", sigma_r), ("sigma", sigma)):
        array = np.asarray(value, dtype=float) if not isinstance(value, bool) else None
        if array is None or not np.all(np.isfinite(array)):
            raise MetricInputError(f"expected finite standard deviations, got {value!r}",
                                   field=name)
        values.append(array)
    if np.any(values[0] <= 0):
        raise MetricInputError(f"expected sigma_r > 0, got {sigma_r!r}", field="sigma_r")
    if np.any(values[1] < 0):
        raise MetricInputError(f"expected sigma >= 0, got {sigma!r}", field="sigma")
    return values[0], values[1]


def _scalar_or_array(value: np.ndarray) -> float | np.ndarray:
    return float(value) if value.ndim == 0 else value


def goodhart_accuracy(sigma_r: float | np.ndarray, sigma: float | np.ndarray) -> float | np.ndarray:
    """Pairwise accuracy under the Regressional Goodhart normal model, in closed form.

    Model (Sec. 5, App. 8.4): gold r* ~ N(0, σ_r²) i.i.d. over responses and proxy
    r = r* + z, z ~ N(0, σ²) independent.  For a random pair, D* = r*_1 − r*_2 ~ N(0, 2σ_r²)
    and D = D* + (z_1 − z_2) are jointly normal with correlation
    ρ = 2σ_r² / sqrt(2σ_r² · 2(σ_r² + σ²)) = σ_r / sqrt(σ_r² + σ²), and by Sheppard's formula
    P(D and D* have the same sign) = 1/2 + arcsin(ρ)/π:

        accuracy = 1/2 + arcsin(σ_r / sqrt(σ_r² + σ²)) / π.

    This is the seed's Eq. 18 integral, ``1 − ∫_0^∞ (σ_r√π)^-1 e^{−x²/4σ_r²} Φ(−x/(√2 σ)) dx``,
    which the seed evaluated numerically.  Arrays broadcast.

    >>> goodhart_accuracy(1.0, 0.0), round(goodhart_accuracy(1.0, 1.0), 6)   # 1/2 + 1/4
    (1.0, 0.75)
    """
    s_r, s = _check_sigmas(sigma_r, sigma)
    return _scalar_or_array(0.5 + np.arcsin(s_r / np.sqrt(s_r**2 + s**2)) / np.pi)


def goodhart_overoptimization(sigma_r: float | np.ndarray,
                              sigma: float | np.ndarray) -> float | np.ndarray:
    """The seed's expected degree of overoptimization, ``d_π = σ_r² / (σ_r² + σ²)`` (Eq. 6, 20).

    From Eq. 19 (Gao et al.): E[r* | r = c] = c · σ_r² / (σ_r² + σ²), the fraction of a proxy
    gain that is real.  With :func:`goodhart_accuracy` it gives the seed's Fig. 8(a) curve in
    closed form: d_π = sin²(π (accuracy − 1/2)) (:func:`goodhart_from_accuracy`).

    >>> goodhart_overoptimization(1.0, 1.0)
    0.5
    """
    s_r, s = _check_sigmas(sigma_r, sigma)
    return _scalar_or_array(s_r**2 / (s_r**2 + s**2))


def goodhart_ndr(sigma_r: float | np.ndarray, sigma: float | np.ndarray) -> float | np.ndarray:
    """Expected best-of-n NDR under the same normal model: σ_r / sqrt(σ_r² + σ²), for every n.

    The proxy's best-of-n pick has E[r] = e_n sqrt(σ_r² + σ²) (e_n the mean of the largest of
    n standard normals), so by Eq. 19 E[r*] = e_n σ_r² / sqrt(σ_r² + σ²); the gold's own pick
    has E[r*] = e_n σ_r and π0 has 0.  The ratio is σ_r / sqrt(σ_r² + σ²) = sqrt(d_π): under
    Regressional Goodhart alone the NDR does not depend on n (no overoptimization peak).

    >>> round(goodhart_ndr(3.0, 4.0), 6)
    0.6
    """
    s_r, s = _check_sigmas(sigma_r, sigma)
    return _scalar_or_array(s_r / np.sqrt(s_r**2 + s**2))


def goodhart_from_accuracy(accuracy: float | np.ndarray) -> dict[str, float | np.ndarray]:
    """What the normal model predicts for an RM of a given pairwise accuracy (seed Fig. 8a).

    Inverting :func:`goodhart_accuracy`: ρ = sin(π (accuracy − 1/2)), so the expected NDR is
    ρ and the degree of overoptimization d_π = ρ².  Overlay observed (accuracy, NDR) points
    of real RMs on this curve to see which deviate from pure Regressional Goodhart (Fig. 8b).

    >>> {k: round(float(v), 6) for k, v in goodhart_from_accuracy(0.75).items()}
    {'ndr': 0.707107, 'overoptimization': 0.5}
    """
    values = np.asarray(accuracy, dtype=float)
    if not np.all((values >= 0.5) & (values <= 1.0)):
        raise MetricInputError(f"expected accuracies in [0.5, 1] (the model's range), got "
                               f"{accuracy!r}", field="accuracy")
    rho = np.sin(np.pi * (values - 0.5))
    return {"ndr": _scalar_or_array(rho), "overoptimization": _scalar_or_array(rho**2)}


# ---------------------------------------------------------------------------------------------
# Correlation across proxies (Table 1 / Table 4)


def _correlations(metric: np.ndarray, regret: np.ndarray) -> dict[str, np.ndarray]:
    """Kendall τ-b, Pearson, Spearman and best-by-metric MRR along the last axis (proxies)."""
    ranks_by_regret = _reciprocal_gold_rank(regret)  # E[1 / rank of each proxy by NDR]
    return {
        "kendall": _kendall_rows(metric, regret),
        "pearson": _pearson_rows(metric, regret),
        "spearman": _spearman_rows(metric, regret),
        "mrr": (_top_mask(metric) * ranks_by_regret).sum(axis=-1),
    }


@dataclass(frozen=True)
class CorrelationEstimate:
    """One cell of Table 1 / Table 4: the mean over golds, with a bootstrap CI over prompts."""

    value: float
    stderr: float
    ci_low: float
    ci_high: float
    per_gold: dict[str, float]


@dataclass(frozen=True)
class RegretStudy:
    """The N×N study: every gold-proxy pair's error metrics and NDR, and their correlations.

    ``error[m]`` and ``ndr`` are (gold × RM) matrices over ``golds`` and ``rms`` (NaN where
    the RM is the gold); ``correlation[(statistic, metric)]`` is a :class:`CorrelationEstimate`.
    """

    rms: tuple[str, ...]
    golds: tuple[str, ...]
    metrics: tuple[str, ...]
    n: int
    error: dict[str, np.ndarray]
    ndr: np.ndarray
    correlation: dict[tuple[str, str], CorrelationEstimate] = field(default_factory=dict)


def _check_study_pools(pools_by_rm: Mapping[str, Sequence[ArrayLike]],
                       golds: Sequence[str] | None) -> tuple[dict[str, Pools], tuple[str, ...]]:
    if not isinstance(pools_by_rm, Mapping):
        raise MetricInputError(f"expected a mapping of RM label to per-prompt scores, got "
                               f"{type(pools_by_rm).__name__}", field="scores")
    if len(pools_by_rm) < 3:
        raise MetricInputError(
            f"expected at least 3 reward models (each gold needs >= 2 proxies to correlate "
            f"across), got {len(pools_by_rm)}", field="scores")
    labels = list(pools_by_rm)
    first = labels[0]
    checked: dict[str, Pools] = {}
    for label in labels:
        try:
            reference, pools = check_pools(pools_by_rm[first], pools_by_rm[label])
        except MetricInputError as error:
            raise MetricInputError(f"RM {label!r} and RM {first!r} must score the same pools; "
                                   f"{error.problem}", field="scores",
                                   prompt_index=error.prompt_index) from None
        checked[label] = pools
    gold_labels = tuple(labels) if golds is None else tuple(golds)
    unknown = [g for g in gold_labels if g not in checked]
    if unknown or not gold_labels:
        raise MetricInputError(f"expected gold labels among {labels}, got {list(gold_labels)}",
                               field="golds")
    for gold in gold_labels:
        try:
            _check_gold_proxy(checked[gold], checked[gold])
        except MetricInputError as error:
            raise MetricInputError(f"RM {gold!r} as gold: {error.problem}", field="gold",
                                   prompt_index=error.prompt_index) from None
    return checked, gold_labels


def regret_correlation(pools_by_rm: Mapping[str, Sequence[ArrayLike]], *,
                       metrics: Sequence[str] = tuple(ERROR_METRICS), n: int | None = None,
                       golds: Sequence[str] | None = None, n_bins: int = 10,
                       ci: float = 0.95, bootstrap: int = 200, seed: int = 0) -> RegretStudy:
    """The N×N regret-correlation study (Sec. 2 Fig. 2b; Table 1 and Table 4).

    ``pools_by_rm`` maps each RM label to its per-prompt scores of the same pools.  Every RM
    in ``golds`` (default: all) in turn is the gold and every other RM a proxy.  For each
    (gold, proxy) pair: each error metric of ``metrics`` (keys of :data:`ERROR_METRICS`) and
    the regret :func:`ndr` at best-of-``n`` (default: the smallest pool size, i.e. the proxy's
    best response of the whole pool).  For each gold, the correlation across its proxies of
    each metric with NDR — Kendall τ-b, Pearson, Spearman, and MRR: the reciprocal NDR rank of
    the proxy the metric ranks best (the seed's footnote 2) — is averaged over golds.
    Lower-is-better metrics (ECE) are negated first, so a positive correlation always means
    "better by the metric, less regret".  NDR is higher-is-better, so correlating with it is
    correlating with −regret, the sign the seed reports.

    Uncertainty: ``bootstrap`` replicates redraw the prompts with replacement (seeded); each
    replicate recomputes every metric, NDR and correlation from the redrawn prompts (the ECE
    keeps the full sample's margin bins), and the CI is the percentile interval of the mean
    over golds.  Metrics are computed per prompt then averaged — with the same pools as the
    regret, as when the RM test set is sampled from the policy being optimised (Table 2's
    starred row).

    >>> rng = np.random.default_rng(0)
    >>> gold = rng.normal(size=(40, 8))
    >>> pools = {f"σ={s}": list(gold + s * rng.normal(size=gold.shape)) for s in (0, 1, 2, 4)}
    >>> study = regret_correlation(pools, metrics=["accuracy"], n=4, bootstrap=20)
    >>> round(study.correlation[("spearman", "accuracy")].value, 3)
    0.875
    """
    pools, gold_labels = _check_study_pools(pools_by_rm, golds)
    metrics = tuple(check_choice(m, tuple(ERROR_METRICS), "metrics") for m in metrics)
    if not metrics:
        raise MetricInputError("expected at least one error metric, got none", field="metrics")
    check_fraction(ci, "ci")
    bootstrap = check_integer(bootstrap, "bootstrap", minimum=2)
    seed = check_integer(seed, "seed", minimum=0)
    n_bins = check_integer(n_bins, "n_bins", minimum=1)
    rms = tuple(pools)
    smallest = min(pool.size for pool in pools[rms[0]])
    n = _check_ndr_n(smallest if n is None else n, pools[rms[0]])
    n_prompts = len(pools[rms[0]])
    # Row 0 weighs every prompt once (the point estimate); rows 1.. are bootstrap replicates.
    weights = np.vstack([np.ones(n_prompts), _bootstrap_counts(n_prompts, bootstrap, seed)])

    shape = (len(gold_labels), len(rms), weights.shape[0])
    error = {m: np.full(shape, np.nan) for m in metrics}
    regret = np.full(shape, np.nan)
    for g, gold_label in enumerate(gold_labels):
        gold = pools[gold_label]
        for p, label in enumerate(rms):
            if label == gold_label:
                continue
            proxy_gain, gold_gain = _ndr_gains(gold, pools[label], np.array([n]))
            regret[g, p] = (weights @ proxy_gain[0]) / (weights @ gold_gain[0])
            for metric in metrics:
                error[metric][g, p] = _weighted_metric(metric, gold, pools[label], weights,
                                                       n_bins=n_bins, seed=seed)

    others = ~np.eye(len(rms), dtype=bool)[[rms.index(g) for g in gold_labels]]
    regret_by_gold = np.stack([regret[g][others[g]] for g in range(len(gold_labels))])
    correlation = {}
    for metric in metrics:
        sign = -1.0 if metric in LOWER_IS_BETTER else 1.0
        by_gold = np.stack([sign * error[metric][g][others[g]] for g in range(len(gold_labels))])
        # (golds × proxies × replicates) → correlate along proxies, replicates first
        stats = _correlations(np.moveaxis(by_gold, -1, 0), np.moveaxis(regret_by_gold, -1, 0))
        for statistic, values in stats.items():  # values: (replicates × golds)
            mean_over_golds = values.mean(axis=1)
            stderr, low, high = _interval(mean_over_golds[1:], ci)
            correlation[(statistic, metric)] = CorrelationEstimate(
                float(mean_over_golds[0]), float(stderr), float(low), float(high),
                dict(zip(gold_labels, values[0].tolist())))
    return RegretStudy(rms, gold_labels, metrics, n, {m: e[..., 0] for m, e in error.items()},
                       regret[..., 0], correlation)


def _weighted_metric(metric: str, gold: Pools, proxy: Pools, weights: np.ndarray, *,
                     n_bins: int, seed: int) -> np.ndarray:
    """An error metric under each row of prompt weights (row 0: the plain estimate)."""
    if metric == "ece":
        stats = _ece_bin_stats(gold, proxy, n_bins)  # (Q, 3, bins)
        count, conf, credit = np.einsum("rq,qkb->krb", weights, stats)
        return np.abs(conf - credit).sum(axis=-1) / count.sum(axis=-1)
    rows = {
        "accuracy": lambda g, p: pairwise_accuracy(g, p, bootstrap=1).per_prompt,
        "pearson": lambda g, p: _by_size(g, p, _pearson_rows),
        "spearman": lambda g, p: _by_size(g, p, _spearman_rows),
        "kendall": lambda g, p: _by_size(g, p, _kendall_rows),
        "xi": lambda g, p: _by_size(g, p, _xi_rows),
        "mrr": lambda g, p: _by_size(g, p, _mrr_rows),
        "ndcg": lambda g, p: _by_size(g, p, _ndcg_rows),
        "bo5": lambda g, p: _by_size(g, p, _bo5_rows),
        "accuracy_pair": lambda g, p: _by_size(g, p, _accuracy_pair_rows(seed)),
    }[metric]
    per_prompt = rows(gold, proxy)
    return weights @ per_prompt / weights.sum(axis=1)


def accuracy_pair(gold: Sequence[ArrayLike], proxy: Sequence[ArrayLike], *, seed: int = 0,
                  ci: float = 0.95, bootstrap: int = 1000) -> MetricResult:
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


def correlate_across(x: ArrayLike, y: ArrayLike) -> dict[str, float]:
    """Kendall τ-b, Pearson and Spearman of two equal-length vectors (e.g. across RMs), with
    this module's convention that a constant vector correlates 0.

    >>> {k: round(v, 4) for k, v in correlate_across([1, 2, 3, 4], [1, 3, 2, 4]).items()}
    {'kendall': 0.6667, 'pearson': 0.8, 'spearman': 0.8}
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.ndim != 1 or a.shape != b.shape or a.size < 3:
        raise MetricInputError(f"expected two 1-D vectors of the same length >= 3, got shapes "
                               f"{a.shape} and {b.shape}", field="x")
    return {"kendall": float(_kendall_rows(a, b)), "pearson": float(_pearson_rows(a, b)),
            "spearman": float(_spearman_rows(a, b))}


def permutation_p_values(x: ArrayLike, y: ArrayLike, *, resamples: int = 20000,
                         seed: int = 0) -> dict[str, float]:
    """Two-sided permutation p-values of :func:`correlate_across`'s three statistics.

    Under H0 (no association) every pairing of x with a permutation of y is equally likely;
    p = P(|stat(perm)| ≥ |stat(observed)|).  Exact — all n! permutations enumerated — for
    n ≤ 8 (40,320 pairings); otherwise ``resamples`` random permutations (seeded) and
    p = (1 + #{as extreme}) / (1 + resamples).  Distribution-free: no normality assumed.

    >>> round(permutation_p_values([1, 2, 3, 4], [1, 2, 3, 4])["spearman"], 4)   # 2 of 24
    0.0833
    """
    observed = correlate_across(x, y)
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    size = a.size
    exact = size <= 8
    if exact:
        from itertools import permutations

        order = np.array(list(permutations(range(size))))
    else:
        resamples = check_integer(resamples, "resamples", minimum=1)
        rng = np.random.default_rng(seed)
        order = np.argsort(rng.random((resamples, size)), axis=1)
    permuted = b[order]
    tiled = np.broadcast_to(a, permuted.shape)
    null = {"kendall": _kendall_rows(tiled, permuted), "pearson": _pearson_rows(tiled, permuted),
            "spearman": _spearman_rows(tiled, permuted)}
    p_values = {}
    for name, stat in observed.items():
        # a relative tolerance keeps permutations that tie the observed value (up to rounding)
        extreme = np.count_nonzero(np.abs(null[name]) >= abs(stat) - 1e-12 * max(1.0, abs(stat)))
        p_values[name] = float(extreme / len(order) if exact
                               else (1 + extreme) / (1 + len(order)))
    return p_values
