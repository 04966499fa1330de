"""The ranking metrics as rmaudit components, registered through ``register_metrics``.

Recipe use::

    [[metrics]]
    name = "hit-rate"      # HR@n for n = m/2, m, 2m with m = ⌊η N⌋ (32, 64, 128 for N = 256)
    eta = 0.25

    [[metrics]]
    name = "mrr"           # MRR of the RM's best and 2nd-best response (Table 3)

    [[metrics]]
    name = "ndcg"
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from pydantic import Field, field_validator

from rmaudit import hookimpl
from rmaudit.components import ComponentOptions, Metric, MetricInputs, MetricOutput, MetricValue
from rmaudit.errors import BadInput
from rmaudit.metrics import MetricResult
from rmaudit_ranking.metrics import hit_rate, mrr, ndcg


def _value(key: str, label: str, result: MetricResult, **params) -> MetricValue:
    return MetricValue(
        key=key,
        label=label,
        value=result.value,
        stderr=result.stderr,
        ci_low=result.ci_low,
        ci_high=result.ci_high,
        params=params,
        per_prompt=result.per_prompt,
    )


def _at_least_one(values: list[int] | None) -> list[int] | None:
    for value in values or ():
        if value < 1:
            raise ValueError(f"expected integers >= 1, got {value}")
    return values


class HitRateOptions(ComponentOptions):
    eta: float = Field(
        0.25, gt=0, lt=1, description="the oracle's top-η quantile is the ground truth"
    )
    n: list[int] | None = Field(
        None, min_length=1, description="RM top-n cut-offs; default m/2, m, 2m with m = ⌊ηN⌋"
    )

    _check_n = field_validator("n")(_at_least_one)


class HitRate(Metric):
    """Hit Rate@n: share of the oracle's top-η responses found in the RM's top n (RETA App. A.1,
    Fig. 5)."""

    name = "hit-rate"
    Options = HitRateOptions
    bounds = (0.0, 1.0)

    def check_pool_size(self, per_prompt: int) -> None:
        if int(self.options.eta * per_prompt) < 1:
            raise BadInput(
                f"expected η·N >= 1 for N = {per_prompt} responses per prompt, "
                f"got η·N = {self.options.eta * per_prompt:g}",
                field="eta",
                value=self.options.eta,
            )
        for n in self.options.n or ():
            if n > per_prompt:
                raise BadInput(
                    f"expected n <= the {per_prompt} responses per prompt, got {n}",
                    field="n",
                    value=n,
                )

    def cutoffs(self, per_prompt: int) -> list[int]:
        """The n to report: the options' list, else half, once and twice the truth-set size."""
        if self.options.n is not None:
            return list(self.options.n)
        m = int(self.options.eta * per_prompt)
        return sorted({n for n in (m // 2, m, 2 * m) if 1 <= n <= per_prompt})

    def compute(self, inputs: MetricInputs) -> MetricOutput:
        eta = self.options.eta
        ns = self.cutoffs(min(len(pool) for pool in inputs.oracle))
        return MetricOutput(
            values=[
                _value(
                    f"hr@{n}",
                    f"HR@{n}",
                    hit_rate(inputs.oracle, inputs.scores, n, eta=eta),
                    n=n,
                    eta=eta,
                )
                for n in ns
            ]
        )


class RankOptions(ComponentOptions):
    ranks: list[int] = Field(
        [1, 2], min_length=1, description="which of the RM's choices: 1 = best, 2 = 2nd best, ..."
    )

    _check_ranks = field_validator("ranks")(_at_least_one)


def _ordinal(rank: int) -> str:
    return {1: "best", 2: "2nd", 3: "3rd"}.get(rank, f"{rank}th")


class _RankMetric(Metric):
    """Shared shape of MRR and NDCG: one value per requested rank of the RM's choice."""

    Options = RankOptions
    bounds = (0.0, 1.0)
    #: set by subclasses: the pure function (mrr or ndcg) and the column title
    function: ClassVar[Callable[..., MetricResult]]
    title: ClassVar[str]

    def check_pool_size(self, per_prompt: int) -> None:
        for rank in self.options.ranks:
            if rank > per_prompt:
                raise BadInput(
                    f"expected rank <= the {per_prompt} responses per prompt, got {rank}",
                    field="ranks",
                    value=rank,
                )

    def compute(self, inputs: MetricInputs) -> MetricOutput:
        return MetricOutput(
            values=[
                _value(
                    self.name if rank == 1 else f"{self.name}{rank}",
                    self.title if rank == 1 else f"{self.title} ({_ordinal(rank)})",
                    self.function(inputs.oracle, inputs.scores, rank=rank),
                    rank=rank,
                )
                for rank in self.options.ranks
            ]
        )


class MeanReciprocalRank(_RankMetric):
    """MRR: mean of 1/(oracle rank) of the RM's best and 2nd-best response (RETA App. A.1, Table
    3)."""

    name = "mrr"
    title = "MRR"
    function = staticmethod(mrr)


class NormalizedDCG(_RankMetric):
    """NDCG: mean of 1/log2(1 + oracle rank) of the RM's best and 2nd-best response (RETA App. A.1,
    Table 3)."""

    name = "ndcg"
    title = "NDCG"
    function = staticmethod(ndcg)


@hookimpl
def register_metrics(register):
    for cls in (HitRate, MeanReciprocalRank, NormalizedDCG):
        register(cls)
