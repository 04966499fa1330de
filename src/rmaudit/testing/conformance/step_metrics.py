"""Conformance checks of step metrics (``scope = "steps"``, docs/prm.md): deterministic, the
same whatever the order of the solutions, values within the declared bounds, per-question
values that average to the value they stand for (what paired comparisons between PRMs read),
a perfect PRM at least as good as a reversed one, and a NaN step score refused."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rmaudit.components import Metric, MetricOutput, StepInputs
from rmaudit.errors import BadInput

from ._common import ConformanceError, short


def check_step_metric(
    metric: Metric, inputs: StepInputs, label: str, rtol: float, atol: float, seed: int
) -> None:
    base = _compute(metric, inputs, label)
    _same(base, _compute(metric, inputs, label), label, "computing twice", rtol, atol)
    order = np.random.default_rng(seed).permutation(len(inputs.solutions))
    shuffled = StepInputs(
        tuple(inputs.solutions[i] for i in order),
        tuple(inputs.scores[i] for i in order),
        tuple(inputs.question_ids[i] for i in order),
    )
    _same(base, _compute(metric, shuffled, label), label, "solution order", rtol, atol)
    _bounded(metric, base, label)
    _direction(metric, inputs, label)
    scores = [s.copy() for s in inputs.scores]
    scores[0][0] = np.nan
    try:
        output = metric.compute(replace(inputs, scores=tuple(scores)))
    except BadInput:
        return
    except Exception as error:
        raise ConformanceError(
            f"{label}: a NaN step score should raise rmaudit.errors.BadInput, got "
            f"{type(error).__name__}: {error}"
        ) from None
    raise ConformanceError(
        f"{label}: a NaN step score should raise rmaudit.errors.BadInput, but compute returned "
        f"{len(output.values)} values"
    )


def _compute(metric: Metric, inputs: StepInputs, label: str) -> MetricOutput:
    output = metric.compute(inputs)
    if not isinstance(output, MetricOutput) or not (output.values or output.curves):
        raise ConformanceError(f"{label}: compute must return a MetricOutput with results")
    return output


def _values(output: MetricOutput) -> dict[str, np.ndarray]:
    found = {f"value {v.key!r}": np.atleast_1d(float(v.value)) for v in output.values}
    found.update({f"curve {c.key!r}": np.asarray(c.value, float) for c in output.curves})
    return found


def _same(
    expected: MetricOutput, got: MetricOutput, label: str, check: str, rtol: float, atol: float
) -> None:
    want, have = _values(expected), _values(got)
    if want.keys() != have.keys():
        raise ConformanceError(f"{label}: {check} changed which results it reports")
    for key, value in want.items():
        if not np.allclose(value, have[key], rtol=rtol, atol=atol, equal_nan=True):
            raise ConformanceError(
                f"{label}: {key} changed under {check}: expected {short(value)}, got "
                f"{short(have[key])}"
            )


def _bounded(metric: Metric, output: MetricOutput, label: str) -> None:
    low, high = metric.bounds
    for key, value in _values(output).items():
        finite = value[np.isfinite(value)]
        if (low is not None and np.any(finite < low - 1e-9)) or (
            high is not None and np.any(finite > high + 1e-9)
        ):
            raise ConformanceError(
                f"{label}: {key}: expected values within {metric.bounds}, got {short(value)}"
            )
    for v in output.values:
        if v.per_prompt is None or not np.isfinite(v.value):
            continue
        shown = np.asarray(v.per_prompt, float)
        mean = float(np.mean(shown[np.isfinite(shown)]))
        if not np.isclose(mean, v.value, rtol=1e-9, atol=1e-12):
            raise ConformanceError(
                f"{label}: value {v.key!r}: its per-question values average {mean!r}, not "
                f"its value {v.value!r}: paired comparisons would compare another number"
            )


def _direction(metric: Metric, inputs: StepInputs, label: str) -> None:
    """A PRM that scores 1 every step before the first error that is not marked erroneous
    and 0 the rest, against its reverse."""
    perfect = []
    for solution in inputs.solutions:
        steps = np.arange(len(solution.steps))
        valid = ~np.isin(steps, solution.erroneous)
        if solution.first_error >= 0 and not solution.erroneous:
            valid &= steps < solution.first_error
        perfect.append(valid.astype(float))
    good = _values(_compute(metric, replace(inputs, scores=tuple(perfect)), label))
    bad = _values(_compute(metric, replace(inputs, scores=tuple(1.0 - p for p in perfect)), label))
    sign = 1.0 if metric.higher_is_better else -1.0
    for key, value in good.items():
        if np.any(sign * (value - bad[key]) < -1e-9):
            raise ConformanceError(
                f"{label}: {key}: a perfect PRM should score at least as well as a reversed "
                f"one; expected {short(value)} to beat {short(bad[key])}"
            )
