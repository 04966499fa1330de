"""A prompt-clustered bootstrap for statistics of preference pairs that have no honest
closed-form standard error (ECE, BT-ECE, AUROC, FPR@95): resample whole clusters (a prompt's
pairs, with their shifted copies) with replacement and recompute the statistic (Efron &
Tibshirani 1993, *An Introduction to the Bootstrap*; resampling clusters: Davison & Hinkley
1997, *Bootstrap Methods and their Application*, Sec. 3.8).  The ± is the resamples' standard
deviation; the interval is the percentile interval moved by the bootstrap's estimate of the
statistic's bias (Efron & Tibshirani Sec. 10.2), so that it is centred on the estimate: it
covers the statistic's **expected value at this sample size** (what another data set of as many
prompts would give on average).  A binned ECE's expected value lies above the population ECE
(every bin's |conf − acc| counts noise as miscalibration), and the plain percentile interval,
centred on estimate + bias, covers even the expected value less often than 95%
(``benchmarks/pair_intervals.py``).  Seeded, so reruns report the same interval.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._validation import check_fraction, check_integer

#: the most cells of a (resamples × items) array one step holds: resamples are drawn, and
#: statistics over them run, in blocks of rows, so a 100k-pair file needs tens of MB per
#: temporary, not gigabytes
CHUNK_CELLS = 2_000_000


@dataclass(frozen=True)
class BootstrapInterval:
    stderr: float
    ci_low: float
    ci_high: float


def resample_counts(
    items: int, clusters: Sequence[Hashable] | None = None, *, draws: int = 500, seed: int = 0
) -> np.ndarray:
    """How often each item is drawn in each of ``draws`` seeded cluster resamples, a (draws ×
    items) integer array: a cluster drawn k times counts each of its items k times.
    ``clusters[i]``: item i's cluster (None: each item its own)."""
    items = check_integer(items, "items", minimum=1)
    draws = check_integer(draws, "draws", minimum=2)
    if clusters is None:
        index = np.arange(items)
    elif len(clusters) != items:
        raise MetricInputError(
            f"expected one cluster per item ({items}), got {len(clusters)}", field="clusters"
        )
    else:
        _, index = np.unique([str(c) for c in clusters], return_inverse=True)
    n_clusters = int(index.max()) + 1
    rng = np.random.default_rng(check_integer(seed, "seed", minimum=0))
    # int32 (a count never exceeds the clusters), drawn in blocks of rows: a 100k-pair file
    # holds one 200 MB array, not several of 400 MB; the blocks draw the same stream
    counts = np.empty((draws, items), dtype=np.int32)
    rows = max(1, CHUNK_CELLS // n_clusters)
    for start in range(0, draws, rows):
        block = min(rows, draws - start)
        drawn = rng.integers(0, n_clusters, (block, n_clusters))
        drawn += n_clusters * np.arange(block)[:, None]
        per_cluster = np.bincount(drawn.ravel(), minlength=block * n_clusters)
        counts[start : start + block] = per_cluster.reshape(block, n_clusters)[:, index]
    return counts


def centred_interval(
    estimate: float,
    resampled: np.ndarray,
    *,
    ci: float = 0.95,
    bounds: tuple[float, float] = (-np.inf, np.inf),
) -> BootstrapInterval:
    """The resampled values' standard deviation, and their ``ci`` percentile interval moved by
    minus their mean's excess over ``estimate`` (the bootstrap's bias estimate, Efron &
    Tibshirani Sec. 10.2), clipped to ``bounds``; NaN where fewer than 2 are finite."""
    ci = check_fraction(ci, "ci")
    values = resampled[np.isfinite(resampled)]
    if values.size < 2 or not np.isfinite(estimate):
        return BootstrapInterval(float("nan"), float("nan"), float("nan"))
    tail = 100.0 * (1.0 - ci) / 2.0
    bias = values.mean() - estimate
    low, high = np.clip(np.percentile(values, [tail, 100.0 - tail]) - bias, *bounds)
    return BootstrapInterval(float(values.std(ddof=1)), float(low), float(high))


def cluster_bootstrap(
    statistic: Callable[[np.ndarray], float],
    items: int,
    clusters: Sequence[Hashable] | None = None,
    *,
    draws: int = 500,
    ci: float = 0.95,
    seed: int = 0,
    bounds: tuple[float, float] = (-np.inf, np.inf),
) -> BootstrapInterval:
    """``statistic(index)`` (a float from the items at ``index``, repeats allowed) over the
    ``draws`` cluster resamples of :func:`resample_counts`: their :func:`centred_interval`
    around the estimate ``statistic(all items)``.

    >>> values = np.arange(10.0)
    >>> r = cluster_bootstrap(lambda index: float(values[index].mean()), 10, draws=2000)
    >>> round(r.stderr, 1), r.ci_low < 4.5 < r.ci_high
    (0.9, True)
    """
    counts = resample_counts(items, clusters, draws=draws, seed=seed)
    everything = np.arange(counts.shape[1])
    resampled = np.array([statistic(np.repeat(everything, row)) for row in counts])
    return centred_interval(statistic(everything), resampled, ci=ci, bounds=bounds)
