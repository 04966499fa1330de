"""Each per-prompt error metric of Rethinking RM Evaluation, arXiv 2410.05584, App. 8.3 against an
independent computation: scipy where it exists, otherwise the definition applied by brute force,
enumerating every tie-break
order so that the expectation over random tie-breaks is exact too."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from rmaudit.errors import MetricInputError
from rmaudit.metrics import (
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


def pools_with_ties(seed: int, prompts: int = 6, size: int = 5):
    """Small integer-valued pools, so that gold and proxy ties are common."""
    rng = np.random.default_rng(seed)
    gold, proxy = [], []
    for _ in range(prompts):
        g = rng.integers(0, 4, size=size).astype(float)
        if np.all(g == g[0]):
            g[0] += 1.0  # a constant gold is an error, tested separately
        gold.append(g)
        proxy.append(rng.integers(0, 3, size=size).astype(float))
    return gold, proxy


def tie_break_orders(size: int):
    """Every strict priority order: averaging over them is the expectation over random ties."""
    return [np.array(p) for p in itertools.permutations(range(size))]


@pytest.mark.parametrize("seed", range(4))
def test_pearson_spearman_kendall_equal_scipy(seed):
    rng = np.random.default_rng(seed)
    gold = [rng.normal(size=7) for _ in range(5)] + pools_with_ties(seed)[0]
    proxy = [g + rng.normal(size=g.size) for g in gold[:5]] + pools_with_ties(seed + 10)[1]
    proxy = [np.round(p, 0) if i % 2 else p for i, p in enumerate(proxy)]  # ties in proxy too
    expected = {"pearson": [], "spearman": [], "kendall": []}
    for g, p in zip(gold, proxy, strict=True):
        constant = np.all(p == p[0])  # the module's convention: 0, where scipy says NaN
        expected["pearson"].append(0.0 if constant else stats.pearsonr(g, p).statistic)
        expected["spearman"].append(0.0 if constant else stats.spearmanr(g, p).statistic)
        expected["kendall"].append(
            0.0 if constant else stats.kendalltau(g, p, variant="b").statistic
        )
    got = {
        "pearson": pearson_correlation(gold, proxy),
        "spearman": spearman_correlation(gold, proxy),
        "kendall": kendall_tau_b(gold, proxy),
    }
    for name, result in got.items():
        np.testing.assert_allclose(result.per_prompt, expected[name], atol=1e-12, err_msg=name)
        assert result.value == pytest.approx(np.mean(expected[name]))


def xi_by_definition(x, y, order):
    """Chatterjee (2020) Sec. 1.2, with the pairs arranged in ``order`` (x non-decreasing)."""
    n = len(x)
    ys = np.asarray(y)[order]
    r = np.array([np.sum(ys <= v) for v in ys])
    at_least = np.array([np.sum(ys >= v) for v in ys])
    denominator = 2 * np.sum(at_least * (n - at_least))
    if denominator == 0:
        return 0.0
    return 1 - n * np.sum(np.abs(np.diff(r))) / denominator


def xi_expected_over_ties(x, y):
    x = np.asarray(x)
    orders = [o for o in tie_break_orders(len(x)) if np.all(np.diff(x[o]) >= 0)]
    return np.mean([xi_by_definition(x, y, o) for o in orders])


def test_chatterjee_xi_equals_scipy_without_ties():
    rng = np.random.default_rng(3)
    for _ in range(10):
        x, y = rng.normal(size=9), rng.normal(size=9)
        assert chatterjee_xi(x, y) == pytest.approx(stats.chatterjeexi(x, y).statistic, abs=1e-12)


def test_chatterjee_xi_no_ties_is_the_seeds_eq15():
    x, y = [0.1, 0.5, 0.3, 0.9, 0.7], [2.0, 1.0, 5.0, 3.0, 4.0]
    order = np.argsort(x)
    ranks = stats.rankdata(y)[order]
    n = len(x)
    assert chatterjee_xi(x, y) == pytest.approx(1 - 3 * np.abs(np.diff(ranks)).sum() / (n * n - 1))


@pytest.mark.parametrize("seed", range(5))
def test_chatterjee_xi_with_ties_is_the_expectation_over_random_tie_breaks(seed):
    gold, proxy = pools_with_ties(seed, prompts=4, size=6)
    for g, p in zip(gold, proxy, strict=True):
        assert chatterjee_xi(g, p) == pytest.approx(xi_expected_over_ties(g, p), abs=1e-12)
    assert xi_correlation(gold, proxy).value == pytest.approx(
        np.mean([xi_expected_over_ties(g, p) for g, p in zip(gold, proxy, strict=True)])
    )


def mrr_by_enumeration(gold, proxy):
    """E[1 / golden rank of the proxy's top response] over independent random tie-breaks."""
    size = len(gold)
    values = []
    for proxy_priority in tie_break_orders(size):
        top = max(range(size), key=lambda i: (proxy[i], proxy_priority[i]))
        for gold_priority in tie_break_orders(size):
            rank = 1 + sum(
                (gold[j], gold_priority[j]) > (gold[top], gold_priority[top]) for j in range(size)
            )
            values.append(1.0 / rank)
    return np.mean(values)


def ndcg_by_enumeration(gold, proxy):
    """Eq. 14 with relevance = golden rank − 1 (average ranks), discount log2(position + 1)."""
    size = len(gold)
    relevance = stats.rankdata(gold) - 1
    ideal = sum(rel / math.log2(k + 2) for k, rel in enumerate(sorted(relevance, reverse=True)))
    values = []
    for priority in tie_break_orders(size):
        order = sorted(range(size), key=lambda i: (proxy[i], priority[i]), reverse=True)
        values.append(sum(relevance[i] / math.log2(k + 2) for k, i in enumerate(order)) / ideal)
    return np.mean(values)


def bo5_by_enumeration(gold, proxy):
    size = len(gold)
    mean, best = np.mean(gold), np.max(gold)
    picks = [
        gold[max(range(size), key=lambda i: (proxy[i], priority[i]))]
        for priority in tie_break_orders(size)
    ]
    return (np.mean(picks) - mean) / (best - mean)


@pytest.mark.parametrize("seed", range(3))
def test_mrr_ndcg_bo5_equal_brute_force_definitions(seed):
    gold, proxy = pools_with_ties(seed, prompts=4, size=5)
    cases = [
        (mean_reciprocal_rank, mrr_by_enumeration),
        (ndcg, ndcg_by_enumeration),
        (bo5, bo5_by_enumeration),
    ]
    for metric, brute in cases:
        expected = [brute(g, p) for g, p in zip(gold, proxy, strict=True)]
        np.testing.assert_allclose(
            metric(gold, proxy).per_prompt, expected, atol=1e-12, err_msg=metric.__name__
        )


def test_mrr_is_the_golden_rank_of_the_proxys_top_not_the_reverse():
    gold = [np.array([5.0, 4.0, 3.0, 2.0])]
    proxy = [np.array([0.0, 0.0, 0.0, 1.0])]  # proxy's top is the gold's worst (rank 4) ...
    assert mean_reciprocal_rank(gold, proxy).value == pytest.approx(0.25)
    # ... whereas the gold's best sits at proxy rank 2-4 (expected 1/3 · (1/2 + 1/3 + 1/4))


def bt_ece_by_definition(gold, proxy, n_bins):
    """Eq. 12 over every gold-ordered pair, pooled; quantile margin bins, right-closed."""
    margin, conf, correct = [], [], []
    for g, p in zip(gold, proxy, strict=True):
        for i, j in itertools.permutations(range(len(g)), 2):
            if g[i] > g[j]:
                delta = p[i] - p[j]
                margin.append(abs(delta))
                conf.append(1 / (1 + math.exp(-abs(delta))))
                correct.append(1.0 if delta > 0 else 0.5 if delta == 0 else 0.0)
    edges = np.quantile(margin, np.linspace(0, 1, n_bins + 1))
    total = 0.0
    for m in range(n_bins):
        members = [
            k
            for k, d in enumerate(margin)
            if (d <= edges[m + 1] or m == n_bins - 1) and (m == 0 or d > edges[m])
        ]
        if members:
            total += abs(sum(conf[k] for k in members) - sum(correct[k] for k in members))
    return total / len(margin)


@pytest.mark.parametrize("n_bins", [1, 3, 10])
def test_bt_calibration_error_equals_eq12(n_bins):
    rng = np.random.default_rng(n_bins)
    gold = [rng.normal(size=6) for _ in range(5)]
    proxy = [np.round(g + rng.normal(size=6), 1) for g in gold]
    assert bt_calibration_error(gold, proxy, n_bins=n_bins) == pytest.approx(
        bt_ece_by_definition(gold, proxy, n_bins), abs=1e-12
    )


def test_perfect_proxy_scores_perfectly_on_every_rank_metric():
    rng = np.random.default_rng(0)
    gold = [rng.normal(size=8) for _ in range(4)]
    proxy = [2 * g + 1 for g in gold]  # a monotone transform
    for metric in (spearman_correlation, kendall_tau_b, mean_reciprocal_rank, ndcg, bo5):
        assert metric(gold, proxy).value == pytest.approx(1.0), metric.__name__


def test_constant_proxy_counts_as_no_association():
    gold = [np.array([1.0, 2.0, 3.0])]
    proxy = [np.array([4.0, 4.0, 4.0])]
    for metric in (pearson_correlation, spearman_correlation, kendall_tau_b, xi_correlation):
        assert metric(gold, proxy).value == 0.0, metric.__name__
    assert bo5(gold, proxy).value == pytest.approx(0.0)  # a random pick: no gain


@pytest.mark.parametrize(
    "metric", [pearson_correlation, kendall_tau_b, ndcg, bo5, mean_reciprocal_rank]
)
def test_constant_gold_is_a_clear_error(metric):
    with pytest.raises(
        MetricInputError,
        match=r"prompt 1: expected at least two different "
        r"gold scores.*got all 3 equal to 2",
    ):
        metric(
            [np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0])],
            [np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0])],
        )


def test_mismatched_pools_are_a_clear_error():
    with pytest.raises(
        MetricInputError,
        match=r"prompt 0: expected as many RM scores as "
        r"oracle scores \(3\), got 2",
    ):
        ndcg([np.array([1.0, 2.0, 3.0])], [np.array([1.0, 2.0])])
