"""Built-in metrics as plugins: thin wrappers over the pure functions of ``rmaudit.metrics``."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Literal

import numpy as np
from pydantic import Field, field_validator

from rmaudit import hookimpl
from rmaudit.components import (
    ComponentOptions,
    CurveValue,
    Metric,
    MetricInputs,
    MetricOutput,
    MetricValue,
)
from rmaudit.components.vocabulary import RETA_CURVE, best_of_n_curve_key, best_of_n_key, reta_key
from rmaudit.display.formatting import eta_label
from rmaudit.errors import BadInput
from rmaudit.metrics import (
    CurveResult,
    MetricResult,
    best_k_of_n,
    best_of_n,
    best_of_n_curve,
    default_etas,
    pairwise_accuracy,
    reta,
    reta_curve,
    reta_n_range,
)
from rmaudit.metrics.budget import (
    budget_best_of_n,
    budget_best_of_n_curve,
    budget_pairwise_accuracy,
    budget_reta,
    budget_reta_curve,
)


def design_kwargs(inputs: MetricInputs) -> dict:
    """The label design's arguments of the ``rmaudit.metrics.budget`` estimators."""
    design = inputs.design
    assert design is not None, "the estimators of a label budget run on budgeted inputs only"
    return {
        "design": design.kind,
        "predictions": design.predictions,
        "auxiliary": design.auxiliary,
    }


def scalar(key: str, label: str, result: MetricResult, **params) -> MetricValue:
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


def curve(key: str, label: str, x_label: str, result: CurveResult, **params) -> CurveValue:
    return CurveValue(
        key=key,
        label=label,
        x_label=x_label,
        x=result.x,
        value=result.value,
        stderr=result.stderr,
        ci_low=result.ci_low,
        ci_high=result.ci_high,
        params=params,
    )


class RetaEstimation(ComponentOptions):
    method: Literal["exact", "mc"] = "exact"
    normalize: bool = Field(True, description="divide by the prompt's mean oracle score (Sec. 4.3)")
    n: int | None = Field(
        None, ge=1, description="subset size; default: every n in [3N^(2/3), 5N^(2/3)]"
    )
    resamples: int = Field(200, ge=1, description="Monte-Carlo resamples per n (method = 'mc')")
    replace: bool = False
    seed: int = 0

    def estimator_kwargs(self) -> dict:
        return self.model_dump()

    def budget_kwargs(self, inputs: MetricInputs) -> dict:
        """The options of the labelled-subset estimator (always exact: docs/budget.md)."""
        return {
            "normalize": self.normalize,
            "n": self.n,
            "seed": self.seed,
            **design_kwargs(inputs),
        }

    def check_n(self, per_prompt: int, etas: np.ndarray) -> None:
        if self.n is not None and self.n > per_prompt:
            raise BadInput(
                f"n larger than the {per_prompt} responses per prompt", field="n", value=self.n
            )
        smallest_n = self.n if self.n is not None else int(reta_n_range(per_prompt)[0])
        too_small = [float(e) for e in etas if e * smallest_n < 1]
        if too_small:
            raise BadInput(
                f"η·n < 1 for n = {smallest_n}; the smallest usable η is 1/{smallest_n}",
                field="eta",
                value=too_small[0],
            )

    def undefined(self, oracle: Sequence[np.ndarray], etas: np.ndarray | None) -> dict[int, str]:
        """RETA's own undefined prompts: a mean oracle score ≤ 0 (the normaliser), fewer than
        n responses, or η·n < 1 for every n of the prompt's range (Eq. 6 needs ⌊η n⌋ ≥ 1)."""
        undefined = {}
        for q, pool in enumerate(oracle):
            if len(pool) < 2:
                undefined[q] = "fewer than two responses"
            elif self.n is not None and len(pool) < self.n:
                undefined[q] = f"fewer than n = {self.n} responses"
            elif self.normalize and float(np.nanmean(pool)) <= 0:
                undefined[q] = "mean oracle score not positive (the RETA normaliser)"
            elif etas is not None:
                smallest_n = self.n or int(reta_n_range(len(pool))[0])
                if float(np.min(etas)) * smallest_n < 1:
                    undefined[q] = f"η·n < 1 with n = {smallest_n} (too few responses)"
        return undefined


class RetaOptions(RetaEstimation):
    eta: float = Field(0.25, gt=0, lt=1, description="quantile η of the RM's top responses")


class Reta(Metric[RetaOptions, MetricInputs]):
    """RETA(η): mean oracle score of the RM's top-η responses over the prompt mean (RETA paper Eq.
    5-6)."""

    name = "reta"
    Options = RetaOptions
    bounds = (0.0, None)
    supports_label_budget = True

    def check_pool_size(self, per_prompt: int) -> None:
        self.options.check_n(per_prompt, np.array([self.options.eta]))

    def undefined_prompts(self, oracle: Sequence[np.ndarray]) -> dict[int, str]:
        return self.options.undefined(oracle, np.array([self.options.eta]))

    def compute(self, inputs: MetricInputs) -> MetricOutput:
        kwargs = self.options.estimator_kwargs()
        eta = kwargs.pop("eta")
        if inputs.design is None:
            result = reta(inputs.oracle, inputs.scores, eta, **kwargs)
        else:
            result = budget_reta(
                inputs.oracle,
                inputs.scores,
                inputs.design.inclusion,
                eta,
                **self.options.budget_kwargs(inputs),
            )
        prefix = "RETA" if self.options.normalize else "RETA-unnorm"
        return MetricOutput(
            values=[scalar(reta_key(eta), f"{prefix}({eta_label(eta)})", result, eta=eta)]
        )


class RetaCurveOptions(RetaEstimation):
    etas: list[float] | None = Field(None, description="η values; default: 15 log-spaced from 1/2")

    @field_validator("etas")
    @classmethod
    def _etas_in_unit_interval(cls, etas):
        for value in etas or ():
            if not 0 < value < 1:
                raise ValueError(f"every η must lie in (0, 1), got {value}")
        return etas


class RetaCurve(Metric[RetaCurveOptions, MetricInputs]):
    """The RETA curve: RETA(η) at 15 η from 1/2 down to the smallest estimable (RETA paper Sec.
    4.2)."""

    name = "reta-curve"
    Options = RetaCurveOptions
    bounds = (0.0, None)
    supports_label_budget = True

    def check_pool_size(self, per_prompt: int) -> None:
        if self.options.etas is not None:
            self.options.check_n(per_prompt, np.array(self.options.etas))

    def undefined_prompts(self, oracle: Sequence[np.ndarray]) -> dict[int, str]:
        # the default η grid follows the smallest pool kept, so only given ones can exclude
        return self.options.undefined(
            oracle, None if self.options.etas is None else np.array(self.options.etas)
        )

    def compute(self, inputs: MetricInputs) -> MetricOutput:
        kwargs = self.options.estimator_kwargs()
        etas = kwargs.pop("etas")
        if inputs.design is None:
            result = reta_curve(inputs.oracle, inputs.scores, etas, **kwargs)
        else:
            if etas is None:
                etas = default_etas(min(len(pool) for pool in inputs.oracle))
            result = budget_reta_curve(
                inputs.oracle,
                inputs.scores,
                inputs.design.inclusion,
                etas,
                **self.options.budget_kwargs(inputs),
            )
        return MetricOutput(curves=[curve(RETA_CURVE, "RETA curve", "eta", result)])


class BestOfNOptions(ComponentOptions):
    rank: int = Field(1, ge=1, description="1: best-of-n; 2: 2nd-best-of-n")
    n: list[int] | None = Field(None, description="curve points; default: powers of two up to N")
    report: list[int] | None = Field(None, description="n shown as scalars; default: 4, 16, 64")

    @field_validator("n", "report")
    @classmethod
    def _positive(cls, values):
        for value in values or ():
            if value < 1:
                raise ValueError(f"every n must be >= 1, got {value}")
        return values


class BestOfN(Metric[BestOfNOptions, MetricInputs]):
    """Best-of-n: the oracle score of the RM's pick among n random responses (RETA paper Eq. 1, App.
    B.3)."""

    name = "best-of-n"
    Options = BestOfNOptions
    supports_label_budget = True

    def check_pool_size(self, per_prompt: int) -> None:
        for field in ("n", "report"):
            for value in getattr(self.options, field) or ():
                if value > per_prompt:
                    raise BadInput(
                        f"n larger than the {per_prompt} responses per prompt",
                        field=field,
                        value=value,
                    )
                if value < self.options.rank:
                    raise BadInput(
                        f"n smaller than rank {self.options.rank}", field=field, value=value
                    )

    def undefined_prompts(self, oracle: Sequence[np.ndarray]) -> dict[int, str]:
        largest = max([*(self.options.n or ()), *(self.options.report or ()), 2])
        return {
            q: f"fewer than n = {largest} responses"
            if len(pool) >= 2
            else "fewer than two responses"
            for q, pool in enumerate(oracle)
            if len(pool) < largest
        }

    def _points(self, per_prompt: int) -> tuple[list[int], list[int]]:
        rank = self.options.rank
        ns = self.options.n or [
            2**i for i in range(per_prompt.bit_length()) if rank <= 2**i <= per_prompt
        ]
        report = self.options.report or [n for n in (4, 16, 64) if rank <= n <= per_prompt]
        return ns, report

    def compute(self, inputs: MetricInputs) -> MetricOutput:
        rank = self.options.rank
        ns, report = self._points(min(len(j) for j in inputs.oracle))
        name = "BoN" if rank == 1 else ("2nd-BoN" if rank == 2 else f"{rank}th-BoN")
        key = best_of_n_key(rank)
        if inputs.design is None:
            point = partial(best_of_n, inputs.oracle, inputs.scores, rank=rank)
            result = best_of_n_curve(inputs.oracle, inputs.scores, ns, rank=rank)
        else:
            labelled = (inputs.oracle, inputs.scores, inputs.design.inclusion)
            options = {"rank": rank, **design_kwargs(inputs)}
            point = partial(budget_best_of_n, *labelled, **options)
            result = budget_best_of_n_curve(*labelled, ns, **options)
        values = [scalar(f"{key}@{n}", f"{name}@{n}", point(n), n=n, rank=rank) for n in report]
        return MetricOutput(
            values=values,
            curves=[curve(best_of_n_curve_key(rank), f"{name} curve", "n", result, rank=rank)],
        )


class BestKOfNOptions(ComponentOptions):
    n: int = Field(ge=1)
    k: int = Field(ge=1)


class BestKOfN(Metric[BestKOfNOptions, MetricInputs]):
    """Best-k-of-n: mean oracle score of the RM's top k among n random responses (RETA paper Fig.
    2d)."""

    name = "best-k-of-n"
    Options = BestKOfNOptions

    def check_pool_size(self, per_prompt: int) -> None:
        if self.options.n > per_prompt:
            raise BadInput(
                f"n larger than the {per_prompt} responses per prompt",
                field="n",
                value=self.options.n,
            )
        if self.options.k > self.options.n:
            raise BadInput(f"k larger than n = {self.options.n}", field="k", value=self.options.k)

    def undefined_prompts(self, oracle: Sequence[np.ndarray]) -> dict[int, str]:
        n = max(self.options.n, 2)
        return {
            q: f"fewer than n = {n} responses" for q, pool in enumerate(oracle) if len(pool) < n
        }

    def compute(self, inputs: MetricInputs) -> MetricOutput:
        n, k = self.options.n, self.options.k
        result = best_k_of_n(inputs.oracle, inputs.scores, n, k)
        return MetricOutput(values=[scalar(f"best{k}of{n}", f"best-{k}-of-{n}", result, n=n, k=k)])


class PairwiseAccuracyOptions(ComponentOptions):
    ties: Literal["half", "loss"] = Field("half", description="credit for an RM tie")


class PairwiseAccuracy(Metric[PairwiseAccuracyOptions, MetricInputs]):
    """Accuracy on every within-prompt response pair the oracle orders (TestGenPair, RETA paper App.
    A.1)."""

    name = "pairwise-accuracy"
    Options = PairwiseAccuracyOptions
    bounds = (0.0, 1.0)
    supports_label_budget = True

    def undefined_prompts(self, oracle: Sequence[np.ndarray]) -> dict[int, str]:
        undefined = super().undefined_prompts(oracle)
        for q, pool in enumerate(oracle):
            labelled = pool[~np.isnan(pool)]
            if q not in undefined and np.all(labelled == labelled[0]):
                what = "oracle scores" if labelled.size == pool.size else "labelled oracle scores"
                undefined[q] = f"all {what} equal (no pair to compare)"
        return undefined

    def compute(self, inputs: MetricInputs) -> MetricOutput:
        if inputs.design is None:
            result = pairwise_accuracy(inputs.oracle, inputs.scores, ties=self.options.ties)
        else:
            result = budget_pairwise_accuracy(
                inputs.oracle,
                inputs.scores,
                inputs.design.inclusion,
                ties=self.options.ties,
                **design_kwargs(inputs),
            )
        return MetricOutput(
            values=[scalar("pairwise_accuracy", "pairwise acc", result, ties=self.options.ties)]
        )


@hookimpl
def register_metrics(register):
    for cls in (Reta, RetaCurve, BestOfN, BestKOfN, PairwiseAccuracy):
        register(cls)
