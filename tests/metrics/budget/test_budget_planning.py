"""The label planner's arithmetic (rmaudit.metrics.budget.planning) against closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from rmaudit.metrics.budget.planning import Pilot, WidthTarget, Z, design_options, label_floor


def pilot(prompts: int = 30, size: int = 32, seed: int = 0, variance: float | None = None):
    rng = np.random.default_rng(seed)
    quality = [rng.normal(5, 1, size) + rng.normal(0, 0.5) for _ in range(prompts)]
    labels = [q + rng.normal(0, 0.5 / np.sqrt(10), size) for q in quality]
    sample_variance = [
        np.full(size, variance) if variance is not None else rng.uniform(0.1, 0.5, size)
        for _ in labels
    ]
    scores = {"honest": [q + rng.normal(0, 1, size) for q in quality]}
    predictions = [q + rng.normal(0, 0.8, size) for q in quality]
    return Pilot(labels, sample_variance, 10, scores, predictions)


def test_the_floor_of_best_of_n_with_even_noise_is_one_labels_noise():
    """Best-of-n's weights are non-negative and sum to 1, so with the same judge variance ν on
    every response Σ|a|√ν = √ν and the floor is ν(1 − 1/s₀) / V, V = (width / 2z)²."""
    found = label_floor(pilot(variance=0.4), WidthTarget("bon", 4), "honest", width=0.05)
    assert found == pytest.approx(0.4 * (1 - 1 / 10) / (0.05 / (2 * Z)) ** 2, rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_no_planned_option_spends_fewer_labels_than_the_floor(seed):
    piloted = pilot(seed=seed)
    targets = (WidthTarget("reta", 0.25), WidthTarget("bon", 16))
    width = {(t.name, "honest"): w for t, w in zip(targets, (0.02, 0.2), strict=True)}
    options = design_options(
        piloted, targets, width, guides=["honest"], max_prompts=None, per_prompt=32
    )
    floor = max(label_floor(piloted, t, "honest", width[(t.name, "honest")]) for t in targets)
    one_sample = [o.labels for o in options if o.samples == 1]
    assert 0 < floor <= min(one_sample)
