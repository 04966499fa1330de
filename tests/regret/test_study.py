"""The N×N regret-correlation study (Rethinking RM Evaluation, arXiv 2410.05584, Sec. 2 Fig. 2b,
Table 1 / Table 4)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rmaudit.errors import MetricInputError
from rmaudit.metrics import (
    accuracy_pair,
    correlate_across,
    ndr,
    pairwise_accuracy,
    permutation_p_values,
    regret_correlation,
)
from rmaudit.metrics.regret import ERROR_METRICS


def noisy_family(sigmas, prompts=120, size=8, seed=0):
    rng = np.random.default_rng(seed)
    gold = rng.normal(size=(prompts, size))
    return {f"σ={s}": list(gold + s * rng.normal(size=gold.shape)) for s in sigmas}


@pytest.fixture(scope="module")
def family_study():
    """Shared pools: every metric and NDR is on the whole pool, checkable against the metric
    functions; the held-out designs are checked apart."""
    pools = noisy_family([0.1, 0.5, 1.0, 2.0, 4.0])
    return pools, regret_correlation(pools, n=4, design="shared", bootstrap=100, seed=1)


def test_pair_matrices_hold_each_gold_proxy_pair(family_study):
    pools, study = family_study
    labels = list(pools)
    assert study.rms == tuple(labels) and study.golds == tuple(labels)
    assert np.isnan(np.diag(study.ndr)).all()
    for g, gold in enumerate(labels):
        for p, proxy in enumerate(labels):
            if g != p:
                assert study.ndr[g, p] == pytest.approx(ndr(pools[gold], pools[proxy], 4).value)
                assert study.error["accuracy"][g, p] == pytest.approx(
                    pairwise_accuracy(pools[gold], pools[proxy]).value
                )


def test_correlations_are_scipys_across_proxies_averaged_over_golds(family_study):
    _, study = family_study
    for metric in ("accuracy", "ece", "xi"):
        sign = -1 if metric == "ece" else 1  # ECE is lower-is-better: negated
        per_gold = {"kendall": [], "pearson": [], "spearman": []}
        for g in range(len(study.golds)):
            proxies = [p for p in range(len(study.rms)) if p != g]
            x, y = sign * study.error[metric][g, proxies], study.ndr[g, proxies]
            per_gold["kendall"].append(stats.kendalltau(x, y).statistic)
            per_gold["pearson"].append(stats.pearsonr(x, y).statistic)
            per_gold["spearman"].append(stats.spearmanr(x, y).statistic)
        averaged = [study.golds.index(g) for g in study.averaged]
        for statistic, values in per_gold.items():
            cell = study.correlation[(statistic, metric)]
            assert cell.value == pytest.approx(np.mean(np.array(values)[averaged])), (
                statistic,
                metric,
            )
            assert list(cell.per_gold.values()) == pytest.approx(values)


def test_mrr_is_the_reciprocal_regret_rank_of_the_best_by_metric_proxy():
    pools = noisy_family([0.1, 0.5, 1.0, 2.0])
    study = regret_correlation(
        pools, metrics=["bo5"], n=4, design="shared", min_reliability=0, bootstrap=20
    )
    expected = []
    for g in range(4):
        proxies = [p for p in range(4) if p != g]
        best = proxies[int(np.argmax(study.error["bo5"][g, proxies]))]
        rank = 1 + sum(study.ndr[g, p] > study.ndr[g, best] for p in proxies)
        expected.append(1 / rank)
    assert study.correlation[("mrr", "bo5")].value == pytest.approx(np.mean(expected))


def test_noisier_proxies_have_more_regret_and_accuracy_type_metrics_predict_it(family_study):
    _, study = family_study
    for metric in ("accuracy", "kendall", "spearman", "pearson", "ndcg", "bo5"):
        cell = study.correlation[("spearman", metric)]
        assert cell.value > 0.7 and cell.ci_low > 0.4, (metric, cell)
        assert cell.ci_low <= cell.value <= cell.ci_high or cell.value == pytest.approx(1.0)


def test_bootstrap_is_seeded_and_covers_the_point_estimate(family_study):
    pools, study = family_study
    again = regret_correlation(pools, n=4, design="shared", bootstrap=100, seed=1)
    other = regret_correlation(pools, n=4, design="shared", bootstrap=100, seed=2)
    cell = ("pearson", "accuracy")
    assert again.correlation[cell] == study.correlation[cell]
    assert other.correlation[cell].ci_low != study.correlation[cell].ci_low
    assert other.correlation[cell].value == study.correlation[cell].value


def test_oracle_as_the_only_gold():
    pools = noisy_family([0.0, 0.5, 1.0, 2.0])  # σ=0.0 is the gold itself
    study = regret_correlation(pools, metrics=["accuracy"], golds=["σ=0.0"], n=4, bootstrap=20)
    assert study.golds == ("σ=0.0",) and study.ndr.shape == (1, 4)
    assert study.correlation[("spearman", "accuracy")].value == pytest.approx(1.0)


@pytest.mark.parametrize(
    "pools, message",
    [
        (
            lambda: dict(list(noisy_family([0.1, 1.0, 2.0]).items())[:2]),
            r"expected at least 3 reward models .*got 2",
        ),
        (
            lambda: {
                **noisy_family([0.1, 1.0]),
                "short": [p[:-1] for p in noisy_family([3.0])["σ=3.0"]],
            },
            r"RM 'short' and RM 'σ=0.1' must score the same pools; prompt 0: expected as many RM "
            r"scores as oracle scores \(8\), got 7",
        ),
        (
            lambda: {**noisy_family([0.1, 1.0]), "few": noisy_family([3.0], prompts=5)["σ=3.0"]},
            r"RM 'few' .* expected one score array per prompt \(120 prompts in oracle\), got 5",
        ),
        (
            lambda: {**noisy_family([0.1, 1.0]), "flat": [np.ones(8)] * 120},
            r"RM 'flat' as gold ranks nothing: its scores are all equal on every prompt",
        ),
    ],
)
def test_bad_study_input_is_a_clear_error(pools, message):
    with pytest.raises(MetricInputError, match=message):
        regret_correlation(pools(), n=4, bootstrap=10)


def test_unknown_metric_is_rejected():
    with pytest.raises(MetricInputError, match="expected 'pearson' or .*got 'accuracyy'"):
        regret_correlation(noisy_family([0.1, 1.0, 2.0]), metrics=["accuracyy"], bootstrap=10)


def test_every_table4_row_is_available():
    assert set(ERROR_METRICS) >= {
        "pearson",
        "spearman",
        "kendall",
        "accuracy",
        "bo5",
        "ece",
        "mrr",
        "ndcg",
        "xi",
        "accuracy_pair",
    }


def test_accuracy_pair_is_one_pair_per_prompt_and_order_free():
    rng = np.random.default_rng(0)
    gold = [rng.normal(size=6) for _ in range(50)]
    proxy = [g + rng.normal(size=6) for g in gold]
    result = accuracy_pair(gold, proxy, seed=3)
    assert set(result.per_prompt) <= {0.0, 1.0}  # no ties: one pair, right or wrong
    shuffles = [rng.permutation(6) for _ in gold]
    shuffled = accuracy_pair(
        [g[s] for g, s in zip(gold, shuffles, strict=True)],
        [p[s] for p, s in zip(proxy, shuffles, strict=True)],
        seed=3,
    )
    assert shuffled.per_prompt.tolist() == result.per_prompt.tolist()
    # over many draws of the pair it estimates the all-pairs accuracy
    draws = np.mean([accuracy_pair(gold, proxy, seed=s).value for s in range(200)])
    assert draws == pytest.approx(pairwise_accuracy(gold, proxy).value, abs=0.02)


def test_correlate_across_and_exact_permutation_p_values():
    x, y = [0.1, 0.4, 0.35, 0.8, 0.9], [1.0, 2.0, 3.0, 5.0, 4.0]
    got = correlate_across(x, y)
    assert got["kendall"] == pytest.approx(stats.kendalltau(x, y).statistic)
    assert got["pearson"] == pytest.approx(stats.pearsonr(x, y).statistic)
    assert got["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    p = permutation_p_values(x, y)
    exact = stats.permutation_test(
        (np.array(x),),
        lambda a: stats.pearsonr(a, y).statistic,
        permutation_type="pairings",
        n_resamples=np.inf,
    )
    assert p["pearson"] == pytest.approx(exact.pvalue)
    assert p["kendall"] == pytest.approx(stats.kendalltau(x, y, method="exact").pvalue)
