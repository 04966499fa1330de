"""Paired comparisons (rmaudit.metrics.paired) against independent computations."""

from __future__ import annotations

import itertools
import math
from dataclasses import astuple

import numpy as np
import pytest
from scipy import stats

from rmaudit.errors import MetricInputError
from rmaudit.metrics.letters import letter_display
from rmaudit.metrics.paired import (
    compare_models,
    holm,
    paired_difference,
    rank_intervals,
)


def test_paired_difference_equals_statsmodels_cluster_robust_ols_on_the_differences():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 10, size=40)
    prompts = np.repeat(np.arange(40), sizes)
    effect = rng.normal(size=40)[prompts]
    first = (rng.normal(size=prompts.size) + effect > 0).astype(float)
    second = (rng.normal(size=prompts.size) + effect > 0.2).astype(float)
    result = paired_difference(first, second, clusters=[f"q{q}" for q in prompts])
    fit = sm.OLS(first - second, np.ones(prompts.size)).fit(
        cov_type="cluster", cov_kwds={"groups": prompts}
    )
    assert result.value == pytest.approx(fit.params[0], rel=1e-12)
    assert result.stderr == pytest.approx(fit.bse[0], rel=1e-10)
    # Student's t with clusters − 1 degrees of freedom (Cameron & Miller 2015)
    assert result.p_value == pytest.approx(2 * stats.t.sf(abs(fit.tvalues[0]), 39), rel=1e-9)
    assert (result.units, result.clusters) == (prompts.size, 40)
    half = stats.t.ppf(0.975, 39) * fit.bse[0]
    assert result.ci_low == pytest.approx(fit.params[0] - half, rel=1e-9)


def test_unclustered_paired_difference_is_the_paired_t_statistics_stderr():
    rng = np.random.default_rng(4)
    first, second = rng.normal(size=50), rng.normal(size=50)
    result = paired_difference(first, second)
    t = stats.ttest_rel(first, second)
    assert result.value / result.stderr == pytest.approx(t.statistic, rel=1e-12)
    assert result.p_value == pytest.approx(t.pvalue, rel=1e-9)


def test_a_constant_difference_has_no_spread_and_a_decided_p_value():
    same = paired_difference([1.0, 0.0, 1.0], [1.0, 0.0, 1.0])
    assert (same.value, same.stderr, same.p_value) == (0.0, 0.0, 1.0)
    shifted = paired_difference([2.0, 1.0, 2.0], [1.0, 0.0, 1.0])
    assert (shifted.value, shifted.p_value) == (1.0, 0.0)


def test_holm_equals_a_brute_force_step_down():
    rng = np.random.default_rng(8)
    p = rng.uniform(0, 0.2, size=7)
    order = np.argsort(p)
    expected = np.empty(7)
    for rank, i in enumerate(order):
        expected[i] = min(1.0, max((7 - r) * p[order[r]] for r in range(rank + 1)))
    assert holm(p) == pytest.approx(expected, rel=1e-12)
    assert np.isnan(holm([0.01, math.nan])[1]) and holm([0.01, math.nan])[0] == 0.01


def _brute_force_groups(order, separated):
    """Every maximal set of models no separated pair splits (the cliques the letters must be)."""
    unordered = {frozenset(p) for p in separated}
    cliques = [
        set(c)
        for size in range(len(order), 0, -1)
        for c in itertools.combinations(order, size)
        if not any(frozenset(p) in unordered for p in itertools.combinations(c, 2))
    ]
    return {frozenset(c) for c in cliques if not any(c < other for other in cliques)}


@pytest.mark.parametrize("seed", range(30))
def test_letters_are_shared_exactly_by_the_pairs_not_separated(seed):
    rng = np.random.default_rng(seed)
    order = list("abcdef")
    pairs = list(itertools.combinations(order, 2))
    separated = {p for p in pairs if rng.random() < 0.4}
    letters = letter_display(order, separated)
    for first, second in pairs:
        share = bool(set(letters[first]) & set(letters[second]))
        assert share == ((first, second) not in separated)
    groups = {frozenset(m for m in order if letter in letters[m]) for letter in "abcdefghij"}
    assert groups - {frozenset()} == _brute_force_groups(order, separated)


def test_rank_intervals_count_the_models_separably_above_and_below():
    ranks = rank_intervals(list("abcd"), {("a", "c"), ("a", "d"), ("b", "d")})
    assert ranks == {"a": (1, 2), "b": (1, 3), "c": (2, 4), "d": (3, 4)}


def test_compare_models_orders_best_first_and_lower_is_better_flips_it():
    rng = np.random.default_rng(1)
    base = rng.normal(size=200)
    values = {"low": base, "mid": base + 0.5 + 0.1 * rng.normal(size=200), "same": base + 0.0}
    high = compare_models(values)
    assert [s.model for s in high.standings][0] == "mid"
    assert high.standings[0].letters == "a" and high.standings[0].ranks == "1"
    assert {s.model: s.ranks for s in high.standings}["low"] == "2–3"
    low = compare_models(values, higher_is_better=False)
    assert low.standings[-1].model == "mid"
    for pair in high.head_to_heads:
        assert pair.difference.value >= 0


@pytest.mark.parametrize(
    ("models", "units", "per_cluster"),
    [(6, 419, 1), (6, 419, 3), (5, 2, 1), (4, 1, 1), (25, 5000, 4), (3, 40, 40)],
    ids=["unclustered", "clustered", "two units", "one unit", "several blocks", "one cluster"],
)
def test_every_pair_is_paired_difference_bit_for_bit(models, units, per_cluster):
    """compare_models computes its K(K−1)/2 differences at once: each is paired_difference's,
    to the last bit (no printed number moves)."""
    rng = np.random.default_rng(models + units)
    credits = rng.integers(0, 3, size=(models, units)) / 2.0  # ties, as a judge's credits
    credits[0] = credits[1]  # a constant difference: no spread
    clusters = None if per_cluster == 1 else [f"q{i // per_cluster}" for i in range(units)]
    values = {f"m{i}": row for i, row in enumerate(credits)}
    compared = compare_models(values, clusters=clusters)
    assert len(compared.head_to_heads) == models * (models - 1) // 2
    for pair in compared.head_to_heads:
        alone = paired_difference(values[pair.first], values[pair.second], clusters=clusters)
        for got, expected in zip(astuple(pair.difference), astuple(alone), strict=True):
            assert got == expected or (math.isnan(got) and math.isnan(expected)), pair


def test_bad_input_is_refused_naming_the_field():
    with pytest.raises(MetricInputError, match="at least two models"):
        compare_models({"a": [1.0, 2.0]})
    with pytest.raises(MetricInputError, match="same units"):
        compare_models({"a": [1.0, 2.0], "b": [1.0]})
    with pytest.raises(MetricInputError, match="finite"):
        paired_difference([1.0, math.nan], [1.0, 2.0])
    with pytest.raises(MetricInputError, match=r"p-values in \[0, 1\]"):
        holm([1.5])
