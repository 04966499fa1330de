"""The ``one-to-many`` metric: RewardMATH's accuracy (strict, and with ties), the tie rate and
the MRR of the correct response among the incorrect ones (:mod:`rmaudit.metrics.one_to_many`;
docs/rewardmath.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from rmaudit import hookimpl
from rmaudit.components import ComponentOptions, Metric, MetricInputs, MetricOutput, MetricValue
from rmaudit.metrics import MetricResult
from rmaudit.metrics.one_to_many import one_to_many
from rmaudit.metrics.preference.accuracy import WALD_MINIMUM, wald_is_approximate

from .metrics import scalar

#: each figure's stored key and label
ACCURACY, WITH_TIES, TIE_RATE, MRR = (
    ("one_to_many", "acc"),
    ("one_to_many_ties", "acc w/ tie"),
    ("tie_rate", "tie rate"),
    ("mrr", "MRR"),
)


class OneToManyMetric(Metric[ComponentOptions, MetricInputs]):
    """RewardMATH's one-to-many accuracy (strictly above every incorrect response, and with
    ties), the tie rate and the MRR of the correct response (arXiv 2410.01729, Sec. 3.2)."""

    name = "one-to-many"
    Options = ComponentOptions
    bounds = (0.0, 1.0)

    def undefined_prompts(self, oracle: Sequence[np.ndarray]) -> dict[int, str]:
        undefined = super().undefined_prompts(oracle)
        for q, pool in enumerate(oracle):
            if q not in undefined and np.all(pool == pool[0]):
                undefined[q] = "all oracle scores equal (no correct response to tell apart)"
        return undefined

    def compute(self, inputs: MetricInputs) -> MetricOutput:
        found = one_to_many(inputs.oracle, inputs.scores)
        prompts = len(inputs.oracle)
        with_ties = found.accuracy_with_ties.value
        # how much of the accuracy with ties rests on ties: undefined (left out) at 0
        share = {"tie_share": found.tie_rate.value / with_ties} if with_ties > 0 else {}
        values = [
            _proportion(ACCURACY, found.accuracy, prompts),
            _proportion(WITH_TIES, found.accuracy_with_ties, prompts),
            # a tie hides which of the two is correct: fewer is better, as for a judge's ties
            replace(
                _proportion(TIE_RATE, found.tie_rate, prompts, **share), higher_is_better=False
            ),
            scalar(*MRR, found.reciprocal_rank, prompts=prompts),
        ]
        return MetricOutput(values=values)


def _proportion(
    named: tuple[str, str], result: MetricResult, prompts: int, **params
) -> MetricValue:
    """A share of prompts, marked approximate where its Wald ± is (too few on one side)."""
    if wald_is_approximate(result.value, prompts):
        params["approximate"] = (
            f"under {WALD_MINIMUM} prompts on one side: value ± 1.96·± undercovers "
            "(benchmarks/coverage_rewardmath.py)"
        )
    return scalar(*named, result, prompts=prompts, **params)


@hookimpl
def register_metrics(register):
    register(OneToManyMetric)
