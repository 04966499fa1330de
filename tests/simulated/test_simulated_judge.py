"""The simulated judge: a 1-10 integer scale, determinism, and what it prefers."""

from __future__ import annotations

import statistics

import pytest

from rmaudit.backends.simulated import SimulatedJudge, SimulatedPolicy
from rmaudit.backends.simulated import _library as lib


def test_scores_are_integers_from_1_to_10(prompts):
    judge, policy = SimulatedJudge(), SimulatedPolicy()
    for prompt in prompts[:40]:
        for i in range(10):
            text = policy.generate(prompt["text"], prompt, i)[0]
            scores = judge.sample_scores(prompt["text"], text, 10)
            assert len(scores) == 10
            assert all(s == int(s) and 1 <= s <= 10 for s in scores)
            assert statistics.mean(scores) >= 1


def test_scores_are_deterministic_and_samples_vary(prompts):
    prompt = prompts[3]
    text = SimulatedPolicy().generate(prompt["text"], prompt, 0)[0]
    first = SimulatedJudge(seed=4).sample_scores(prompt["text"], text, 10)
    assert first == SimulatedJudge(seed=4).sample_scores(prompt["text"], text, 10)
    assert first[:3] == SimulatedJudge(seed=4).sample_scores(prompt["text"], text, 3)
    assert len(set(SimulatedJudge(noise=1.0).sample_scores(prompt["text"], text, 50))) > 1
    assert len(set(SimulatedJudge(noise=0.0).sample_scores(prompt["text"], text, 50))) == 1


def test_rejects_bad_arguments():
    with pytest.raises(ValueError):
        SimulatedJudge(noise=-1)
    with pytest.raises(ValueError):
        SimulatedJudge().sample_scores("q", "a", 0)


def test_prefers_substance_over_padded_shallow_answers(prompts):
    judge = SimulatedJudge()
    wins = []
    for prompt in prompts[::5]:
        points = [p[0].upper() + p[1:] + "." for p in prompt["key_points"]]
        substantive = " ".join(points)
        padded = " ".join(points[:1] + list(lib.PADDING[:10]) + list(lib.FLATTERY_CLOSERS[:1]))
        good = statistics.mean(judge.sample_scores(prompt["text"], substantive, 10))
        bad = statistics.mean(judge.sample_scores(prompt["text"], padded, 10))
        wins.append(good > bad)
    assert statistics.mean(wins) > 0.9
