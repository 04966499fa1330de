"""Conformance checks of metrics: order invariance, bounds, direction, NaN refused (the
contracts are listed in :mod:`rmaudit.testing.conformance`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from rmaudit.components import (
    JudgedPairs,
    Metric,
    MetricInputs,
    MetricOutput,
    PairInputs,
    StudyInputs,
)

from ._common import Checks, ConformanceError, describe, refused, short


@dataclass(frozen=True)
class MetricSubject:
    """What a metric's checks share: the metric, the inputs of its scope it is checked on, how
    close two computations must be (``numpy.isclose``'s rtol and atol) and the seed of the
    orders the checks shuffle to."""

    metric: Metric
    inputs: Any
    rtol: float
    atol: float
    seed: int

    @property
    def label(self) -> str:
        return describe(self.metric)

    def compute(self, inputs: Any = None) -> MetricOutput:
        return _compute(self.metric, self.inputs if inputs is None else inputs, self.label)

    def same(self, got: MetricOutput, check: str, per_prompt_order: Any = None) -> None:
        """``got`` is what the metric computes on the subject's inputs, within the tolerances."""
        _same(self.compute(), got, self, check, per_prompt_order)


def _determinism(subject: MetricSubject) -> None:
    subject.same(subject.compute(), "determinism: computing twice on the same inputs")


def _prompt_order(subject: MetricSubject) -> None:
    inputs = subject.inputs
    order = np.random.default_rng(subject.seed).permutation(len(inputs.prompt_ids))
    by_prompt = MetricInputs(
        tuple(inputs.prompt_ids[q] for q in order),
        tuple(inputs.oracle[q] for q in order),
        tuple(inputs.scores[q] for q in order),
    )
    check = "prompt order: listing the prompts in another order"
    subject.same(subject.compute(by_prompt), check, per_prompt_order=order)


def _response_order(subject: MetricSubject) -> None:
    inputs, rng = subject.inputs, np.random.default_rng(subject.seed)
    shuffles = [rng.permutation(len(j)) for j in inputs.oracle]
    by_response = MetricInputs(
        inputs.prompt_ids,
        tuple(j[s] for j, s in zip(inputs.oracle, shuffles, strict=True)),
        tuple(y[s] for y, s in zip(inputs.scores, shuffles, strict=True)),
    )
    subject.same(
        subject.compute(by_response),
        "response order: listing each "
        "prompt's responses in another order (oracle and RM scores permuted together); a "
        "metric must treat a prompt's responses as a set",
    )


def _pair_order(subject: MetricSubject) -> None:
    inputs = subject.inputs
    order = np.random.default_rng(subject.seed).permutation(len(inputs.pair_ids))
    shuffled = PairInputs(
        tuple(inputs.pair_ids[i] for i in order),
        inputs.chosen[order],
        inputs.rejected[order],
        tuple(inputs.subsets[i] for i in order),
        tuple(inputs.meta[i] for i in order),
        {
            target: {p: (c[order], r[order]) for p, (c, r) in levels.items()}
            for target, levels in inputs.shifted.items()
        },
        tuple(inputs.prompt_ids[i] for i in order) if inputs.prompt_ids else (),
        _shuffled_verdicts(inputs.verdicts, order),
        tuple(inputs.places[i] for i in order),
    )
    subject.same(subject.compute(shuffled), "pair order: listing the pairs in another order")


def _nan_logit(subject: MetricSubject) -> None:
    chosen = subject.inputs.chosen.copy()
    chosen[1] = np.nan
    broken = replace(subject.inputs, chosen=chosen)
    refused(subject.label, "a NaN logit", lambda: subject.metric.compute(broken), _first_number)


def _per_pair_means(subject: MetricSubject) -> None:
    """Each key :meth:`~rmaudit.components.Metric.per_pair` declares is a value ``compute``
    returns, and the mean of its finite per-pair values (one per pair) is that value: what a
    paired comparison checks before it compares a stored number pair by pair."""
    inputs, label = subject.inputs, subject.label
    values = {v.key: v.value for v in subject.compute().values}
    for key, found in subject.metric.per_pair(inputs).items():
        if key not in values:
            raise ConformanceError(
                f"{label}: per_pair declares values for {key!r}, which compute does not return"
            )
        if np.shape(found.values) != (len(inputs.pair_ids),):
            raise ConformanceError(
                f"{label}: per_pair's values for {key!r} should be one per pair "
                f"({len(inputs.pair_ids)}), got shape {np.shape(found.values)}"
            )
        kept = found.values[np.isfinite(found.values)]
        mean = float(kept.mean()) if kept.size else float("nan")
        if not np.isclose(mean, values[key], rtol=subject.rtol, atol=subject.atol):
            raise ConformanceError(
                f"{label}: the per-pair values of {key!r} average to {mean:.6g}, but "
                f"compute returns {values[key]:.6g}"
            )


def _shuffled_verdicts(judged: JudgedPairs | None, order: np.ndarray) -> JudgedPairs | None:
    if judged is None:
        return None
    return JudgedPairs(
        tuple(judged.chosen_first[i] for i in order),
        tuple(judged.rejected_first[i] for i in order),
        judged.p_first_chosen_first[order],
        judged.p_first_rejected_first[order],
        judged.from_logprobs,
        tuple(judged.replies[i] for i in order) if judged.replies else (),
    )


def _payload(
    metric: Metric, inputs: MetricInputs | PairInputs
) -> MetricInputs | StudyInputs | PairInputs:
    """What ``compute`` takes: one RM's inputs, or for a run-level metric a study of three RMs."""
    if metric.scope != "run" or isinstance(inputs, PairInputs):
        return inputs
    return StudyInputs(
        inputs.prompt_ids,
        inputs.oracle,
        {
            "rm": inputs.scores,
            "oracle-as-rm": tuple(j.copy() for j in inputs.oracle),
            "reversed-oracle": tuple(-j for j in inputs.oracle),
        },
    )


def _compute(metric: Metric, inputs: MetricInputs | PairInputs, label: str) -> MetricOutput:
    output = metric.compute(_payload(metric, inputs))
    if not isinstance(output, MetricOutput):
        raise ConformanceError(
            f"{label}: compute must return a MetricOutput, got {type(output).__name__}"
        )
    for kind, items in (("value", output.values), ("curve", output.curves)):
        keys = [item.key for item in items]
        if len(set(keys)) != len(keys):
            raise ConformanceError(f"{label}: expected unique {kind} keys, got {keys}")
    if not output.values and not output.curves:
        raise ConformanceError(f"{label}: compute returned no values and no curves")
    return output


def _numbers(output: MetricOutput) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """key → (value(s), stderr(s), per-prompt values or None) for every value and curve."""
    found = {
        f"value {v.key!r}": (
            np.atleast_1d(float(v.value)),
            np.atleast_1d(float(v.stderr)),
            None if v.per_prompt is None else np.asarray(v.per_prompt),
        )
        for v in output.values
    }
    found.update(
        {
            f"curve {c.key!r}": (np.asarray(c.value, float), np.asarray(c.stderr, float), None)
            for c in output.curves
        }
    )
    return found


def _same(
    expected: MetricOutput,
    got: MetricOutput,
    subject: MetricSubject,
    check: str,
    per_prompt_order: np.ndarray | None = None,
) -> None:
    label, want, have = subject.label, _numbers(expected), _numbers(got)
    if want.keys() != have.keys():
        raise ConformanceError(
            f"{label}: {check} changed which results it reports: {sorted(want)} vs {sorted(have)}"
        )
    for key, (value, stderr, per_prompt) in want.items():
        value2, stderr2, per_prompt2 = have[key]
        if per_prompt is not None and per_prompt_order is not None:
            per_prompt = per_prompt[per_prompt_order]
        for what, a, b in (
            ("value", value, value2),
            ("stderr", stderr, stderr2),
            ("per-prompt values", per_prompt, per_prompt2),
        ):
            if a is None or b is None:
                continue
            if a.shape != b.shape or not np.allclose(
                a, b, rtol=subject.rtol, atol=subject.atol, equal_nan=True
            ):
                raise ConformanceError(
                    f"{label}: {key} {what} changed under {check}: "
                    f"expected {short(a)}, got {short(b)}"
                )


def _bounds(subject: MetricSubject) -> None:
    metric, output, label = subject.metric, subject.compute(), subject.label
    low, high = metric.bounds
    slack = 1e-9
    for key, (value, _, per_prompt) in _numbers(output).items():
        for what, array in (("value", value), ("per-prompt values", per_prompt)):
            if array is None:
                continue
            if not np.all(np.isfinite(array)):
                raise ConformanceError(
                    f"{label}: {key} {what}: expected finite numbers on valid "
                    f"inputs, got {short(array)}"
                )
            if (low is not None and array.min() < low - slack) or (
                high is not None and array.max() > high + slack
            ):
                raise ConformanceError(
                    f"{label}: {key} {what}: expected values within the "
                    f"declared bounds {metric.bounds}, got {short(array)}"
                )


def _direction(subject: MetricSubject) -> None:
    metric, inputs, label = subject.metric, subject.inputs, subject.label
    perfect = MetricInputs(inputs.prompt_ids, inputs.oracle, tuple(j.copy() for j in inputs.oracle))
    reversed_ = MetricInputs(inputs.prompt_ids, inputs.oracle, tuple(-j for j in inputs.oracle))
    good, bad = (
        _numbers(_compute(metric, perfect, label)),
        _numbers(_compute(metric, reversed_, label)),
    )
    sign = 1.0 if metric.higher_is_better else -1.0
    direction = "higher" if metric.higher_is_better else "lower"
    for key, (value, _, _) in good.items():
        worse = bad[key][0]
        if np.any(sign * (value - worse) < -1e-9 * np.maximum(1.0, np.abs(value))):
            raise ConformanceError(
                f"{label}: {key}: a perfect RM (scores = oracle) should score at least as well as "
                f"a reversed RM (scores = -oracle) with higher_is_better={metric.higher_is_better} "
                f"({direction} is better); expected {short(value)} to be {direction} than or "
                f"equal to {short(worse)}"
            )


def _nan(subject: MetricSubject) -> None:
    metric, inputs = subject.metric, subject.inputs
    for field in ("oracle", "scores"):
        if field not in metric.needs:
            continue
        pools = [np.array(pool, dtype=float) for pool in getattr(inputs, field)]
        pools[0][1] = np.nan
        broken = MetricInputs(
            inputs.prompt_ids,
            tuple(pools) if field == "oracle" else inputs.oracle,
            tuple(pools) if field == "scores" else inputs.scores,
        )
        compute = partial(metric.compute, _payload(metric, broken))
        refused(subject.label, f"a NaN in {field}", compute, _first_number)


def _first_number(output: MetricOutput) -> str:
    return short(next(iter(_numbers(output).values()))[0])


#: the checks of a metric of one RM's responses (``scope = "rm"``), by name
RM_CHECKS: Checks = {
    "determinism": _determinism,
    "prompt_order": _prompt_order,
    "response_order": _response_order,
    "bounds": _bounds,
    "direction": _direction,
    "nan": _nan,
}
#: of a metric across RMs (``scope = "run"``): a reversed RM is one of the study's RMs
RUN_CHECKS: Checks = {name: check for name, check in RM_CHECKS.items() if name != "direction"}
#: of a metric of one RM's preference pairs (``scope = "pairs"``)
PAIR_CHECKS: Checks = {
    "determinism": _determinism,
    "per_pair_means": _per_pair_means,
    "pair_order": _pair_order,
    "bounds": _bounds,
    "nan": _nan_logit,
}
