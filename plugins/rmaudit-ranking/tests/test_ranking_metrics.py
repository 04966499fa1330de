"""The ranking metrics against brute force: every tie-break ordering enumerated on small pools."""

from __future__ import annotations

import doctest
import itertools
import math
from itertools import pairwise

import numpy as np
import pytest
from scipy.stats import rankdata

import rmaudit_ranking.metrics
from rmaudit.errors import MetricInputError
from rmaudit_ranking import hit_rate, mrr, ndcg


def tie_break_orders(values: np.ndarray) -> list[tuple[int, ...]]:
    """Every ordering of the indices by descending value: one per way of breaking the ties."""
    return [
        order
        for order in itertools.permutations(range(len(values)))
        if all(values[a] >= values[b] for a, b in pairwise(order))
    ]


def brute_hit_rate(judged, scored, n, eta):
    m = math.floor(eta * len(judged))
    hits = [
        len(set(y_order[:n]) & set(j_order[:m])) / m
        for y_order in tie_break_orders(scored)
        for j_order in tie_break_orders(judged)
    ]
    return float(np.mean(hits))


def brute_pick_gain(judged, scored, rank, gain):
    oracle_rank = rankdata(-judged, method="min")  # ties share the best rank
    return float(
        np.mean([gain(oracle_rank[order[rank - 1]]) for order in tie_break_orders(scored)])
    )


def small_pools(seed: int, count: int, max_size: int):
    """Integer-valued scores, so both J and Y have plenty of ties."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        size = int(rng.integers(2, max_size + 1))
        yield rng.integers(0, 4, size).astype(float), rng.integers(0, 3, size).astype(float)


@pytest.mark.parametrize("seed", range(6))
def test_hit_rate_equals_brute_force_over_both_tie_breaks(seed):
    for judged, scored in small_pools(seed, 4, 6):
        for eta in (0.3, 0.5, 0.75):
            if math.floor(eta * len(judged)) < 1:
                continue
            for n in range(1, len(judged) + 1):
                got = hit_rate([judged], [scored], n, eta=eta).value
                assert got == pytest.approx(brute_hit_rate(judged, scored, n, eta), abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_mrr_and_ndcg_equal_brute_force_for_every_rank(seed):
    for judged, scored in small_pools(100 + seed, 5, 7):
        for rank in range(1, len(judged) + 1):
            assert mrr([judged], [scored], rank=rank).value == pytest.approx(
                brute_pick_gain(judged, scored, rank, lambda r: 1 / r), abs=1e-12
            )
            assert ndcg([judged], [scored], rank=rank).value == pytest.approx(
                brute_pick_gain(judged, scored, rank, lambda r: 1 / math.log2(1 + r)), abs=1e-12
            )


def test_values_average_over_prompts_of_different_sizes():
    oracle = [np.array([3.0, 1.0, 2.0]), np.array([1.0, 4.0, 2.0, 3.0, 5.0])]
    scores = [np.array([0.2, 0.1, 0.3]), np.array([5.0, 4.0, 3.0, 2.0, 1.0])]
    result = mrr(oracle, scores)
    np.testing.assert_allclose(result.per_prompt, [1 / 2, 1 / 5])
    assert result.value == pytest.approx(0.35)
    assert result.stderr == pytest.approx(np.std([0.5, 0.2], ddof=1) / np.sqrt(2))


def test_table_3_oracle_row_pins_the_definitions():
    """The oracle as its own RM: a share p of prompts with a tied top gives, for the 2nd pick,
    MRR = p + (1 - p)/2 and NDCG = p + (1 - p)/log2(3) — 0.725 and 0.7970 in Table 3 at p = 0.45."""
    rng = np.random.default_rng(7)
    tied_top = [np.array([9.0, 9.0, *rng.uniform(1, 8, 14)]) for _ in range(9)]
    single_top = [np.array([9.0, 8.5, *rng.uniform(1, 8, 14)]) for _ in range(11)]
    oracle = tied_top + single_top
    assert mrr(oracle, oracle, rank=1).value == 1.0 and ndcg(oracle, oracle, rank=1).value == 1.0
    assert mrr(oracle, oracle, rank=2).value == pytest.approx(0.725)
    assert ndcg(oracle, oracle, rank=2).value == pytest.approx(0.7970, abs=5e-5)


def test_perfect_and_random_hit_rate_as_in_the_paper():
    """Fig. 5 / Table 2: the oracle scores min(n, m)/m; an RM that ties everything scores n/N."""
    oracle = [np.random.default_rng(q).permutation(256).astype(float) for q in range(3)]
    flat = [np.zeros(256)] * 3
    for n, perfect in ((32, 0.5), (64, 1.0), (128, 1.0)):
        assert hit_rate(oracle, oracle, n).value == pytest.approx(perfect)
        assert hit_rate(oracle, flat, n).value == pytest.approx(n / 256)


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: mrr([[1.0, np.nan]], [[0.0, 1.0]]), "oracle"),
        (lambda: ndcg([[1.0, 2.0]], [[0.0, np.inf]]), "scores"),
        (lambda: mrr([[1.0, 2.0]], [[0.0, 1.0]], rank=3), "rank"),
        (lambda: mrr([[1.0, 2.0]], [[0.0, 1.0]], rank=0), "rank"),
        (lambda: hit_rate([[1.0, 2.0]], [[0.0, 1.0]], 3), "n"),
        (lambda: hit_rate([[1.0, 2.0]], [[0.0, 1.0]], 1, eta=0.25), "eta"),
        (lambda: hit_rate([[1.0, 2.0]], [[0.0, 1.0]], 1, eta=1.5), "eta"),
        (lambda: hit_rate([[1.0, 2.0]], [[0.0]], 1), "scores"),
    ],
)
def test_bad_input_is_a_metric_input_error_naming_the_parameter(call, field):
    with pytest.raises(MetricInputError, match="expected") as error:
        call()
    assert error.value.field == field


def test_docstring_examples_run():
    assert doctest.testmod(rmaudit_ranking.metrics).failed == 0
