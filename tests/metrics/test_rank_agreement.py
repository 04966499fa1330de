"""The rank agreement of two benchmarks (rmaudit.metrics.rank_agreement) against scipy's
correlations and against brute-force enumeration of the orders the comparisons allow."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import kendalltau, spearmanr

from rmaudit.errors import MetricInputError
from rmaudit.metrics.paired import compare_models
from rmaudit.metrics.rank_agreement import kendall, rank_agreement, spearman


def test_vectorised_correlations_equal_scipys_with_ties():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, (50, 6)).astype(float)
    y = rng.integers(0, 4, (50, 6)).astype(float)
    for row_x, row_y, rho, tau in zip(x, y, spearman(x, y), kendall(x, y), strict=True):
        if len(set(row_x)) == 1 or len(set(row_y)) == 1:
            assert np.isnan(rho) and np.isnan(tau)
            continue
        assert rho == pytest.approx(spearmanr(row_x, row_y).statistic)
        assert tau == pytest.approx(kendalltau(row_x, row_y).statistic)


def separated_orders(units: np.ndarray, alpha: float) -> list[tuple[int, ...]]:
    """Every permutation (model → rank, 0 best) that keeps the separated pairs in order."""
    found = compare_models({str(k): units[:, k] for k in range(units.shape[1])}, alpha=alpha)
    pairs = [(int(p.first), int(p.second)) for p in found.head_to_heads if p.separable]
    orders = []
    for ranks in itertools.permutations(range(units.shape[1])):
        if all(ranks[better] < ranks[worse] for better, worse in pairs):
            orders.append(ranks)
    return orders


@pytest.mark.parametrize("seed", range(6))
def test_interval_is_the_range_over_every_allowed_pair_of_orders(seed):
    rng = np.random.default_rng(seed)
    ability = rng.normal(0, 0.5, 5)
    a = (ability - rng.normal(size=(200, 1)) + rng.normal(size=(200, 5)) > 0).astype(float)
    b = (ability[::-1] - rng.normal(size=(150, 1)) + rng.normal(size=(150, 5)) > 0).astype(float)
    found = rank_agreement(a, b, level=0.9)
    alpha = 1 - np.sqrt(0.9)
    orders_a, orders_b = separated_orders(a, alpha), separated_orders(b, alpha)
    rhos = [spearmanr(p, q).statistic for p in orders_a for q in orders_b]
    taus = [kendalltau(p, q).statistic for p in orders_a for q in orders_b]
    assert (found.orderings_a, found.orderings_b) == (len(orders_a), len(orders_b))
    assert found.spearman.ci_low == pytest.approx(min(rhos))
    assert found.spearman.ci_high == pytest.approx(max(rhos))
    assert found.kendall.ci_low == pytest.approx(min(taus))
    assert found.kendall.ci_high == pytest.approx(max(taus))
    assert found.spearman.value == pytest.approx(spearmanr(a.mean(0), b.mean(0)).statistic)
    assert found.kendall.value == pytest.approx(kendalltau(a.mean(0), b.mean(0)).statistic)


def test_models_told_apart_on_both_sides_give_a_point_interval():
    units = np.repeat(np.array([[1.0, 0.6, 0.3, 0.0]]), 400, axis=0)
    units += np.random.default_rng(0).normal(0, 0.05, units.shape)
    found = rank_agreement(units, units[:, ::-1] * -1)
    assert found.spearman.value == 1.0
    assert (found.spearman.ci_low, found.spearman.ci_high) == (1.0, 1.0)
    assert (found.kendall.ci_low, found.kendall.ci_high) == (1.0, 1.0)


def test_too_many_orders_is_said_and_bounded_by_one():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(20, 9)), rng.normal(size=(20, 9))
    found = rank_agreement(a, b)
    assert found.unbounded and found.orderings_a == 0
    assert (found.spearman.ci_low, found.spearman.ci_high) == (-1.0, 1.0)


@pytest.mark.parametrize(
    ("a", "b", "field"),
    [
        (np.ones((5, 2)), np.ones((5, 2)), "units_a"),
        (np.ones((5, 3)), np.ones((5, 4)), "units_b"),
        (np.array([[1.0, np.nan, 0], [0, 1, 0]]), np.ones((2, 3)), "units_a"),
        (np.array([[1.0, 0, 0], [0, 1, 0]]), np.ones((2, 3)), "units_b"),
    ],
)
def test_bad_input_names_its_field(a, b, field):
    with pytest.raises(MetricInputError) as raised:
        rank_agreement(a, b)
    assert raised.value.field == field
