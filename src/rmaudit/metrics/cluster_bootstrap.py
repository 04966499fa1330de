"""A prompt-clustered percentile bootstrap for statistics of preference pairs that have no
honest closed-form standard error (ECE, BT-ECE, AUROC, FPR@95): resample whole clusters (a
prompt's pairs, with their shifted copies) with replacement, recompute the statistic, and
report the resamples' standard deviation and percentile interval (Efron & Tibshirani 1993,
*An Introduction to the Bootstrap*, Ch. 13; resampling clusters: Davison & Hinkley 1997,
*Bootstrap Methods and their Application*, Sec. 3.8).  Seeded, so reruns report the same
interval.  Its coverage is measured, not assumed (``benchmarks/pair_intervals.py``): a binned
ECE is biased upward at finite n, so its interval misses the population ECE far more often
than 5%, and callers mark it ≈ with the measured coverage.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._validation import check_fraction, check_integer


@dataclass(frozen=True)
class BootstrapInterval:
    stderr: float
    ci_low: float
    ci_high: float


def _cluster_members(items: int, clusters: Sequence[Hashable] | None) -> list[np.ndarray]:
    if clusters is None:
        return [np.array([i]) for i in range(items)]
    if len(clusters) != items:
        raise MetricInputError(
            f"expected one cluster per item ({items}), got {len(clusters)}", field="clusters"
        )
    _, index = np.unique([str(c) for c in clusters], return_inverse=True)
    order = np.argsort(index, kind="stable")
    return np.split(order, np.cumsum(np.bincount(index))[:-1])


def cluster_bootstrap(
    statistic: Callable[[np.ndarray], float],
    items: int,
    clusters: Sequence[Hashable] | None = None,
    *,
    draws: int = 500,
    ci: float = 0.95,
    seed: int = 0,
) -> BootstrapInterval:
    """``statistic(index)`` (a float from the items at ``index``, repeats allowed) over
    ``draws`` cluster resamples: their standard deviation and ``ci`` percentile interval.
    ``clusters[i]``: item i's cluster (None: each item its own).

    >>> values = np.arange(10.0)
    >>> r = cluster_bootstrap(lambda index: float(values[index].mean()), 10, draws=2000)
    >>> round(r.stderr, 1), r.ci_low < 4.5 < r.ci_high
    (0.9, True)
    """
    items = check_integer(items, "items", minimum=1)
    draws = check_integer(draws, "draws", minimum=2)
    ci = check_fraction(ci, "ci")
    members = _cluster_members(items, clusters)
    rng = np.random.default_rng(check_integer(seed, "seed", minimum=0))
    values = np.array(
        [
            statistic(
                np.concatenate([members[c] for c in rng.integers(0, len(members), len(members))])
            )
            for _ in range(draws)
        ]
    )
    values = values[np.isfinite(values)]
    if values.size < 2:
        return BootstrapInterval(float("nan"), float("nan"), float("nan"))
    tail = 100.0 * (1.0 - ci) / 2.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return BootstrapInterval(float(values.std(ddof=1)), float(low), float(high))
