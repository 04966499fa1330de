"""The ± and interval of a pair statistic with no closed form (ECE, BT-ECE, AUROC, FPR@95):
a prompt-clustered bootstrap (rmaudit.metrics.cluster_bootstrap), and where its measured
coverage is off 95% the reason, stored as the value's ``approximate`` (shown ≈)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rmaudit.components import MetricValue, PairInputs
from rmaudit.metrics.cluster_bootstrap import cluster_bootstrap

_BIASED = (
    "{name}'s bootstrap interval held the population {name} in {share} of simulated data sets "
    "(benchmarks/pair_intervals.md): a binned ECE is biased upward at finite n, so read its "
    "± as the spread over prompts, not an interval for the population value"
)
#: measured in benchmarks/pair_intervals.md (1,000 data sets of 200 pairs); AUROC's covered
#: 0.947, within the target
APPROXIMATE = {
    "ece": _BIASED.format(name="ECE", share="0.80"),
    "bt_ece": _BIASED.format(name="BT-ECE", share="0.22"),
    "ood_fpr95": "FPR@95's bootstrap interval held the population value in 0.986 of simulated "
    "data sets (benchmarks/pair_intervals.md): wider than a 95% interval",
}


def bootstrapped(
    key: str,
    label: str,
    value: float,
    statistic: Callable[[np.ndarray], float],
    inputs: PairInputs,
    params: dict[str, Any],
    **fields: Any,
) -> MetricValue:
    """``value`` with the bootstrap's standard error and 95% interval, resampling prompts
    (``statistic(index)`` recomputes it on the pairs at ``index``)."""
    interval = cluster_bootstrap(statistic, inputs.chosen.size, inputs.clusters)
    note = APPROXIMATE.get(key)
    return MetricValue(
        key,
        label,
        value,
        interval.stderr,
        interval.ci_low,
        interval.ci_high,
        params={
            **params,
            "interval": "prompt bootstrap",
            **({"approximate": note} if note else {}),
        },
        **fields,
    )
