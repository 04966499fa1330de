"""A small version of the world reproduces the RETA paper's phenomena (seeds/000, Sec. 4).

30 prompts x 64 responses, fixed seeds.  RETA here is the limit form (mean oracle score of
the RM's top ceil(eta*N) responses over the prompt's mean, averaged over prompts), computed
independently of ``rmaudit.metrics``.  Margins are several standard deviations of the
seed-to-seed spread measured while tuning, so they are not knife-edge.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rmaudit.backends.simulated import SimulatedJudge, SimulatedPolicy, SimulatedRewardModel

N_PROMPTS, N_RESPONSES = 30, 64

# The recipe's five reward models; the ensemble is the mean of three honest members.
RMS = {
    "honest": {"bias": "none"},
    "length": {"bias": "length"},
    "flattery": {"bias": "flattery"},
    "weak": {"bias": "none", "signal": 0.4, "noise": 1.5},
}
ENSEMBLE_SEEDS = (1, 2, 3)


@pytest.fixture(scope="module")
def world(prompts):
    chosen = prompts[::10][:N_PROMPTS]
    policy, judge = SimulatedPolicy(seed=0), SimulatedJudge(seed=0)
    texts = [[policy.generate(p["text"], p, i)[0] for i in range(N_RESPONSES)] for p in chosen]
    oracle = np.array(
        [
            [np.mean(judge.sample_scores(p["text"], t, 10)) for t in row]
            for p, row in zip(chosen, texts, strict=True)
        ]
    )

    def scores(rm):
        return np.array(
            [[rm.score(p["text"], t) for t in row] for p, row in zip(chosen, texts, strict=True)]
        )

    rm_scores = {name: scores(SimulatedRewardModel(**options)) for name, options in RMS.items()}
    members = [scores(SimulatedRewardModel(seed=s)) for s in ENSEMBLE_SEEDS]
    rm_scores["ensemble"] = np.mean(members, axis=0)
    return oracle, rm_scores, members


def reta(oracle, scores, eta):
    k = max(1, math.ceil(eta * oracle.shape[1]))
    top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return float(
        np.mean(np.take_along_axis(oracle, top, axis=1).mean(axis=1) / oracle.mean(axis=1))
    )


def pairwise_accuracy(oracle, scores):
    correct = total = 0
    for j, y in zip(oracle, scores, strict=True):
        better = j[:, None] > j[None, :]
        correct += np.sum(better & (y[:, None] > y[None, :]))
        total += np.sum(better)
    return correct / total


def test_the_length_biased_rm_is_reward_hacked_at_small_eta(world):
    oracle, scores, _ = world
    # Its top-1 picks are padded, shallow answers: worse than its top eighth.
    assert reta(oracle, scores["length"], 1 / 64) < reta(oracle, scores["length"], 1 / 8) - 0.05
    # The honest RM keeps improving as eta shrinks.
    assert reta(oracle, scores["honest"], 1 / 64) > reta(oracle, scores["honest"], 1 / 4) + 0.02


def test_close_pairwise_accuracy_hides_diverging_reta_curves(world):
    oracle, scores, _ = world
    honest, length = scores["honest"], scores["length"]
    assert abs(pairwise_accuracy(oracle, honest) - pairwise_accuracy(oracle, length)) < 0.02
    assert reta(oracle, honest, 1 / 64) > reta(oracle, length, 1 / 64) + 0.1


def test_the_ensemble_beats_each_member_at_small_eta(world):
    oracle, scores, members = world
    for eta in (1 / 4, 1 / 16):
        best_member = max(reta(oracle, m, eta) for m in members)
        assert reta(oracle, scores["ensemble"], eta) > best_member + 0.01


def test_the_weak_rm_is_worst_but_better_than_random(world):
    oracle, scores, members = world
    weak = reta(oracle, scores["weak"], 1 / 4)
    assert weak > 1.03
    assert weak < min(reta(oracle, m, 1 / 4) for m in members) - 0.05
    accuracies = {name: pairwise_accuracy(oracle, s) for name, s in scores.items()}
    assert min(accuracies, key=accuracies.get) == "weak"


def test_pairwise_accuracies_are_realistic(world):
    oracle, scores, _ = world
    for name, s in scores.items():
        assert 0.55 < pairwise_accuracy(oracle, s) < 0.85, name
