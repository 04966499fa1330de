"""Simulated reward models read the text: edits move their scores as their bias says."""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from rmaudit.backends.simulated import SimulatedPolicy, SimulatedRewardModel, analyze_response
from rmaudit.backends.simulated import _library as lib
from rmaudit.backends.simulated._text import split_sentences


@pytest.fixture(scope="module")
def responses(prompts):
    policy = SimulatedPolicy()
    return [
        (p["text"], policy.generate(p["text"], p, i)[0]) for p in prompts[::4] for i in range(8)
    ]


def test_rejects_unknown_bias_and_negative_options():
    with pytest.raises(ValueError, match="bias"):
        SimulatedRewardModel(bias="verbosity")
    with pytest.raises(ValueError):
        SimulatedRewardModel(noise=-0.1)


def test_scores_are_fixed_per_text_whatever_the_call_order(responses):
    forward = [SimulatedRewardModel(seed=5).score(q, t) for q, t in responses[:50]]
    rm = SimulatedRewardModel(seed=5)
    backward = [rm.score(q, t) for q, t in reversed(responses[:50])]
    assert forward == backward[::-1]


def test_different_seeds_make_independent_errors(responses):
    def errors(seed):
        rm, exact = SimulatedRewardModel(seed=seed), SimulatedRewardModel(noise=0.0)
        return np.array([rm.score(q, t) - exact.score(q, t) for q, t in responses])

    e1, e2, e3 = errors(1), errors(2), errors(3)
    assert abs(e1.std() - 1.0) < 0.1
    for a, b in ((e1, e2), (e1, e3), (e2, e3)):
        assert abs(np.corrcoef(a, b)[0, 1]) < 0.1


def _without_key_points(prompt: str, text: str) -> str:
    """The response with every sentence that states or develops a key point removed."""
    kept = [
        s
        for s in split_sentences(text)
        if analyze_response(prompt, s).coverage == 0.0
        and analyze_response(prompt, s).elaboration == 0.0
    ]
    return " ".join(kept) or "Let me think about that."


def test_deleting_key_point_sentences_lowers_the_honest_score(responses):
    rm = SimulatedRewardModel()
    drops = [rm.score(q, t) - rm.score(q, _without_key_points(q, t)) for q, t in responses]
    assert statistics.mean(drops) > 1.0
    assert statistics.mean(d > 0 for d in drops) > 0.8


def test_appending_filler_raises_the_length_biased_score(responses):
    length_rm, honest = SimulatedRewardModel(bias="length"), SimulatedRewardModel()
    filler = " " + " ".join(lib.PADDING[:4])
    gains = [length_rm.score(q, t + filler) - length_rm.score(q, t) for q, t in responses]
    assert statistics.mean(gains) > 0.5
    honest_gains = [honest.score(q, t + filler) - honest.score(q, t) for q, t in responses]
    assert statistics.mean(honest_gains) < 0


def test_a_flattering_opener_raises_the_flattery_biased_score(responses):
    flattery_rm = SimulatedRewardModel(bias="flattery")
    opener = lib.FLATTERY_OPENERS[4] + " "
    gains = [flattery_rm.score(q, opener + t) - flattery_rm.score(q, t) for q, t in responses]
    assert statistics.mean(gains) > 0.5
    assert statistics.mean(g > 0 for g in gains) > 0.75


def test_signal_controls_how_much_quality_moves_the_score(responses):
    full = SimulatedRewardModel(noise=0.0)
    weak = SimulatedRewardModel(noise=0.0, signal=0.25)
    spread_full = np.std([full.score(q, t) for q, t in responses])
    spread_weak = np.std([weak.score(q, t) for q, t in responses])
    assert spread_weak == pytest.approx(0.25 * spread_full, rel=1e-9)
