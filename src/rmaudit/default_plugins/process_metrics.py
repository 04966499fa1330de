"""Built-in step metrics (``scope = "steps"``, docs/prm.md): thin wrappers over
:mod:`rmaudit.metrics.process`.  Each gets :class:`~rmaudit.components.StepInputs` once per
process reward model and reports every number with its ± clustered by question, an interval,
and its per-question values (what paired comparisons between PRMs read)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, get_args

import numpy as np
from pydantic import Field, field_validator

from rmaudit import hookimpl
from rmaudit.components import (
    ComponentOptions,
    CurveValue,
    Metric,
    MetricOutput,
    MetricValue,
    StepInputs,
)
from rmaudit.components.kinds import OptionsT
from rmaudit.components.vocabulary import (
    AVERAGE_F1_CURVE,
    PRM_SCORE_CURVE,
    STEP_AUROC,
    ResultKey,
)
from rmaudit.metrics.preference.accuracy import WALD_MINIMUM, wald_is_approximate
from rmaudit.metrics.process import (
    FirstErrorScores,
    LinearizedEstimate,
    aggregate,
    auroc,
    first_error_scores,
    step_f1,
    weighted_sum,
)

#: the thresholds of the curves: 0, 0.05, …, 1
CURVE = tuple(round(0.05 * i, 2) for i in range(21))
#: below this many problems value ± 1.96·stderr covers less than 93% (0.91–0.93 at 30
#: problems, 0.93–0.95 at 60; benchmarks/coverage_prm.py), so it is marked approximate
FEW_PROBLEMS = 50
_THRESHOLD = Field(
    0.5, ge=0, le=1, allow_inf_nan=False, description="the step score that separates the labels"
)


class ThresholdOptions(ComponentOptions):
    threshold: float = _THRESHOLD
    curve: list[float] = Field(list(CURVE), min_length=2, description="the thresholds of the curve")

    @field_validator("curve")
    @classmethod
    def _sorted(cls, curve: list[float]) -> list[float]:
        if any(not 0 <= t <= 1 for t in curve) or len(set(curve)) != len(curve):
            raise ValueError("expected distinct thresholds in [0, 1]")
        return sorted(curve)


class StepMetric(Metric[OptionsT, StepInputs]):
    """A metric of a PRM's step scores: ``compute`` gets :class:`StepInputs`."""

    scope = "steps"
    bounds = (0.0, 1.0)


def _questions(inputs: StepInputs) -> tuple[np.ndarray, int]:
    order = {q: i for i, q in enumerate(inputs.questions)}
    return np.array([order[q] for q in inputs.question_ids], dtype=int), len(order)


def _value(
    key: str,
    label: str,
    estimate: LinearizedEstimate,
    at: int | None = None,
    *,
    approximate: str = "",
    **params: Any,
) -> MetricValue:
    """A stored value of one threshold (``at``: its position) with its ± and per-question
    values; its ± is marked approximate over fewer than :data:`FEW_PROBLEMS` problems, or
    for the reason given."""

    def pick(array: np.ndarray) -> np.ndarray:
        return array if at is None else array[at]

    if estimate.clusters < FEW_PROBLEMS and not approximate:
        approximate = (
            f"± over {estimate.clusters} problems (under {FEW_PROBLEMS}) is approximate: "
            "value ± 1.96·± covered 0.91–0.93 at 30 in simulation (benchmarks/coverage_prm.py)"
        )
    if approximate:
        params["approximate"] = approximate
    low, high = estimate.interval()
    return MetricValue(
        key=key,
        label=label,
        value=float(pick(estimate.value)),
        stderr=float(pick(estimate.stderr())),
        ci_low=float(pick(low)),
        ci_high=float(pick(high)),
        params={"questions": estimate.clusters, **params},
        per_prompt=pick(estimate.per_question()),
    )


def _curve(
    key: str, label: str, thresholds: list[float], estimate: LinearizedEstimate
) -> CurveValue:
    low, high = estimate.interval()
    return CurveValue(
        key=key,
        label=label,
        x_label="threshold",
        x=np.asarray(thresholds),
        value=estimate.value,
        stderr=estimate.stderr(),
        ci_low=low,
        ci_high=high,
    )


def _subsets(inputs: StepInputs) -> list[str]:
    return list(dict.fromkeys(s.subset for s in inputs.solutions))


class PRMBenchScore(StepMetric[ThresholdOptions]):
    """PRMBench's PRMScore = ½·F1 on valid steps + ½·F1 on erroneous steps, overall and per
    error class (F1 alone for a class without erroneous steps: multi_solutions), with the
    PRMScore over every threshold."""

    name = "prmbench-score"
    Options = ThresholdOptions
    needs: ClassVar[tuple[str, ...]] = ("erroneous_steps",)

    def compute(self, inputs: StepInputs) -> MetricOutput:
        index, count = _questions(inputs)
        thresholds = [self.options.threshold, *self.options.curve]

        def scored(kept: list[int]):
            return step_f1(
                [inputs.scores[i] for i in kept],
                [inputs.solutions[i].erroneous for i in kept],
                index[kept],
                count,
                np.asarray(thresholds),
                negative=any(inputs.solutions[i].erroneous for i in kept),
            )

        every = scored(list(range(len(inputs.solutions))))
        params: dict[str, Any] = {"threshold": self.options.threshold}
        out = MetricOutput(
            values=[
                _value("prm_score", "PRMScore", every.prm_score, 0, steps=every.steps, **params),
                _value("f1", "F1", every.f1, 0, **params),
                _value("negative_f1", "negative F1", every.negative_f1, 0, **params),
            ],
            curves=[_curve(PRM_SCORE_CURVE, "PRMScore", thresholds[1:], _tail(every.prm_score))],
        )
        for subset in _subsets(inputs):
            kept = [i for i, s in enumerate(inputs.solutions) if s.subset == subset]
            part = scored(kept)
            out.values += [
                _value(f"prm_score[{subset}]", f"PRMScore {subset}", part.prm_score, 0, **params),
                _value(f"f1[{subset}]", f"F1 {subset}", part.f1, 0, **params),
            ]
            if part.erroneous:
                out.values.append(
                    _value(
                        f"negative_f1[{subset}]",
                        f"negative F1 {subset}",
                        part.negative_f1,
                        0,
                        **params,
                    )
                )
        return out


def _tail(estimate: LinearizedEstimate) -> LinearizedEstimate:
    """The points after the first (the first threshold is the option's own)."""
    return LinearizedEstimate(estimate.value[1:], estimate.influence[1:], estimate.scope)


class ProcessBenchF1(StepMetric[ThresholdOptions]):
    """ProcessBench's F1 per split: the harmonic mean of the accuracy at finding the first
    wrong step of erroneous solutions and at flagging none of correct ones; their average
    over the splits (the paper's headline), and that average over every threshold."""

    name = "processbench-f1"
    Options = ThresholdOptions
    needs: ClassVar[tuple[str, ...]] = ("first_error",)

    def compute(self, inputs: StepInputs) -> MetricOutput:
        index, count = _questions(inputs)
        thresholds = np.asarray([self.options.threshold, *self.options.curve])
        params: dict[str, Any] = {"threshold": self.options.threshold}
        splits, values, approximate = [], [], ""
        for subset in _subsets(inputs):
            kept = [i for i, s in enumerate(inputs.solutions) if s.subset == subset]
            part = first_error_scores(
                [inputs.scores[i] for i in kept],
                [inputs.solutions[i].first_error for i in kept],
                index[kept],
                count,
                thresholds,
            )
            splits.append(part.f1)
            few = _few_hits(part, subset)
            approximate = approximate or few
            values += [
                _value(f"f1[{subset}]", f"F1 {subset}", part.f1, 0, approximate=few, **params),
                _value(
                    f"error_accuracy[{subset}]",
                    f"acc. erroneous {subset}",
                    part.error_accuracy,
                    0,
                    approximate=few,
                    solutions=part.erroneous,
                    **params,
                ),
                _value(
                    f"correct_accuracy[{subset}]",
                    f"acc. correct {subset}",
                    part.correct_accuracy,
                    0,
                    approximate=few,
                    solutions=part.correct,
                    **params,
                ),
            ]
        average = weighted_sum([1 / len(splits)] * len(splits), splits)
        return MetricOutput(
            values=[
                _value(
                    "average_f1",
                    "avg F1",
                    average,
                    0,
                    approximate=approximate,
                    splits=len(splits),
                    **params,
                ),
                *values,
            ],
            curves=[_curve(AVERAGE_F1_CURVE, "avg F1", list(thresholds[1:]), _tail(average))],
        )


def _few_hits(scores: FirstErrorScores, split: str) -> str:
    """Why a split's F1 ± is approximate: an accuracy over few solutions near 0 or 1, where
    value ± 1.96·± covered 0.84–0.92 in simulation (as a Wald interval does)."""
    for accuracy, count in (
        (scores.error_accuracy, scores.erroneous),
        (scores.correct_accuracy, scores.correct),
    ):
        value = float(accuracy.value[0])
        if np.isfinite(value) and wald_is_approximate(value, count):
            return (
                f"{split}: an accuracy over {count} solutions near 0 or 1 (n·min(acc, 1 − acc) "
                f"< {WALD_MINIMUM}): its F1's ± undercovered (0.84–0.92) in simulation "
                "(benchmarks/coverage_prm.py)"
            )
    return ""


Aggregation = Literal["min", "last", "product", "mean"]


class AggregationOptions(ComponentOptions):
    aggregations: list[Aggregation] = Field(
        list(get_args(Aggregation)),
        min_length=1,
        description="how step scores become a solution score",
    )


class StepAggregation(StepMetric[AggregationOptions]):
    """Each aggregation of step scores into a solution score (min, last, product, mean), and
    its AUROC at telling solutions with a correct final answer from the rest."""

    name = "step-aggregation"
    Options = AggregationOptions
    needs: ClassVar[tuple[str, ...]] = ("final_answer",)

    def compute(self, inputs: StepInputs) -> MetricOutput:
        index, count = _questions(inputs)
        known = [i for i, s in enumerate(inputs.solutions) if s.final_answer_correct is not None]
        positive = np.array([bool(inputs.solutions[i].final_answer_correct) for i in known])
        values = []
        for how in dict.fromkeys(self.options.aggregations):
            solution_scores = aggregate([inputs.scores[i] for i in known], how)
            unfinite = int((~np.isfinite(solution_scores)).sum())
            kept = np.arange(len(known) if not unfinite else 0)  # overflowed: none ranks
            estimate = auroc(solution_scores[kept], positive[kept], index[known][kept], count)
            params: dict[str, Any] = {}
            if unfinite:
                largest = max(float(np.abs(inputs.scores[i]).max()) for i in known)
                params["undefined"] = (
                    f"AUROC {how}: undefined: the {how} of {unfinite:,} of {len(known):,} "
                    f"solutions' step scores is not a finite number (step scores up to "
                    f"{largest:.3g}; a step score is a probability or a logit)"
                )
            elif positive.all() or not positive.any():
                params["undefined"] = (
                    f"AUROC {how}: undefined: the final answer of every one of {len(known):,} "
                    f"solutions is {'correct' if positive.any() else 'wrong'}: no two classes "
                    "to tell apart"
                )
            values.append(
                _value(
                    str(ResultKey(STEP_AUROC, how)),
                    f"AUROC {how}",
                    estimate,
                    correct=int(positive.sum()),
                    other=int((~positive).sum()),
                    **params,
                )
            )
        return MetricOutput(values=values)


@hookimpl
def register_metrics(register):
    register(PRMBenchScore)
    register(ProcessBenchF1)
    register(StepAggregation)
