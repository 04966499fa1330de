"""Conformance checks of step metrics (``scope = "steps"``, docs/prm.md): deterministic, the
same whatever the order of the solutions, values within the declared bounds, per-question
values that average to the value they stand for (what paired comparisons between PRMs read),
a perfect PRM at least as good as a reversed one, and a NaN step score refused."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rmaudit.components import MetricOutput, StepInputs

from ._common import Checks, ConformanceError, refused, short
from .metrics import MetricSubject


def _determinism(subject: MetricSubject) -> None:
    _same(subject, subject.compute(), "computing twice")


def _solution_order(subject: MetricSubject) -> None:
    inputs = subject.inputs
    order = np.random.default_rng(subject.seed).permutation(len(inputs.solutions))
    shuffled = StepInputs(
        tuple(inputs.solutions[i] for i in order),
        tuple(inputs.scores[i] for i in order),
        tuple(inputs.question_ids[i] for i in order),
    )
    _same(subject, subject.compute(shuffled), "solution order")


def _values(output: MetricOutput) -> dict[str, np.ndarray]:
    found = {f"value {v.key!r}": np.atleast_1d(float(v.value)) for v in output.values}
    found.update({f"curve {c.key!r}": np.asarray(c.value, float) for c in output.curves})
    return found


def _same(subject: MetricSubject, got: MetricOutput, check: str) -> None:
    want, have = _values(subject.compute()), _values(got)
    if want.keys() != have.keys():
        raise ConformanceError(f"{subject.label}: {check} changed which results it reports")
    for key, value in want.items():
        if not np.allclose(value, have[key], rtol=subject.rtol, atol=subject.atol, equal_nan=True):
            raise ConformanceError(
                f"{subject.label}: {key} changed under {check}: expected {short(value)}, got "
                f"{short(have[key])}"
            )


def _bounds(subject: MetricSubject) -> None:
    low, high = subject.metric.bounds
    for key, value in _values(subject.compute()).items():
        finite = value[np.isfinite(value)]
        if (low is not None and np.any(finite < low - 1e-9)) or (
            high is not None and np.any(finite > high + 1e-9)
        ):
            raise ConformanceError(
                f"{subject.label}: {key}: expected values within {subject.metric.bounds}, got "
                f"{short(value)}"
            )


def _per_question_means(subject: MetricSubject) -> None:
    for v in subject.compute().values:
        if v.per_prompt is None or not np.isfinite(v.value):
            continue
        shown = np.asarray(v.per_prompt, float)
        mean = float(np.mean(shown[np.isfinite(shown)]))
        if not np.isclose(mean, v.value, rtol=1e-9, atol=1e-12):
            raise ConformanceError(
                f"{subject.label}: value {v.key!r}: its per-question values average {mean!r}, "
                f"not its value {v.value!r}: paired comparisons would compare another number"
            )


def _direction(subject: MetricSubject) -> None:
    """A PRM that scores 1 every step before the first error that is not marked erroneous
    and 0 the rest, against its reverse."""
    inputs, perfect = subject.inputs, []
    for solution in inputs.solutions:
        steps = np.arange(len(solution.steps))
        valid = ~np.isin(steps, solution.erroneous)
        if solution.first_error >= 0 and not solution.erroneous:
            valid &= steps < solution.first_error
        perfect.append(valid.astype(float))
    good = _values(subject.compute(replace(inputs, scores=tuple(perfect))))
    bad = _values(subject.compute(replace(inputs, scores=tuple(1.0 - p for p in perfect))))
    sign = 1.0 if subject.metric.higher_is_better else -1.0
    for key, value in good.items():
        if np.any(sign * (value - bad[key]) < -1e-9):
            raise ConformanceError(
                f"{subject.label}: {key}: a perfect PRM should score at least as well as a "
                f"reversed one; expected {short(value)} to beat {short(bad[key])}"
            )


def _nan(subject: MetricSubject) -> None:
    scores = [s.copy() for s in subject.inputs.scores]
    scores[0][0] = np.nan
    broken = replace(subject.inputs, scores=tuple(scores))
    refused(
        subject.label,
        "a NaN step score",
        lambda: subject.metric.compute(broken),
        lambda output: f"{len(output.values)} values",
    )


#: the checks of a step metric, by name
STEP_CHECKS: Checks = {
    "determinism": _determinism,
    "solution_order": _solution_order,
    "bounds": _bounds,
    "per_question_means": _per_question_means,
    "direction": _direction,
    "nan": _nan,
}
