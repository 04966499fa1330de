"""Conformance checks of metrics: order invariance, bounds, direction, NaN refused (the
contracts are listed in :mod:`rmaudit.testing.conformance`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from rmaudit.components import (
    JudgedPairs,
    Metric,
    MetricInputs,
    MetricOutput,
    PairInputs,
    StepInputs,
    StudyInputs,
)
from rmaudit.errors import BadInput
from rmaudit.testing.samples import sample_benchmark, sample_pairs, sample_step_inputs

from ._common import ConformanceError, describe, instance, short
from .step_metrics import check_step_metric


@dataclass(frozen=True)
class Tolerance:
    """How close two computations must be (``numpy.isclose``'s rtol and atol)."""

    rtol: float
    atol: float


def check_metric(
    metric: Metric | type[Metric],
    inputs: MetricInputs | PairInputs | StepInputs | None = None,
    *,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    seed: int = 0,
) -> None:
    """Run every metric check; ``metric`` is a class (built with default options) or an instance.

    ``inputs`` defaults to :func:`sample_benchmark`; pass your own when the metric's options
    need more responses per prompt.  Values are compared with ``numpy.isclose(rtol, atol)``;
    bootstrap CIs are not compared across orderings, because resampling prompts by position
    is only invariant in distribution.

    A preference-pair metric (``scope = "pairs"``) gets :func:`sample_pairs` by default.
    A run-level metric (``scope = "run"``) gets three RMs: the inputs' RM, the oracle itself
    and the reversed oracle; the direction check, which compares two separate runs of a
    per-RM metric, does not apply to it.  A step metric (``scope = "steps"``) gets
    :func:`sample_step_inputs` (:mod:`.step_metrics`).
    """
    _check(instance(metric), inputs, Tolerance(rtol, atol), seed)


def _check(
    metric: Metric,
    given: MetricInputs | PairInputs | StepInputs | None,
    close: Tolerance,
    seed: int,
) -> None:
    label = describe(metric)
    if metric.scope == "steps":
        steps = given if given is not None else sample_step_inputs(seed=seed)
        if not isinstance(steps, StepInputs):
            raise ConformanceError(f"{label}: a step metric is checked on StepInputs")
        check_step_metric(metric, steps, label, close.rtol, close.atol, seed)
        return
    if metric.scope == "pairs":
        pairs = given if given is not None else sample_pairs(seed=seed)
        if not isinstance(pairs, PairInputs):
            raise ConformanceError(f"{label}: a pair metric is checked on PairInputs")
        _check_pair_metric(metric, pairs, label, close, seed)
        return
    inputs = given if given is not None else sample_benchmark(seed=seed)
    if not isinstance(inputs, MetricInputs):
        raise ConformanceError(
            f"{label}: a metric of scope {metric.scope!r} is checked on MetricInputs"
        )
    try:
        metric.check_pool_size(min(len(j) for j in inputs.oracle))
    except BadInput as error:
        raise ConformanceError(
            f"{label}: its options need bigger pools than the check inputs "
            f"({error.one_line()}); pass inputs=sample_benchmark(per_prompt=...)"
        ) from None
    base = _deterministic(metric, inputs, label, close)

    rng = np.random.default_rng(seed)
    order = rng.permutation(len(inputs.prompt_ids))
    by_prompt = MetricInputs(
        tuple(inputs.prompt_ids[q] for q in order),
        tuple(inputs.oracle[q] for q in order),
        tuple(inputs.scores[q] for q in order),
    )
    _same(
        base,
        _compute(metric, by_prompt, label),
        label,
        "prompt order: listing the prompts in another order",
        close,
        per_prompt_order=order,
    )

    shuffles = [rng.permutation(len(j)) for j in inputs.oracle]
    by_response = MetricInputs(
        inputs.prompt_ids,
        tuple(j[s] for j, s in zip(inputs.oracle, shuffles, strict=True)),
        tuple(y[s] for y, s in zip(inputs.scores, shuffles, strict=True)),
    )
    _same(
        base,
        _compute(metric, by_response, label),
        label,
        "response order: listing each "
        "prompt's responses in another order (oracle and RM scores permuted together); a "
        "metric must treat a prompt's responses as a set",
        close,
    )

    _within_bounds(metric, base, label)
    if metric.scope == "rm":
        _direction(metric, inputs, label)
    _rejects_nan(metric, inputs, label)


def _deterministic(
    metric: Metric, inputs: MetricInputs | PairInputs, label: str, close: Tolerance
) -> MetricOutput:
    """The metric's output on ``inputs``, checked to be the same when computed again."""
    base = _compute(metric, inputs, label)
    _same(
        base,
        _compute(metric, inputs, label),
        label,
        "determinism: computing twice on the same inputs",
        close,
    )
    return base


def _check_pair_metric(
    metric: Metric, inputs: PairInputs, label: str, close: Tolerance, seed: int
) -> None:
    """The pair-metric contract: deterministic, invariant to pair order, in bounds, its
    declared per-pair values averaging to its values, NaN → BadInput."""
    base = _deterministic(metric, inputs, label, close)
    _per_pair_means(metric, inputs, base, label, close)
    order = np.random.default_rng(seed).permutation(len(inputs.pair_ids))
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
    )
    _same(
        base,
        _compute(metric, shuffled, label),
        label,
        "pair order: listing the pairs in another order",
        close,
    )
    _within_bounds(metric, base, label)
    chosen = inputs.chosen.copy()
    chosen[1] = np.nan
    broken = replace(inputs, chosen=chosen)
    try:
        output = metric.compute(broken)
    except BadInput:
        return
    except Exception as error:
        raise ConformanceError(
            f"{label}: a NaN logit should raise rmaudit.errors.BadInput, got "
            f"{type(error).__name__}: {error}"
        ) from None
    raise ConformanceError(
        f"{label}: a NaN logit should raise rmaudit.errors.BadInput, but "
        f"compute returned {short(next(iter(_numbers(output).values()))[0])}"
    )


def _per_pair_means(
    metric: Metric, inputs: PairInputs, base: MetricOutput, label: str, close: Tolerance
) -> None:
    """Each key :meth:`~rmaudit.components.Metric.per_pair` declares is a value ``compute``
    returns, and the mean of its finite per-pair values (one per pair) is that value: what a
    paired comparison checks before it compares a stored number pair by pair."""
    values = {v.key: v.value for v in base.values}
    for key, found in metric.per_pair(inputs).items():
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
        if not np.isclose(mean, values[key], rtol=close.rtol, atol=close.atol):
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
    label: str,
    check: str,
    close: Tolerance,
    *,
    per_prompt_order: np.ndarray | None = None,
) -> None:
    want, have = _numbers(expected), _numbers(got)
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
                a, b, rtol=close.rtol, atol=close.atol, equal_nan=True
            ):
                raise ConformanceError(
                    f"{label}: {key} {what} changed under {check}: "
                    f"expected {short(a)}, got {short(b)}"
                )


def _within_bounds(metric: Metric, output: MetricOutput, label: str) -> None:
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


def _direction(metric: Metric, inputs: MetricInputs, label: str) -> None:
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


def _rejects_nan(metric: Metric, inputs: MetricInputs, label: str) -> None:
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
        try:
            output = metric.compute(_payload(metric, broken))
        except BadInput:
            continue
        except Exception as error:
            raise ConformanceError(
                f"{label}: a NaN in {field} should raise rmaudit.errors.BadInput "
                f'(e.g. MetricInputError, "expected finite scores, got nan"), '
                f"got {type(error).__name__}: {error}"
            ) from None
        raise ConformanceError(
            f"{label}: a NaN in {field} should raise rmaudit.errors.BadInput "
            f"(e.g. MetricInputError), but compute returned "
            f"{short(next(iter(_numbers(output).values()))[0])}"
        )
