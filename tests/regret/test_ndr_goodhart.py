"""Best-of-n normalised drop ratio (Rethinking RM Evaluation, arXiv 2410.05584, Eq. 2) and the
Regressional Goodhart closed forms
(Sec. 5, App. 8.4), checked against enumeration, analytic limits and Monte Carlo."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from rmaudit.errors import MetricInputError
from rmaudit.metrics import (
    bon_kl,
    goodhart_accuracy,
    goodhart_from_accuracy,
    goodhart_ndr,
    goodhart_overoptimization,
    ndr,
    ndr_curve,
    pairwise_accuracy,
)


def normal_pools(prompts: int, size: int, seed: int):
    return list(np.random.default_rng(seed).normal(size=(prompts, size)))


def bon_by_enumeration(gold, proxy, n):
    """Mean gold score of the proxy's pick over every size-n subset and tie-break order."""
    picks = []
    for subset in itertools.combinations(range(len(gold)), n):
        top = max(proxy[i] for i in subset)
        tied = [gold[i] for i in subset if proxy[i] == top]
        picks.append(np.mean(tied))
    return np.mean(picks)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_ndr_is_the_ratio_of_prompt_averaged_gains(n):
    rng = np.random.default_rng(n)
    gold = [rng.integers(0, 5, size=5).astype(float) + [0, 0, 0, 0, 0.5] for _ in range(4)]
    proxy = [rng.integers(0, 3, size=5).astype(float) for _ in range(4)]
    proxy_gain = sum(
        bon_by_enumeration(g, p, n) - g.mean() for g, p in zip(gold, proxy, strict=True)
    )
    gold_gain = sum(bon_by_enumeration(g, g, n) - g.mean() for g in gold)
    result = ndr(gold, proxy, n)
    assert result.value == pytest.approx(proxy_gain / gold_gain)
    assert result.per_prompt.mean() == pytest.approx(result.value)


def test_identical_proxy_has_ndr_one_and_a_monotone_transform_too():
    gold = normal_pools(50, 8, 0)
    assert ndr(gold, gold, 4).value == pytest.approx(1.0)
    assert ndr(gold, [np.exp(g) for g in gold], 4).value == pytest.approx(1.0)


def test_independent_proxy_has_ndr_about_zero_within_its_ci():
    gold, proxy = normal_pools(400, 16, 1), normal_pools(400, 16, 2)
    result = ndr(gold, proxy, 8, seed=3)
    assert result.ci_low < 0.0 < result.ci_high
    assert abs(result.value) < 3 * result.stderr
    assert result.ci_high - result.ci_low < 0.2  # the interval is informative, not vacuous


def test_anti_correlated_proxy_has_negative_ndr():
    gold = normal_pools(100, 8, 4)
    result = ndr(gold, [-g for g in gold], 4)
    # worst-of-n mirrors best-of-n for symmetric (normal) pools: about −1
    assert result.value == pytest.approx(-1.0, abs=0.05)
    assert result.ci_high < 0


def test_ndr_curve_over_n_and_on_the_kl_axis():
    gold = normal_pools(200, 16, 5)
    proxy = [g + np.random.default_rng(6).normal(size=16) for g in gold]
    curve = ndr_curve(gold, proxy, [2, 4, 8, 16])
    assert curve.x.tolist() == [2, 4, 8, 16]
    for i, n in enumerate(curve.x):
        assert curve.value[i] == pytest.approx(ndr(gold, proxy, int(n)).value)
    assert bon_kl(curve.x).tolist() == pytest.approx([np.log(n) - (n - 1) / n for n in curve.x])


@pytest.mark.parametrize(
    "n, message",
    [
        (1, "expected an integer >= 2, got 1"),
        (
            9,
            r"prompt 0: expected n <= the prompt's number of "
            r"responses \(8\), got n=9",
        ),
    ],
)
def test_ndr_rejects_unusable_n(n, message):
    gold = normal_pools(3, 8, 0)
    with pytest.raises(MetricInputError, match=message):
        ndr(gold, gold, n)


def test_ndr_rejects_a_constant_gold():
    with pytest.raises(MetricInputError, match="expected at least two different gold scores"):
        ndr([np.ones(4)], [np.arange(4.0)], 2)


# --- the Regressional Goodhart normal model ------------------------------------------------


@pytest.mark.parametrize("sigma", [0.1, 0.5, 1.0, 2.0, 5.0])
def test_goodhart_accuracy_matches_monte_carlo_within_3_standard_errors(sigma):
    rng = np.random.default_rng(int(sigma * 100))
    draws, sigma_r = 200_000, 1.3
    gold = rng.normal(0, sigma_r, size=(draws, 2))  # two independent responses per pair
    proxy = gold + rng.normal(0, sigma, size=(draws, 2))
    agree = np.sign(gold[:, 0] - gold[:, 1]) == np.sign(proxy[:, 0] - proxy[:, 1])
    standard_error = agree.std(ddof=1) / np.sqrt(draws)
    assert abs(agree.mean() - goodhart_accuracy(sigma_r, sigma)) < 3 * standard_error


@pytest.mark.parametrize("sigma_r, sigma", [(1.0, 0.3), (0.5, 1.0), (2.0, 2.0), (1.0, 4.0)])
def test_goodhart_accuracy_equals_the_seeds_eq18_integral(sigma_r, sigma):
    def integrand(x):
        return (
            np.exp(-x * x / (4 * sigma_r**2))
            / (sigma_r * np.sqrt(np.pi))
            * norm.cdf(-x / (np.sqrt(2) * sigma))
        )

    value, _ = integrate.quad(integrand, 0, np.inf, epsabs=1e-12)
    assert goodhart_accuracy(sigma_r, sigma) == pytest.approx(1 - value, abs=1e-9)


def test_goodhart_overoptimization_and_its_curve_against_accuracy():
    sigma = np.array([0.2, 1.0, 3.0])
    accuracy = goodhart_accuracy(1.0, sigma)
    assert goodhart_overoptimization(1.0, sigma) == pytest.approx(1 / (1 + sigma**2))
    predicted = goodhart_from_accuracy(accuracy)
    assert predicted["overoptimization"] == pytest.approx(goodhart_overoptimization(1.0, sigma))
    assert predicted["ndr"] == pytest.approx(goodhart_ndr(1.0, sigma))


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
def test_observed_ndr_and_accuracy_of_noisy_proxies_follow_the_normal_model(sigma):
    rng = np.random.default_rng(int(10 * sigma))
    gold = rng.normal(size=(800, 16))
    proxy = gold + rng.normal(0, sigma, size=gold.shape)
    for n in (2, 8):  # the model's NDR does not depend on n
        result = ndr(list(gold), list(proxy), n)
        assert result.ci_low < goodhart_ndr(1.0, sigma) < result.ci_high
    accuracy = pairwise_accuracy(list(gold), list(proxy))
    assert accuracy.ci_low < goodhart_accuracy(1.0, sigma) < accuracy.ci_high


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: goodhart_accuracy(0.0, 1.0), "expected sigma_r > 0, got 0.0"),
        (lambda: goodhart_accuracy(1.0, -1.0), "expected sigma >= 0, got -1.0"),
        (lambda: goodhart_ndr(float("nan"), 1.0), "expected finite standard deviations"),
        (lambda: goodhart_from_accuracy(0.4), r"expected accuracies in \[0.5, 1\]"),
    ],
)
def test_goodhart_functions_reject_bad_input(call, message):
    with pytest.raises(MetricInputError, match=message):
        call()
