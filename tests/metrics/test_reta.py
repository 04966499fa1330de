"""RETA (RETA paper, arXiv 2504.14838, Eq. 3-6) against independent computations: brute-force
enumeration of every
subset and tie-break on small pools, Monte-Carlo resampling, and Theorem 1's analytic limit."""

from __future__ import annotations

import itertools
import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, hypergeom, norm

from rmaudit.metrics import default_etas, reta, reta_curve, reta_n_range

# ---------------------------------------------------------------------------------------------
# Brute force, written straight from Eq. 6 and the definition of a random tie-break.


def eq6_mean(ranked_oracle, eta, n):
    """Eq. 6 for one subset already ranked by RM score: smoothed top-(eta n) sum / (eta n)."""
    x = eta * n
    m = math.floor(x)
    d = x - m
    total = sum(ranked_oracle[:m]) + d * (d * ranked_oracle[m] + (1 - d) * ranked_oracle[m - 1])
    return total / x


def tie_break_orders(draw, scores):
    """The equally likely outcomes of ranking ``draw`` by descending score with ties broken
    uniformly at random: every ordering of the drawn slots that is sorted by score."""
    return [
        order
        for order in itertools.permutations(draw)
        if all(scores[a] >= scores[b] for a, b in itertools.pairwise(order))
    ]


def brute_force_reta(oracle, scores, etas, n, *, normalize, replace):
    """Average Eq. 6 over every size-n subset (or every ordered draw with replacement) and
    every tie-break ordering; one value per eta."""
    size = len(oracle)
    if replace:
        draws = itertools.product(range(size), repeat=n)
    else:
        draws = itertools.combinations(range(size), n)
    per_draw = []
    for draw in draws:
        orders = tie_break_orders(draw, scores)
        per_draw.append(
            [np.mean([eq6_mean([oracle[i] for i in o], eta, n) for o in orders]) for eta in etas]
        )
    value = np.mean(per_draw, axis=0)
    return value / np.mean(oracle) if normalize else value


def tied_pools(seed, sizes):
    """Pools with heavy ties in the RM scores (3 distinct values) and some in the oracle."""
    rng = np.random.default_rng(seed)
    oracle = [rng.integers(1, 8, size) + rng.choice([0.0, 0.5], size) for size in sizes]
    scores = [rng.integers(0, 3, size).astype(float) for size in sizes]
    return oracle, scores


ETAS = [0.3, 0.45, 0.5, 0.7, 0.9]


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize(
    ("sizes", "n"),
    [((5, 5, 6), 2), ((6, 6, 7), 3), ((7, 7, 8), 4), ((6, 7, 8), 5), ((6, 6), 6)],
)
def test_exact_equals_enumeration_of_subsets_and_tie_breaks(sizes, n, normalize):
    oracle, scores = tied_pools(sum(sizes) + n, sizes)
    etas = [eta for eta in ETAS if eta * n >= 1]
    curve = reta_curve(oracle, scores, etas, n=n, normalize=normalize)
    for q in range(len(sizes)):
        expected = brute_force_reta(
            oracle[q], scores[q], etas, n, normalize=normalize, replace=False
        )
        np.testing.assert_allclose(curve.per_prompt[:, q], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(curve.value, curve.per_prompt.mean(axis=1), rtol=0, atol=1e-15)


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize(("sizes", "n"), [((4, 5), 2), ((4, 4), 3), ((5, 6), 4), ((5,), 5)])
def test_exact_with_replacement_equals_enumeration_of_ordered_draws(sizes, n, normalize):
    oracle, scores = tied_pools(100 + sum(sizes) + n, sizes)
    etas = [eta for eta in ETAS if eta * n >= 1]
    curve = reta_curve(oracle, scores, etas, n=n, normalize=normalize, replace=True)
    for q in range(len(sizes)):
        expected = brute_force_reta(
            oracle[q], scores[q], etas, n, normalize=normalize, replace=True
        )
        np.testing.assert_allclose(curve.per_prompt[:, q], expected, rtol=0, atol=1e-12)


def test_single_eta_matches_curve_point_and_brute_force():
    oracle, scores = tied_pools(3, (7,))
    result = reta(oracle, scores, 0.45, n=4)
    expected = brute_force_reta(oracle[0], scores[0], [0.45], 4, normalize=True, replace=False)
    assert result.value == pytest.approx(expected[0], abs=1e-12)
    assert result.per_prompt.shape == (1,)
    assert result.stderr == 0.0


@pytest.mark.parametrize("replace", [False, True])
def test_exact_against_hypergeometric_and_binomial_weights_for_a_large_pool(replace):
    """Numerical stability at N = 600: the closed form equals weights built from scipy's
    hypergeometric / binomial distributions slot by slot."""
    size, n, eta = 600, 200, 0.137  # eta * n = 27.4
    rng = np.random.default_rng(5)
    oracle = rng.uniform(1, 10, size)
    scores = rng.normal(size=size)
    m, d = 27, eta * n - 27
    slot_coefficient = np.zeros(n)
    slot_coefficient[: m - 1] = 1.0
    slot_coefficient[m - 1] = 1.0 + d * (1.0 - d)
    slot_coefficient[m] = d * d
    position = np.arange(1, size + 1)[:, None]
    slot = np.arange(1, n + 1)[None, :]
    if replace:  # P(slot j holds position i) = P(B_i >= j) - P(B_{i-1} >= j), B_i ~ Bin(n, i/N)
        slot_probability = binom.sf(slot - 1, n, position / size) - binom.sf(
            slot - 1, n, (position - 1) / size
        )
    else:  # (n/N) P(rank j | in A) with rank - 1 ~ Hypergeom(N-1, i-1, n-1)
        slot_probability = (n / size) * hypergeom.pmf(slot - 1, size - 1, position - 1, n - 1)
    weights = slot_probability @ slot_coefficient / (eta * n)
    expected = weights @ oracle[np.argsort(-scores)] / oracle.mean()
    result = reta([oracle], [scores], eta, n=n, replace=replace)
    assert result.value == pytest.approx(expected, abs=1e-10)


# ---------------------------------------------------------------------------------------------
# The subset-size range, default η grid and their use.


@pytest.mark.parametrize(
    ("size", "first", "last"),
    [(8, 8, 8), (27, 27, 27), (125, 75, 125), (256, 121, 201), (343, 147, 245), (1000, 300, 500)],
)
def test_n_range_known_values(size, first, last):
    # N^(2/3) is 4, 9, 25, 40.3175..., 49, 100: [3x, 5x] clipped to N.
    np.testing.assert_array_equal(reta_n_range(size), np.arange(first, last + 1))


@pytest.mark.parametrize("size", [2, 3, 10, 64, 100, 255, 257, 511, 999, 1331, 2048, 4000])
def test_n_range_matches_definition_in_high_precision(size):
    getcontext().prec = 50
    scale = Decimal(size) ** (Decimal(2) / Decimal(3))
    expected = [n for n in range(1, size + 1) if 3 * scale <= n <= 5 * scale] or [size]
    np.testing.assert_array_equal(reta_n_range(size), expected)


def test_default_n_range_is_the_mean_over_sizes():
    oracle, scores = tied_pools(11, (150, 150))
    sizes = reta_n_range(150)
    assert (sizes[0], sizes[-1]) == (85, 141)
    averaged = reta(oracle, scores, 0.2).per_prompt
    per_size = np.array([reta(oracle, scores, 0.2, n=int(n)).per_prompt for n in sizes])
    np.testing.assert_allclose(averaged, per_size.mean(axis=0), rtol=0, atol=1e-12)


def test_default_etas_are_log_spaced_from_half_to_one_over_smallest_n():
    etas = default_etas(256)
    assert etas.size == 15
    assert etas[0] == 0.5
    assert etas[-1] == pytest.approx(1 / 121, rel=1e-15)
    ratios = etas[1:] / etas[:-1]
    np.testing.assert_allclose(ratios, ratios[0], rtol=1e-12)


def test_curve_defaults_to_default_etas_of_the_smallest_pool_and_runs_at_eta_n_equal_one():
    rng = np.random.default_rng(2)
    oracle = [rng.uniform(1, 5, size) for size in (300, 256, 400)]
    curve = reta_curve(oracle, oracle)
    np.testing.assert_array_equal(curve.x, default_etas(256))
    assert curve.per_prompt.shape == (15, 3)
    assert np.all(np.isfinite(curve.value))


def test_curve_with_explicit_n_defaults_to_etas_down_to_one_over_n():
    oracle, scores = tied_pools(4, (12,))
    curve = reta_curve(oracle, scores, n=7)
    assert curve.x[0] == 0.5 and curve.x[-1] == pytest.approx(1 / 7)


@pytest.mark.parametrize("method", ["exact", "mc"])
def test_curve_points_equal_single_eta_calls(method):
    oracle, scores = tied_pools(8, (40, 40, 41))
    etas = [0.1, 0.3, 0.5]
    curve = reta_curve(oracle, scores, etas, method=method, n=20, resamples=30, seed=3)
    for i, eta in enumerate(etas):
        single = reta(oracle, scores, eta, method=method, n=20, resamples=30, seed=3)
        point = curve.point(i)
        np.testing.assert_allclose(point.per_prompt, single.per_prompt, rtol=0, atol=1e-14)
        for field in ("value", "stderr", "ci_low", "ci_high"):
            assert getattr(point, field) == pytest.approx(getattr(single, field), abs=1e-14)


# ---------------------------------------------------------------------------------------------
# Monte Carlo against exact.


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("n", [12, None])
def test_monte_carlo_agrees_with_exact_within_four_standard_errors(replace, n):
    rng = np.random.default_rng(21)
    oracle = [rng.uniform(1, 10, size) for size in (30, 30, 36)]
    scores = [np.round(o + rng.normal(0, 3, o.size)) for o in oracle]  # rounding makes ties
    etas = [0.1, 0.25, 0.5]
    exact = reta_curve(oracle, scores, etas, n=n, replace=replace).value
    # The Monte-Carlo standard error is measured, not assumed: 40 independent seeds.
    runs = np.array(
        [
            reta_curve(
                oracle,
                scores,
                etas,
                n=n,
                method="mc",
                resamples=50,
                seed=seed,
                replace=replace,
                bootstrap=1,
            ).value
            for seed in range(40)
        ]
    )
    mc_mean = runs.mean(axis=0)
    mc_stderr = runs.std(axis=0, ddof=1) / np.sqrt(len(runs))
    assert np.all(mc_stderr > 0)
    assert np.all(np.abs(mc_mean - exact) <= 4 * mc_stderr), (mc_mean - exact) / mc_stderr


def test_monte_carlo_is_seeded():
    oracle, scores = tied_pools(9, (30, 31))
    first = reta(oracle, scores, 0.3, method="mc", n=10, seed=4)
    again = reta(oracle, scores, 0.3, method="mc", n=10, seed=4)
    other = reta(oracle, scores, 0.3, method="mc", n=10, seed=5)
    np.testing.assert_array_equal(first.per_prompt, again.per_prompt)
    assert not np.array_equal(first.per_prompt, other.per_prompt)


# ---------------------------------------------------------------------------------------------
# Theorem 1: for (Y, J) bivariate normal with J = mu + sigma Z and corr(Y, J) = rho,
# RETA(eta) -> E[J | Y >= Theta(eta)] / E[J] = 1 + (sigma rho / mu) phi(Phi^-1(1 - eta)) / eta.

MU, SIGMA, RHO = 5.0, 1.0, 0.6


def theorem1_limit(eta):
    return 1 + SIGMA * RHO / MU * norm.pdf(norm.ppf(1 - eta)) / eta


def finite_n_expectation(eta, sizes):
    """E of Eq. 6 for n i.i.d. draws (a random subset of an i.i.d. pool is i.i.d.), averaged
    over the sizes, by 1-D quadrature: E[J | Y-rank j] = mu + sigma rho E[Y_(j:n)], and the sum
    of the top k of n standard normals has mean n ∫ y phi(y) P(Bin(n-1, 1-Phi(y)) <= k-1) dy."""
    y = np.linspace(-10, 10, 6001)
    density = y * norm.pdf(y)
    exceed = norm.sf(y)

    def top_sum(k, n):
        return n * np.trapezoid(density * binom.cdf(k - 1, n - 1, exceed), y)

    means = []
    for n in sizes:
        m = math.floor(eta * n)
        d = eta * n - m
        smoothed = (
            (1 + d - 2 * d * d) * top_sum(m, n)
            - d * (1 - d) * top_sum(m - 1, n)
            + d * d * top_sum(m + 1, n)
        )
        means.append(smoothed / (eta * n))
    return 1 + SIGMA * RHO / MU * np.mean(means)


def bivariate_normal_pools(seed, prompts, size):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(prompts, size))
    noise = rng.normal(size=(prompts, size))
    return list(MU + SIGMA * z), list(RHO * z + np.sqrt(1 - RHO**2) * noise)


@pytest.mark.parametrize(
    ("method", "n", "prompts", "etas"),
    [("exact", None, 200, [0.5, 0.25, 0.1, 0.02]), ("mc", 1000, 60, [0.5, 0.1])],
)
def test_converges_to_theorem1_limit(method, n, prompts, etas):
    """N = 4000 responses per prompt.  The tolerance is 4 standard errors across prompts (for
    Monte Carlo these include its resampling noise) plus the finite-n bias, which quadrature
    computes and which must itself be small: it shrinks like 1/(eta n), and eta n >= 15 here."""
    size = 4000
    oracle, scores = bivariate_normal_pools(123, prompts, size)
    curve = reta_curve(oracle, scores, etas, method=method, n=n, resamples=20)
    sizes = [n] if n is not None else reta_n_range(size)
    for i, eta in enumerate(etas):
        limit = theorem1_limit(eta)
        finite_n_bias = finite_n_expectation(eta, sizes) - limit
        assert abs(finite_n_bias) < 1e-2 * (limit - 1)
        assert abs(curve.value[i] - limit) <= 4 * curve.stderr[i] + abs(finite_n_bias)


# ---------------------------------------------------------------------------------------------
# Properties.

pool_sizes = st.integers(min_value=2, max_value=12)


@st.composite
def prompt_pools(draw, max_prompts=4, tie_values=4):
    """Positive oracle scores and RM scores drawn from a few values, so ties are common."""
    count = draw(st.integers(min_value=1, max_value=max_prompts))
    sizes = draw(st.lists(pool_sizes, min_size=count, max_size=count))
    oracle = [np.array(draw(st.lists(st.floats(0.1, 10), min_size=s, max_size=s))) for s in sizes]
    scores = [
        np.array(draw(st.lists(st.integers(0, tie_values), min_size=s, max_size=s)), dtype=float)
        for s in sizes
    ]
    return oracle, scores


@st.composite
def pools_and_subset(draw):
    oracle, scores = draw(prompt_pools())
    n = draw(st.integers(min_value=2, max_value=min(p.size for p in oracle)))
    eta = draw(st.floats(min_value=1.0 / n, max_value=0.99))
    replace = draw(st.booleans())
    return oracle, scores, n, eta, replace


@settings(max_examples=60, deadline=None)
@given(pools_and_subset(), st.randoms(use_true_random=False))
def test_invariant_to_permuting_responses_with_their_scores(case, random):
    oracle, scores, n, eta, replace = case
    shuffled_oracle, shuffled_scores = [], []
    for judged, scored in zip(oracle, scores, strict=True):
        order = list(range(judged.size))
        random.shuffle(order)
        shuffled_oracle.append(judged[order])
        shuffled_scores.append(scored[order])
    before = reta(oracle, scores, eta, n=n, replace=replace).per_prompt
    after = reta(shuffled_oracle, shuffled_scores, eta, n=n, replace=replace).per_prompt
    np.testing.assert_allclose(after, before, rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(pools_and_subset(), st.randoms(use_true_random=False))
def test_invariant_to_prompt_order(case, random):
    oracle, scores, n, eta, replace = case
    order = list(range(len(oracle)))
    random.shuffle(order)
    before = reta(oracle, scores, eta, n=n, replace=replace)
    after = reta([oracle[q] for q in order], [scores[q] for q in order], eta, n=n, replace=replace)
    np.testing.assert_allclose(after.per_prompt, before.per_prompt[order], rtol=1e-12, atol=1e-12)
    assert after.value == pytest.approx(before.value, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(pools_and_subset())
def test_perfect_rm_is_at_least_one(case):
    oracle, _, n, eta, replace = case
    result = reta(oracle, oracle, eta, n=n, replace=replace)
    assert np.all(result.per_prompt >= 1 - 1e-12)


@settings(max_examples=60, deadline=None)
@given(pools_and_subset())
def test_constant_rm_is_exactly_one(case):
    oracle, _, n, eta, replace = case
    constant = [np.full(p.size, 3.0) for p in oracle]
    result = reta(oracle, constant, eta, n=n, replace=replace)
    np.testing.assert_allclose(result.per_prompt, 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("replace", [False, True])
def test_rm_independent_of_oracle_is_one_in_expectation(replace):
    """Averaged over every assignment of 5 distinct RM scores to the responses (an RM
    independent of J), exact RETA is 1."""
    oracle = [np.array([1.0, 2.5, 4.0, 7.0, 9.5])]
    values = [
        reta(oracle, [np.array(perm, dtype=float)], 0.45, n=4, replace=replace).value
        for perm in itertools.permutations(range(5))
    ]
    assert np.mean(values) == pytest.approx(1.0, abs=1e-12)
    assert np.ptp(values) > 0.1  # the individual assignments do differ


def test_unnormalised_reta_is_the_top_quantile_mean_oracle_score():
    # n = N = 4 and eta = 1/2: exactly the mean of the RM's top 2.
    oracle = [np.array([-3.0, 1.0, 2.0, 6.0])]
    scores = [np.array([4.0, 3.0, 1.0, 2.0])]
    assert reta(oracle, scores, 0.5, n=4, normalize=False).value == pytest.approx(-1.0, abs=1e-14)
