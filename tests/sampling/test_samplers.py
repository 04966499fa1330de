"""Uniform random and stratified prompt samplers."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from rmaudit.benchmark.sampling import random_indices, stratified_indices
from rmaudit.errors import MetricInputError


def test_random_indices_are_sorted_distinct_and_in_range():
    picked = random_indices(50, 12, seed=4)
    assert picked.shape == (12,)
    assert np.all(np.diff(picked) > 0)
    assert 0 <= picked.min() and picked.max() < 50


def test_random_indices_are_deterministic_per_seed():
    assert np.array_equal(random_indices(1000, 10, seed=9), random_indices(1000, 10, seed=9))
    assert len({tuple(random_indices(1000, 10, seed=s).tolist()) for s in range(20)}) == 20


def test_random_indices_are_uniform_over_items():
    counts = np.zeros(8)
    for seed in range(4000):
        counts[random_indices(8, 3, seed=seed)] += 1
    assert chisquare(counts).pvalue > 0.001


def test_random_indices_k_equal_n_is_everything():
    assert random_indices(4, 4).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("n", "k", "field"),
    [(0, 1, "n"), (-3, 1, "n"), (2.5, 1, "n"), (5, 0, "k"), (5, 6, "k"), (5, -1, "k")],
)
def test_random_indices_reject_bad_sizes(n, k, field):
    with pytest.raises(MetricInputError, match="expected .*got") as info:
        random_indices(n, k, seed=0)
    assert info.value.field == field


def group_counts(groups, picked) -> dict[str, int]:
    return dict(Counter(groups[i] for i in picked))


# (sizes of groups a, b, c, ...), k, the allocation worked out by hand.
HAND_ALLOCATIONS = [
    # Quotas 5, 3, 2: exact.
    ((50, 30, 20), 10, (5, 3, 2)),
    # Quotas 4.2, 1.75, 1.05 -> floors 4, 1, 1; the spare seat goes to remainder 0.75.
    ((60, 25, 15), 7, (4, 2, 1)),
    # Quotas 0.97·5, 0.1, 0.05 -> floors 4, 0, 0, raised to cover every group: 4, 1, 1 is one
    # seat over, taken back from the only group that can spare one.
    ((97, 2, 1), 5, (3, 1, 1)),
    # k below the number of groups: quotas 1.0, 0.6, 0.4 -> 1, 0, 0, spare seat to b.
    ((50, 30, 20), 2, (1, 1, 0)),
    # Equal remainders 0.5, 0.5: the tie goes to the group seen first.
    ((5, 3, 2), 5, (3, 1, 1)),
    # Every item.
    ((3, 2, 1), 6, (3, 2, 1)),
]


@pytest.mark.parametrize(("sizes", "k", "expected"), HAND_ALLOCATIONS)
def test_stratified_counts_match_largest_remainder_allocation(sizes, k, expected):
    labels = "abc"
    # One of each label first (ties go to the group seen first), the rest shuffled so that
    # groups are interleaved rather than in contiguous blocks.
    rest = [label for label, size in zip(labels, sizes, strict=True) for _ in range(size - 1)]
    groups = list(labels) + [str(label) for label in np.random.default_rng(0).permutation(rest)]
    expected_by_label = dict(zip(labels, expected, strict=True))

    picked = stratified_indices(groups, k, seed=1)

    assert picked.size == k and np.all(np.diff(picked) > 0)
    assert group_counts(groups, picked) == {g: c for g, c in expected_by_label.items() if c}


def test_stratified_covers_every_group_when_k_allows():
    groups = ["big"] * 500 + ["tiny1"] + ["tiny2"] + ["small"] * 5
    picked = stratified_indices(groups, 4, seed=3)
    assert set(group_counts(groups, picked)) == {"big", "tiny1", "tiny2", "small"}


def test_stratified_is_deterministic_and_random_within_groups():
    groups = ["x"] * 100 + ["y"] * 100
    first, again = stratified_indices(groups, 10, seed=5), stratified_indices(groups, 10, seed=5)
    assert np.array_equal(first, again)
    draws = {tuple(stratified_indices(groups, 10, seed=s).tolist()) for s in range(20)}
    assert len(draws) == 20


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=8),
    data=st.data(),
)
def test_stratified_allocation_properties(sizes, data):
    groups = [f"g{g}" for g, size in enumerate(sizes) for _ in range(size)]
    k = data.draw(st.integers(min_value=1, max_value=len(groups)))
    picked = stratified_indices(groups, k, seed=0)
    counts = group_counts(groups, picked)

    assert picked.size == k == len(set(picked.tolist()))
    assert all(counts.get(f"g{g}", 0) <= size for g, size in enumerate(sizes))
    if k >= len(sizes):
        assert len(counts) == len(sizes)
    quotas = [k * size / len(groups) for size in sizes]
    if min(quotas) >= 1 or k < len(sizes):
        # No group needed raising to 1, so this is plain largest-remainder rounding.
        for g, quota in enumerate(quotas):
            assert np.floor(quota) <= counts.get(f"g{g}", 0) <= np.ceil(quota)


@pytest.mark.parametrize(
    ("groups", "k", "field"),
    [
        ("abc", 1, "groups"),  # a bare string is not a list of labels
        ([], 1, "groups"),
        (["a", "b"], 3, "k"),
        (["a", "b"], 0, "k"),
        (["a", "b"], 1.0, "k"),
    ],
)
def test_stratified_rejects_bad_input(groups, k, field):
    with pytest.raises(MetricInputError, match="expected .*got") as info:
        stratified_indices(groups, k, seed=0)
    assert info.value.field == field
