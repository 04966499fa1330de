"""The synthetic regret world: each structure parameter does what its documentation claims."""

from __future__ import annotations

import numpy as np
import pytest

from rmaudit.metrics import goodhart_accuracy, pairwise_accuracy
from rmaudit.metrics.regret.world import RegretWorld

SIGMAS = (0.5, 1.0, 2.0)


def test_without_structure_it_is_the_plain_normal_model_in_the_same_draws():
    gold, proxies = RegretWorld(sigmas=SIGMAS).draw(np.random.default_rng(3), 5, 4, 2)
    rng = np.random.default_rng(3)
    expected_gold = rng.normal(size=(2, 5, 4))
    noise = rng.normal(size=(2, 3, 5, 4))
    assert np.array_equal(gold, expected_gold)
    assert np.allclose(proxies, expected_gold[:, None] + np.array(SIGMAS)[:, None, None] * noise)


def test_difficulty_spreads_the_prompts_gold_scale_lognormally_with_mean_one():
    gold, _ = RegretWorld(sigmas=SIGMAS, difficulty=0.8).draw(np.random.default_rng(0), 4000, 200)
    scale = gold.std(axis=1, ddof=1)  # ≈ s_q: 200 responses estimate it to about 5 %
    assert np.log(scale).std() == pytest.approx(0.8, abs=0.03)
    assert scale.mean() == pytest.approx(1.0, abs=0.05)
    plain, _ = RegretWorld(sigmas=SIGMAS).draw(np.random.default_rng(0), 4000, 200)
    assert np.log(plain.std(axis=1, ddof=1)).std() < 0.1


def test_disagreement_varies_each_proxys_noise_by_prompt():
    world = RegretWorld(sigmas=SIGMAS, disagreement=0.6)
    gold, proxies = world.draw(np.random.default_rng(1), 3000, 200)
    noise_scale = (proxies - gold).std(axis=-1, ddof=1) / np.array(SIGMAS)[:, None]
    for k in range(3):
        assert np.log(noise_scale[k]).std() == pytest.approx(0.6, abs=0.03)
        assert noise_scale[k].mean() == pytest.approx(1.0, abs=0.05)
    # independent over proxies: which prompts a proxy is bad on says nothing of another
    assert abs(np.corrcoef(np.log(noise_scale[0]), np.log(noise_scale[1]))[0, 1]) < 0.06


def test_response_correlation_correlates_a_prompts_responses_but_keeps_proxy_accuracy():
    rho = 0.6
    world = RegretWorld(sigmas=SIGMAS, response_correlation=rho)
    gold, proxies = world.draw(np.random.default_rng(2), 20000, 2)
    assert np.corrcoef(gold[:, 0], gold[:, 1])[0, 1] == pytest.approx(rho, abs=0.02)
    noise = proxies - gold
    assert np.corrcoef(noise[1, :, 0], noise[1, :, 1])[0, 1] == pytest.approx(rho, abs=0.02)
    # within a prompt only the response-specific part is left: spread shrinks by √(1 − ρ)
    assert np.std(gold[:, 0] - gold[:, 1]) == pytest.approx(np.sqrt(2 * (1 - rho)), rel=0.03)
    gold, proxies = world.draw(np.random.default_rng(3), 3000, 6)
    for k, sigma in enumerate(SIGMAS):  # the noise shrinks alike: accuracy is the model's
        accuracy = pairwise_accuracy(list(gold), list(proxies[k]), bootstrap=2).value
        assert accuracy == pytest.approx(goodhart_accuracy(1.0, sigma), abs=0.01)
