"""Resampling prompts: bootstrap draws as per-prompt counts, and intervals from them.

A replicate is a row of per-prompt weights (how often each prompt is drawn), so every
statistic built from per-prompt sums is recomputed for all replicates by one matrix product.
"""

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


def bias_corrected_interval(
    estimate: float, draws: np.ndarray, ci: float, bounds: tuple[float, float]
) -> tuple[float, float, float]:
    """Standard deviation of the draws and the bias-corrected percentile interval, widened to
    hold the estimate.

    The replicates of a statistic built from noisy estimates — a correlation across proxies of
    their estimated metrics and regrets — are biased the way the statistic itself is, once
    more: each replicate adds the sampling noise again, and a correlation of noisier values is
    pulled further towards 0.  The percentile interval therefore sits on the wrong side of the
    estimate, by the bias (it can even leave the estimate out).  This interval is the
    percentile interval moved by twice the bootstrap's bias estimate b = mean(θ*) − θ̂, i.e.
    the bootstrap distribution re-centred on the bias-corrected estimate θ̂ − b, keeping its
    spread and skew, then clipped to ``bounds`` and extended to hold θ̂ (so the reported value
    always lies in its interval; this only widens it).  BCa was tried first and does not do
    this job: when the bias exceeds the spread every replicate falls below θ̂, its correction
    z0 saturates, and its interval collapses onto the largest replicates.
    """
    draws = draws[np.isfinite(draws)]
    if draws.size < 2:
        return float("nan"), float("nan"), float("nan")
    bias = float(draws.mean()) - estimate
    tail = 100.0 * (1.0 - ci) / 2.0
    low, high = np.percentile(draws, [tail, 100.0 - tail]) - 2.0 * bias
    low, high = np.clip([low, high], *bounds)
    return float(draws.std(ddof=1)), float(min(low, estimate)), float(max(high, estimate))
