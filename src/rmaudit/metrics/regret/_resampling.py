"""Resampling prompts: bootstrap draws as per-prompt counts, and intervals from them."""

from __future__ import annotations

import numpy as np

def bootstrap_counts(n_prompts: int, bootstrap: int, seed: int) -> np.ndarray:
    """(bootstrap × Q) counts of each prompt in each resample (prompts drawn with replacement),
    drawn as :class:`MetricResult` draws them, so the same seed resamples the same prompts."""
    draws = np.random.default_rng(seed).integers(0, n_prompts, size=(bootstrap, n_prompts))
    offsets = n_prompts * np.arange(bootstrap)[:, None]
    counts = np.bincount((draws + offsets).ravel(), minlength=bootstrap * n_prompts)
    return counts.reshape(bootstrap, n_prompts).astype(float)


def percentile_interval(draws: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Standard deviation and percentile interval of bootstrap draws along the last axis."""
    tail = 100.0 * (1.0 - ci) / 2.0
    low, high = np.nanpercentile(draws, [tail, 100.0 - tail], axis=-1)
    return np.nanstd(draws, axis=-1, ddof=1), low, high
