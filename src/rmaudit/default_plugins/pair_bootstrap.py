"""The ± and interval of a pair statistic with no closed form (ECE, BT-ECE, AUROC, FPR@95, and
the shift curves' points of ECE, AUROC and FPR@95): a prompt-clustered bootstrap centred on
the estimate (rmaudit.metrics.cluster_bootstrap), an interval for the statistic's expected
value at this many prompts; its coverage is measured in ``benchmarks/pair_intervals.md``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rmaudit.components import MetricValue, PairInputs
from rmaudit.metrics.cluster_bootstrap import (
    BootstrapInterval,
    centred_interval,
    cluster_bootstrap,
    resample_counts,
)

#: what the stored params say the interval is
PROMPT_BOOTSTRAP = "prompt bootstrap"
#: the statistics are proportions
UNIT = (0.0, 1.0)
#: why a binned ECE's interval is marked ≈: measured in benchmarks/pair_intervals.md (1,000
#: data sets of 200 pairs); AUROC's (0.930-0.935) and FPR@95's (0.948-0.971) are within target
#: (shrinking the bins' gaps, a calibrated double bootstrap and a bootstrap-t were measured
#: instead and none stayed within 0.93-0.97 with a margin: benchmarks/ece_intervals_tried.md)
CONSERVATIVE_ECE = (
    "the bootstrap interval of a binned ECE held its expected value at this many pairs in "
    "0.94-0.97 of simulated data sets for a miscalibrated RM, but 0.98-0.99 for a nearly "
    "calibrated one (benchmarks/pair_intervals.md): wider than a 95% interval there"
)


def pair_resamples(inputs: PairInputs) -> np.ndarray:
    """The seeded prompt resamples, as counts per pair (a pair's shifted copies are at its
    position, so resampling a prompt takes them along)."""
    return resample_counts(inputs.chosen.size, inputs.clusters)


def pair_interval(estimate: float, resampled: np.ndarray) -> BootstrapInterval:
    """The ± and 95% interval of a statistic in [0, 1] from its values on
    :func:`pair_resamples`."""
    return centred_interval(estimate, resampled, bounds=UNIT)


def statistic_interval(
    statistic: Callable[[np.ndarray], float], inputs: PairInputs
) -> BootstrapInterval:
    """:func:`pair_interval` of a statistic with no resampled form (BT-ECE's quantile edges
    move with the resample): ``statistic(index)`` recomputes it on the pairs at ``index``."""
    return cluster_bootstrap(statistic, inputs.chosen.size, inputs.clusters, bounds=UNIT)


def bootstrapped(
    key: str,
    label: str,
    value: float,
    interval: BootstrapInterval,
    params: dict[str, Any],
    approximate: str = "",
    **fields: Any,
) -> MetricValue:
    """``value`` with its bootstrap ± and interval (``approximate``: why it is marked ≈)."""
    return MetricValue(
        key,
        label,
        value,
        interval.stderr,
        interval.ci_low,
        interval.ci_high,
        params={
            **params,
            "interval": PROMPT_BOOTSTRAP,
            **({"approximate": approximate} if approximate else {}),
        },
        **fields,
    )
