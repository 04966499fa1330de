"""Fast versions of benchmarks/coverage.py for the per-prompt means: their ± and bootstrap CI
cover a closed-form truth at about the nominal rate (wide tolerance, small counts)."""

from __future__ import annotations

import numpy as np
from scipy import integrate
from scipy.stats import norm

from rmaudit.metrics import best_of_n, pairwise_accuracy, reta

RHO = 1 / np.sqrt(2)  # J ~ N(5, 1), RM score Y = J + N(0, 1)


def expected_max(n: int) -> float:
    value, _ = integrate.quad(lambda x: x * n * norm.pdf(x) * norm.cdf(x) ** (n - 1), -12, 12)
    return value


def coverage(metric, truth, datasets=200, prompts=16, responses=16):
    plus_minus, bootstrap = [], []
    for dataset in range(datasets):
        rng = np.random.default_rng([21, dataset])
        oracle = 5 + rng.normal(size=(prompts, responses))
        result = metric(list(oracle), list(oracle + rng.normal(size=oracle.shape)), dataset)
        plus_minus.append(abs(result.value - truth) <= 1.96 * result.stderr)
        bootstrap.append(result.ci_low <= truth <= result.ci_high)
    return np.mean(plus_minus), np.mean(bootstrap)


def test_best_of_n_intervals_cover_the_closed_form():
    truth = 5 + RHO * expected_max(4)
    for covered in coverage(lambda j, y, s: best_of_n(j, y, 4, seed=s), truth):
        assert 0.88 <= covered <= 0.99


def test_pairwise_accuracy_intervals_cover_the_closed_form():
    truth = 0.5 + np.arcsin(RHO) / np.pi  # Sheppard: 3/4
    for covered in coverage(lambda j, y, s: pairwise_accuracy(j, y, seed=s), truth):
        assert 0.88 <= covered <= 0.99


def test_reta_intervals_cover_the_finite_pool_quantity_not_the_limit():
    """At N = 16 the finite-pool RETA(1/4) lies 0.01 below Theorem 1's limit: the intervals
    cover the former, and at 100 prompts no longer the latter."""
    rng = np.random.default_rng(0)
    oracle = 5 + rng.normal(size=(20_000, 16))
    finite = reta(
        list(oracle), list(oracle + rng.normal(size=oracle.shape)), 0.25, bootstrap=2
    ).value
    limit = 1 + RHO * norm.pdf(norm.ppf(0.75)) / (0.25 * 5)
    assert limit - finite > 0.005
    metric = lambda j, y, s: reta(j, y, 0.25, seed=s)  # noqa: E731
    for covered in coverage(metric, finite):
        assert 0.88 <= covered <= 0.99
    assert coverage(metric, limit, datasets=100, prompts=100)[0] < 0.8
