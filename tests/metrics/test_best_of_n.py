"""Best-of-n family (RETA paper, arXiv 2504.14838, Eq. 1, App. B.3) against brute force over every
subset and
every tie-break, and against scipy's hypergeometric distribution on large pools."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import hypergeom

from rmaudit.metrics import best_k_of_n, best_of_n, best_of_n_curve, bon_kl


def tie_break_orders(subset, scores):
    """Equally likely rankings of ``subset`` by descending score under a random tie-break."""
    return [
        order
        for order in itertools.permutations(subset)
        if all(scores[a] >= scores[b] for a, b in itertools.pairwise(order))
    ]


def brute_force(oracle, scores, n, statistic):
    """Mean over all size-n subsets and tie-breaks of ``statistic(oracle values, best first)``."""
    per_subset = []
    for subset in itertools.combinations(range(len(oracle)), n):
        orders = tie_break_orders(subset, scores)
        per_subset.append(np.mean([statistic([oracle[i] for i in order]) for order in orders]))
    return float(np.mean(per_subset))


def tied_pools(seed, sizes):
    rng = np.random.default_rng(seed)
    oracle = [rng.normal(0, 3, size).round(1) for size in sizes]  # raw scores may be negative
    scores = [rng.integers(0, 3, size).astype(float) for size in sizes]
    return oracle, scores


CASES = [((5, 6), 1), ((5, 6), 2), ((6, 7), 3), ((7, 7), 4), ((6, 8), 5), ((6,), 6)]


@pytest.mark.parametrize(
    ("sizes", "n", "rank"), [(s, n, r) for s, n in CASES for r in (1, 2) if r <= n]
)
def test_best_of_n_equals_brute_force(sizes, n, rank):
    oracle, scores = tied_pools(10 * n + rank, sizes)
    result = best_of_n(oracle, scores, n, rank=rank)
    for q in range(len(sizes)):
        expected = brute_force(oracle[q], scores[q], n, lambda ranked: ranked[rank - 1])
        assert result.per_prompt[q] == pytest.approx(expected, abs=1e-12)
    assert result.value == pytest.approx(np.mean(result.per_prompt), abs=1e-15)


@pytest.mark.parametrize(
    ("sizes", "n", "k"), [(s, n, k) for s, n in CASES for k in (1, 2, 3) if k <= n]
)
def test_best_k_of_n_equals_brute_force(sizes, n, k):
    oracle, scores = tied_pools(100 + 10 * n + k, sizes)
    result = best_k_of_n(oracle, scores, n, k)
    for q in range(len(sizes)):
        expected = brute_force(oracle[q], scores[q], n, lambda ranked: np.mean(ranked[:k]))
        assert result.per_prompt[q] == pytest.approx(expected, abs=1e-12)


def test_best_1_of_n_is_best_of_n():
    oracle, scores = tied_pools(3, (30, 40))
    assert best_k_of_n(oracle, scores, 9, 1).value == pytest.approx(
        best_of_n(oracle, scores, 9).value, abs=1e-12
    )


@pytest.mark.parametrize("rank", [1, 2, 37])
def test_large_pool_matches_hypergeometric_rank_probabilities(rank):
    """P(position i is ranked r in a random n-subset) = (n/N) Hypergeom(r-1; N-1, i-1, n-1)."""
    size, n = 2000, 500
    rng = np.random.default_rng(8)
    oracle = rng.normal(5, 2, size)
    scores = rng.normal(size=size)
    position = np.arange(1, size + 1)
    weights = (n / size) * hypergeom.pmf(rank - 1, size - 1, position - 1, n - 1)
    expected = weights @ oracle[np.argsort(-scores)]
    assert best_of_n([oracle], [scores], n, rank=rank).value == pytest.approx(expected, abs=1e-10)


def test_edge_sizes():
    oracle = [np.array([3.0, 1.0, 4.0, 1.5])]
    scores = [np.array([0.2, 0.9, 0.5, 0.9])]  # the RM's top two are tied
    assert best_of_n(oracle, scores, 1).value == pytest.approx(np.mean(oracle[0]), abs=1e-14)
    assert best_of_n(oracle, scores, 4).value == pytest.approx((1.0 + 1.5) / 2, abs=1e-14)
    assert best_of_n(oracle, scores, 4, rank=4).value == pytest.approx(3.0, abs=1e-14)
    assert best_k_of_n(oracle, scores, 4, 4).value == pytest.approx(np.mean(oracle[0]), abs=1e-14)


def test_curve_matches_pointwise_calls():
    oracle, scores = tied_pools(5, (20, 25, 25))
    ns = [2, 4, 8, 16]
    curve = best_of_n_curve(oracle, scores, ns, rank=2, seed=7)
    np.testing.assert_array_equal(curve.x, ns)
    for i, n in enumerate(ns):
        point = best_of_n(oracle, scores, n, rank=2, seed=7)
        np.testing.assert_allclose(curve.per_prompt[i], point.per_prompt, rtol=0, atol=1e-14)
        assert curve.point(i).ci_low == pytest.approx(point.ci_low, abs=1e-14)


def test_perfect_rm_curve_is_non_decreasing_in_n():
    rng = np.random.default_rng(1)
    oracle = [rng.normal(size=50) for _ in range(3)]
    curve = best_of_n_curve(oracle, oracle, list(range(1, 51)))
    assert np.all(np.diff(curve.value) >= -1e-12)
    assert curve.value[-1] == pytest.approx(np.mean([o.max() for o in oracle]), abs=1e-12)


def test_bon_kl():
    assert bon_kl(1) == 0.0
    assert bon_kl(2) == pytest.approx(math.log(2) - 0.5, abs=1e-15)
    sizes = np.array([[1, 4], [16, 256]])
    expected = np.array([[math.log(n) - (n - 1) / n for n in row] for row in sizes])
    np.testing.assert_allclose(bon_kl(sizes), expected, rtol=1e-15)
    assert isinstance(bon_kl(3), float)


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_invariant_to_permuting_responses_with_their_scores(data):
    size = data.draw(st.integers(2, 12))
    oracle = np.array(data.draw(st.lists(st.floats(-10, 10), min_size=size, max_size=size)))
    scores = np.array(data.draw(st.lists(st.integers(0, 3), min_size=size, max_size=size)), float)
    n = data.draw(st.integers(1, size))
    rank = data.draw(st.integers(1, n))
    order = data.draw(st.permutations(range(size)))
    before = best_of_n([oracle], [scores], n, rank=rank).value
    after = best_of_n([oracle[list(order)]], [scores[list(order)]], n, rank=rank).value
    assert after == pytest.approx(before, abs=1e-12)
    top_before = best_k_of_n([oracle], [scores], n, rank).value
    top_after = best_k_of_n([oracle[list(order)]], [scores[list(order)]], n, rank).value
    assert top_after == pytest.approx(top_before, abs=1e-12)
