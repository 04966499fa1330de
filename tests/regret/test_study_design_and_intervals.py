"""The regret study's held-out designs, its gold screening and its intervals: they cover a
known truth (a fast version of benchmarks/coverage.py) and always hold their estimate."""

from __future__ import annotations

import numpy as np
import pytest

from rmaudit.errors import MetricInputError
from rmaudit.metrics import (
    goodhart_accuracy,
    goodhart_ndr,
    ndr,
    pairwise_accuracy,
    regret_correlation,
)
from rmaudit.metrics.regret import REGRET_STUDY_DESIGNS
from rmaudit.metrics.regret._study_inputs import split_pools

SIGMAS = np.array([0.3, 0.6, 1.0, 1.5, 2.5, 4.0])


def oracle_family(rng, prompts, responses, sigmas=SIGMAS):
    gold = rng.normal(size=(prompts, responses))
    return {
        "oracle": list(gold),
        **{f"σ={s}": list(gold + s * rng.normal(size=gold.shape)) for s in sigmas},
    }


def test_intervals_cover_the_population_correlation():
    """Gold r* ~ N(0, 1), proxies r* + σ z: accuracy and NDR have closed forms (Sec. 5), so
    the truth of Pearson(accuracy, NDR) across the proxies is known exactly.  At 20 prompts
    the estimate is attenuated (about 0.87 for a truth of 0.99); the percentile bootstrap
    covered the truth in 1 % of 100 such data sets, the bias-corrected interval in 94 %."""
    truth = np.corrcoef(goodhart_accuracy(1.0, SIGMAS), goodhart_ndr(1.0, SIGMAS))[0, 1]
    held = []
    for dataset in range(60):
        pools = oracle_family(np.random.default_rng([5, dataset]), 20, 8)
        cell = regret_correlation(
            pools, metrics=["accuracy"], golds=["oracle"], bootstrap=100, seed=dataset
        ).correlation[("pearson", "accuracy")]
        held.append(cell.ci_low <= truth <= cell.ci_high)
    assert np.mean(held) >= 0.85


@pytest.mark.parametrize("design", REGRET_STUDY_DESIGNS)
def test_every_point_estimate_lies_inside_its_interval(design):
    for dataset in range(4):
        rng = np.random.default_rng([6, dataset])
        pools = oracle_family(rng, 12, 6, sigmas=[0.2, 0.5, 1.0, 3.0])
        pools["rounded"] = [np.round(p, 0) for p in pools["σ=0.5"]]  # ties, constant halves
        study = regret_correlation(pools, design=design, bootstrap=30, seed=dataset)
        for cell, estimate in study.correlation.items():
            assert estimate.ci_low <= estimate.value <= estimate.ci_high, (design, cell, estimate)
            assert np.isfinite(estimate.stderr)


def test_held_out_responses_measure_metrics_and_regret_on_disjoint_halves():
    rng = np.random.default_rng(1)
    pools = {
        label: [np.asarray(p) for p in values]
        for label, values in oracle_family(rng, 30, 9, sigmas=[0.5, 1.0]).items()
    }
    split = split_pools(pools, "held-out-responses")
    for q, pool in enumerate(pools["oracle"]):
        metric, regret = split.metric["oracle"][q], split.regret["oracle"][q]
        assert (metric.size, regret.size) == (4, 5)
        assert sorted([*metric, *regret]) == sorted(pool)  # disjoint, and nothing is lost
    study = regret_correlation(pools, metrics=["accuracy"], golds=["oracle"], bootstrap=10)
    assert study.design == "held-out-responses" and study.n == 5
    for p, label in enumerate(study.rms[1:], start=1):
        assert study.ndr[0, p] == pytest.approx(
            ndr(split.regret["oracle"], split.regret[label], 5).value
        )
        assert study.error["accuracy"][0, p] == pytest.approx(
            pairwise_accuracy(split.metric["oracle"], split.metric[label]).value
        )
    again = regret_correlation(pools, metrics=["accuracy"], golds=["oracle"], bootstrap=10, seed=7)
    np.testing.assert_array_equal(again.ndr, study.ndr)  # the split does not move with seed


def test_held_out_prompts_use_disjoint_prompts():
    pools = oracle_family(np.random.default_rng(2), 21, 4, sigmas=[0.5, 1.0])
    split = split_pools(pools, "held-out-prompts")
    assert len(split.metric_prompts) == 10 and len(split.regret_prompts) == 11
    assert set(split.metric_prompts).isdisjoint(split.regret_prompts)
    study = regret_correlation(
        pools, metrics=["accuracy"], golds=["oracle"], design="held-out-prompts", bootstrap=10
    )
    gold = [pools["oracle"][q] for q in split.regret_prompts]
    proxy = [pools["σ=1.0"][q] for q in split.regret_prompts]
    assert study.ndr[0, 2] == pytest.approx(ndr(gold, proxy, 4).value)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"design": "held-out"}, "expected 'held-out-responses' or"),
        ({"n": 5}, r"got n=5 \(design 'held-out-responses' measures the regret on half"),
        ({"min_reliability": 1.0}, r"expected a reliability in \[0, 1\)"),
    ],
)
def test_bad_design_settings_are_clear_errors(kwargs, message):
    pools = oracle_family(np.random.default_rng(3), 10, 8, sigmas=[0.5, 1.0])
    with pytest.raises(MetricInputError, match=message):
        regret_correlation(pools, bootstrap=5, **kwargs)


def test_held_out_responses_need_four_responses_per_prompt():
    pools = oracle_family(np.random.default_rng(3), 10, 3, sigmas=[0.5, 1.0])
    with pytest.raises(MetricInputError, match="expected at least 4 responses to split"):
        regret_correlation(pools, bootstrap=5)
    assert regret_correlation(pools, design="shared", bootstrap=5).n == 3


def test_a_gold_whose_proxies_are_indistinguishable_is_left_out_and_named():
    rng = np.random.default_rng(4)
    gold = rng.normal(size=(60, 8))
    pools = {
        "good": list(gold),
        "σ=0.5": list(gold + 0.5 * rng.normal(size=gold.shape)),
        "σ=1": list(gold + rng.normal(size=gold.shape)),
        "noise": list(gold + 30 * rng.normal(size=gold.shape)),
    }
    study = regret_correlation(pools, metrics=["accuracy"], bootstrap=100)
    assert study.reliability["good"] > 0.8 > study.reliability["noise"]
    assert "noise" in study.screened and "good" in study.averaged
    cell = study.correlation[("pearson", "accuracy")]
    averaged = [cell.per_gold[g] for g in study.averaged]
    assert cell.value == pytest.approx(np.mean(averaged))
    everyone = regret_correlation(pools, metrics=["accuracy"], min_reliability=0, bootstrap=100)
    assert everyone.averaged == everyone.golds and everyone.screened == ()
    assert everyone.correlation[("pearson", "accuracy")].value == pytest.approx(
        np.mean(list(cell.per_gold.values()))
    )


def test_kendall_and_accuracy_rows_agree_exactly_without_ties_only():
    pools = oracle_family(np.random.default_rng(5), 30, 8, sigmas=[0.5, 1.0, 2.0])
    study = regret_correlation(pools, metrics=["kendall", "accuracy"], bootstrap=10)
    assert study.kendall_equals_accuracy
    tied = {label: [np.round(p) for p in pool] for label, pool in pools.items()}
    tied_study = regret_correlation(
        tied, metrics=["kendall", "accuracy"], design="shared", bootstrap=10
    )
    assert not tied_study.kendall_equals_accuracy


@pytest.mark.parametrize("design", REGRET_STUDY_DESIGNS)
def test_prompts_where_a_gold_ranks_nothing_are_left_out_for_that_gold_and_counted(design):
    pools = oracle_family(np.random.default_rng(8), 40, 8, sigmas=[0.5, 1.0, 2.0])
    coarse = [np.where(np.arange(8) < 6, 0.0, 1.0) for _ in range(40)]  # two levels only
    coarse[0] = np.zeros(8)  # ranks nothing on prompt 0 whatever the design
    pools["coarse"] = coarse
    study = regret_correlation(pools, metrics=["accuracy", "bo5"], design=design, bootstrap=20)
    assert study.skipped["coarse"] >= 1 and "oracle" not in study.skipped
    assert np.isfinite(study.ndr[study.golds.index("coarse")][:-1]).all()
    # the oracle's study is the one it would be without the coarse gold's troubles
    alone = regret_correlation(
        {k: v for k, v in pools.items()},
        metrics=["accuracy", "bo5"],
        golds=["oracle"],
        design=design,
        bootstrap=20,
    )
    np.testing.assert_allclose(alone.ndr[0], study.ndr[0])


@pytest.mark.parametrize("design", REGRET_STUDY_DESIGNS)
def test_the_study_treats_a_prompts_responses_as_a_set(design):
    rng = np.random.default_rng(9)
    pools = oracle_family(rng, 16, 8, sigmas=[0.5, 1.0, 2.0])
    shuffles = [rng.permutation(8) for _ in range(16)]
    shuffled = {
        label: [p[s] for p, s in zip(pool, shuffles, strict=True)] for label, pool in pools.items()
    }
    one = regret_correlation(pools, design=design, bootstrap=20)
    other = regret_correlation(shuffled, design=design, bootstrap=20)
    np.testing.assert_allclose(one.ndr, other.ndr)
    for cell, estimate in one.correlation.items():
        assert other.correlation[cell].value == pytest.approx(estimate.value), cell
