"""Within-prompt pairwise accuracy (Rethinking RM Evaluation, arXiv 2410.05584, App. 8.3) against a
brute-force double loop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmaudit.errors import MetricInputError
from rmaudit.metrics import pairwise_accuracy


def brute_force(oracle, scores, tie_credit):
    credit = comparable = 0.0
    for a in range(len(oracle)):
        for b in range(a + 1, len(oracle)):
            if oracle[a] == oracle[b]:
                continue
            comparable += 1
            better, worse = (a, b) if oracle[a] > oracle[b] else (b, a)
            if scores[better] > scores[worse]:
                credit += 1
            elif scores[better] == scores[worse]:
                credit += tie_credit
    return credit / comparable


@pytest.mark.parametrize(("ties", "tie_credit"), [("half", 0.5), ("loss", 0.0)])
def test_equals_double_loop(ties, tie_credit):
    rng = np.random.default_rng(0)
    sizes = [2, 5, 17, 17, 40, 300]
    oracle = [rng.integers(0, 6, size).astype(float) for size in sizes]  # oracle ties too
    scores = [rng.integers(0, 4, size).astype(float) for size in sizes]  # and RM ties
    oracle[0] = np.array([1.0, 2.0])
    result = pairwise_accuracy(oracle, scores, ties=ties)
    expected = [brute_force(o, s, tie_credit) for o, s in zip(oracle, scores, strict=True)]
    np.testing.assert_allclose(result.per_prompt, expected, rtol=0, atol=1e-14)
    assert result.value == pytest.approx(np.mean(expected), abs=1e-14)


def test_reference_rms():
    rng = np.random.default_rng(1)
    oracle = [rng.normal(size=30) for _ in range(4)]
    assert pairwise_accuracy(oracle, oracle).value == 1.0
    assert pairwise_accuracy(oracle, [-o for o in oracle]).value == 0.0
    constant = [np.zeros(30) for _ in range(4)]
    assert pairwise_accuracy(oracle, constant, ties="half").value == 0.5
    assert pairwise_accuracy(oracle, constant, ties="loss").value == 0.0


def test_prompt_without_a_comparable_pair_is_named():
    oracle = [np.array([1.0, 2.0]), np.array([3.0, 3.0, 3.0])]
    scores = [np.array([0.0, 1.0]), np.array([0.0, 1.0, 2.0])]
    with pytest.raises(MetricInputError, match="prompt 1") as raised:
        pairwise_accuracy(oracle, scores)
    assert raised.value.prompt_index == 1
    assert raised.value.field == "oracle"


def test_unknown_tie_policy():
    with pytest.raises(MetricInputError, match="expected 'half' or 'loss', got 'draw'"):
        pairwise_accuracy([np.array([1.0, 2.0])], [np.array([1.0, 2.0])], ties="draw")


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_invariant_to_permuting_responses_with_their_scores(data):
    size = data.draw(st.integers(2, 15))
    oracle = np.array(data.draw(st.lists(st.integers(0, 4), min_size=size, max_size=size)), float)
    if np.all(oracle == oracle[0]):
        oracle[0] += 1.0
    scores = np.array(data.draw(st.lists(st.integers(0, 3), min_size=size, max_size=size)), float)
    order = list(data.draw(st.permutations(range(size))))
    for ties in ("half", "loss"):
        before = pairwise_accuracy([oracle], [scores], ties=ties).value
        after = pairwise_accuracy([oracle[order]], [scores[order]], ties=ties).value
        assert after == pytest.approx(before, abs=1e-14)
