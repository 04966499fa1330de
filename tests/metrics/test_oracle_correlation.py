"""The pooled within-prompt correlation of a model's scores with the oracle's labels
(``oracle-correlation``; docs/budget.md): against an independent computation (scipy's Pearson
correlation of the labels centred within their prompt, and a brute-force jackknife)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rmaudit.errors import MetricInputError
from rmaudit.metrics.oracle_correlation import within_prompt_correlation


def world(prompts: int, seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 9, prompts)
    quality = [rng.normal(0, rng.uniform(0.5, 2), n) for n in sizes]
    labels = [q + rng.normal(0, 3) for q in quality]  # each prompt its own leniency
    ratings = [0.8 * q + rng.normal(0, 0.6, q.size) for q in quality]
    return labels, ratings


def centred(arrays: list[np.ndarray]) -> np.ndarray:
    return np.concatenate([a - a.mean() for a in arrays])


def test_the_value_is_pearsons_on_labels_centred_within_their_prompt():
    labels, ratings = world(40)
    found = within_prompt_correlation(labels, ratings)
    assert found.value == pytest.approx(
        stats.pearsonr(centred(labels), centred(ratings)).statistic, abs=1e-12
    )
    assert found.prompts == 40
    assert found.ci_low < found.value < found.ci_high


def test_a_prompts_leniency_changes_nothing():
    labels, ratings = world(30, seed=1)
    shifted = [pool + 10.0 * q for q, pool in enumerate(labels)]
    assert within_prompt_correlation(shifted, ratings).value == pytest.approx(
        within_prompt_correlation(labels, ratings).value, abs=1e-12
    )


def test_the_interval_is_the_jackknifes_on_fishers_z_scale():
    labels, ratings = world(25, seed=2)
    found = within_prompt_correlation(labels, ratings)
    left_out = np.array(
        [
            stats.pearsonr(
                centred(labels[:q] + labels[q + 1 :]), centred(ratings[:q] + ratings[q + 1 :])
            ).statistic
            for q in range(25)
        ]
    )
    z = np.arctanh(left_out)
    half = stats.t.ppf(0.975, 24) * np.sqrt(24 / 25 * np.sum((z - z.mean()) ** 2))
    centre = np.arctanh(found.value)
    assert (found.ci_low, found.ci_high) == pytest.approx(
        (np.tanh(centre - half), np.tanh(centre + half)), abs=1e-10
    )
    assert found.stderr == pytest.approx(
        np.sqrt(24 / 25 * np.sum((left_out - left_out.mean()) ** 2))
    )


def test_scores_that_do_not_vary_are_an_input_error():
    labels, _ = world(5)
    with pytest.raises(MetricInputError, match="vary"):
        within_prompt_correlation(labels, [np.ones_like(pool) for pool in labels])
    with pytest.raises(MetricInputError, match="finite"):
        within_prompt_correlation(labels, [np.full_like(pool, np.nan) for pool in labels])
