"""Per-prompt building blocks of the regret study: input checks and row-wise implementations.

Every ``*_rows`` function takes gold and proxy scores as (prompts × N) arrays and returns one
value per row (prompt); :func:`_by_size` applies one to pools grouped by size.  The public
metrics (:mod:`.error_metrics`) and the study (:mod:`.study`) share them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from rmaudit.metrics._positional import stack_by_size
from rmaudit.metrics._results import MetricResult
from rmaudit.metrics._validation import check_ordered_pools
from rmaudit.metrics.preference import bt_ece

ArrayLike = Sequence[float] | np.ndarray
Pools = list[np.ndarray]

# Pair comparisons are vectorised over (prompts × N × N); this caps one batch at about 16 MB.
_PAIR_BATCH_ELEMENTS = 1 << 21


# ---------------------------------------------------------------------------------------------
# Input checks


def _check_gold_proxy(gold: Sequence[ArrayLike], proxy: Sequence[ArrayLike]) -> tuple[Pools, Pools]:
    """Pools as float arrays; every prompt must hold >= 2 responses and a non-constant gold
    (a constant gold ranks nothing)."""
    return check_ordered_pools(gold, proxy, name="gold")


def _by_size(
    gold_pools: Pools, proxy_pools: Pools, rows: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> np.ndarray:
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


def rankdata(values: np.ndarray, axis: int = -1, method: str = "average") -> np.ndarray:
    """``scipy.stats.rankdata``, imported on first use: scipy.stats takes about a second to
    import, which a run that computes no regret metric should not pay."""
    from scipy.stats import rankdata as scipy_rankdata

    return scipy_rankdata(values, axis=axis, method=method)


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
    l_rank = size - rankdata(y, axis=-1, method="min") + 1
    group = rankdata(x, axis=-1, method="dense")  # tie groups of x, numbered in x order
    group_size = (group[..., :, None] == group[..., None, :]).sum(axis=-1)
    same = group[..., :, None] == group[..., None, :]
    following = group[..., None, :] == group[..., :, None] + 1
    # Sorting by x with ties in random order, adjacent positions inside a tie group of m hold
    # a random ordered pair of it (m - 1 such positions: weight 1/m on each ordered pair), and
    # the boundary between consecutive groups holds one random member of each (1/(m m')).
    weight = same / group_size[..., :, None] + following / (
        group_size[..., :, None] * group_size[..., None, :]
    )
    jumps = (weight * np.abs(r[..., :, None] - r[..., None, :])).sum(axis=(-2, -1))
    spread = 2.0 * (l_rank * (size - l_rank)).sum(axis=-1)
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
# Pair-based helpers: Bradley-Terry calibration bins and Table 4's accuracy-pair


def _gold_ordered_pairs(gold_pools: Pools, proxy_pools: Pools) -> tuple[np.ndarray, ...]:
    """Every within-prompt pair the gold orders: proxy scores of (gold-better, gold-worse) and
    the prompt each pair comes from."""
    chosen, rejected, prompt = [], [], []
    for q, (g, p) in enumerate(zip(gold_pools, proxy_pools, strict=True)):
        better, worse = np.nonzero(g[:, None] > g[None, :])
        chosen.append(p[better])
        rejected.append(p[worse])
        prompt.append(np.full(better.size, q))
    return np.concatenate(chosen), np.concatenate(rejected), np.concatenate(prompt)


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
    stats = [
        np.bincount(cell, weights=w, minlength=size)
        for w in (np.ones_like(margin), 1.0 / (1.0 + np.exp(-margin)), credit)
    ]
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
            upper, lower = _pair_levels(seed, np.sort(gold[q]).tobytes())
            better, worse = proxy[q, gold[q] == upper], proxy[q, gold[q] == lower]
            credit = (better[:, None] > worse[None, :]) + 0.5 * (better[:, None] == worse[None, :])
            out[q] = credit.mean()
        return out

    return rows


@lru_cache(maxsize=1 << 16)
def _pair_levels(seed: int, sorted_gold: bytes) -> tuple[float, float]:
    """The (better, worse) gold levels of the prompt's drawn pair; cached, as every proxy of a
    gold is judged on the same pair."""
    levels, counts = np.unique(np.frombuffer(sorted_gold), return_counts=True)
    upper, lower = np.nonzero(np.tril(np.outer(counts, counts), k=-1))
    weight = counts[upper] * counts[lower]
    key = np.frombuffer(sorted_gold, np.uint32)
    k = np.random.default_rng([seed, *key]).choice(weight.size, p=weight / weight.sum())
    return float(levels[upper[k]]), float(levels[lower[k]])
