"""Conformance checks: the contracts rmaudit relies on, run against any component.

The runner stores every item under a key of its inputs and the component's identity, maps
components over batches of any size, and hands metrics a benchmark whose prompts and
responses come in storage order.  That is only sound if components behave as follows, which
these checks test on small inputs:

* **metrics** — the same value whatever the order of the prompts, and whatever the order of a
  prompt's responses (oracle and RM scores permuted together); values inside the declared
  ``bounds``; a perfect RM (Y = J) scoring at least as well as a reversed one (Y = −J) in the
  declared ``higher_is_better`` direction; a :class:`~rmaudit.errors.BadInput` (e.g.
  ``MetricInputError``) for NaN scores rather than a crash or a NaN result; preference-pair
  metrics (``scope = "pairs"``) the same value whatever the order of the pairs, values inside
  the bounds, and a ``BadInput`` for a NaN logit;
* **oracles, reward models, reference policies, shift perturbers** — the same output from a
  fresh instance with the same options (determinism), the same output for an item whether it
  arrives in one batch, alone, in a reversed batch or from a worker thread (where the local
  executor calls it), either a valid output or a clear ``BadInput`` for an empty text, and a
  ``preferred_batch_items()`` that is None or a positive int.

Every check raises :class:`ConformanceError` (an ``AssertionError``, so pytest reports it as a
test failure) whose message names the component and the contract it broke.

>>> from rmaudit.testing import check_metric
>>> from rmaudit.default_plugins.metrics import PairwiseAccuracy
>>> check_metric(PairwiseAccuracy)    # silent when the metric conforms
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from rmaudit.components import (
    Component,
    Metric,
    MetricInputs,
    MetricOutput,
    Oracle,
    OracleLabel,
    PairInputs,
    Prompt,
    ReferencePolicy,
    Response,
    RewardModel,
    ShiftPerturber,
    StudyInputs,
)
from rmaudit.components.keys import prompt_id, response_id
from rmaudit.errors import BadInput
from rmaudit.testing.samples import (
    sample_benchmark,
    sample_pairs,
    sample_prompts,
    sample_responses,
    sample_texts,
)

__all__ = [
    "ConformanceError",
    "check_component",
    "check_metric",
    "check_oracle",
    "check_reference_policy",
    "check_reward_model",
    "check_shift_perturber",
]


class ConformanceError(AssertionError):
    """A component breaks a contract of rmaudit; the message names the component and the check."""


# -- metrics ------------------------------------------------------------------------------


def _check_pair_metric(
    metric: Metric, inputs: PairInputs, label: str, *, rtol: float, atol: float, seed: int
) -> None:
    """The pair-metric contract: deterministic, invariant to pair order, in bounds, NaN →
    BadInput."""
    base = _compute(metric, inputs, label)
    close = dict(rtol=rtol, atol=atol)
    _same(
        base,
        _compute(metric, inputs, label),
        label,
        "determinism: computing twice on the same inputs",
        **close,
    )
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
    )
    _same(
        base,
        _compute(metric, shuffled, label),
        label,
        "pair order: listing the pairs in another order",
        **close,
    )
    _within_bounds(metric, base, label)
    chosen = inputs.chosen.copy()
    chosen[1] = np.nan
    broken = PairInputs(
        inputs.pair_ids, chosen, inputs.rejected, inputs.subsets, inputs.meta, inputs.shifted
    )
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
        f"compute returned {_short(next(iter(_numbers(output).values()))[0])}"
    )


def check_metric(
    metric: Metric | type[Metric],
    inputs: MetricInputs | PairInputs | None = None,
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
    per-RM metric, does not apply to it.
    """
    metric = _instance(metric)
    label = _describe(metric)
    if metric.scope == "pairs":
        _check_pair_metric(
            metric,
            inputs if inputs is not None else sample_pairs(seed=seed),
            label,
            rtol=rtol,
            atol=atol,
            seed=seed,
        )
        return
    inputs = inputs if inputs is not None else sample_benchmark(seed=seed)
    try:
        metric.check_pool_size(min(len(j) for j in inputs.oracle))
    except BadInput as error:
        raise ConformanceError(
            f"{label}: its options need bigger pools than the check inputs "
            f"({error.one_line()}); pass inputs=sample_benchmark(per_prompt=...)"
        ) from None
    base = _compute(metric, inputs, label)
    close = dict(rtol=rtol, atol=atol)
    _same(
        base,
        _compute(metric, inputs, label),
        label,
        "determinism: computing twice on the same inputs",
        **close,
    )

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
        per_prompt_order=order,
        **close,
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
        **close,
    )

    _within_bounds(metric, base, label)
    if metric.scope == "rm":
        _direction(metric, inputs, label)
    _rejects_nan(metric, inputs, label)


def _payload(metric: Metric, inputs: MetricInputs) -> MetricInputs | StudyInputs:
    """What ``compute`` takes: one RM's inputs, or for a run-level metric a study of three RMs."""
    if metric.scope != "run":
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


def _compute(metric: Metric, inputs: MetricInputs, label: str) -> MetricOutput:
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
    *,
    per_prompt_order: np.ndarray | None = None,
    rtol: float,
    atol: float,
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
            if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
                raise ConformanceError(
                    f"{label}: {key} {what} changed under {check}: "
                    f"expected {_short(a)}, got {_short(b)}"
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
                    f"inputs, got {_short(array)}"
                )
            if (low is not None and array.min() < low - slack) or (
                high is not None and array.max() > high + slack
            ):
                raise ConformanceError(
                    f"{label}: {key} {what}: expected values within the "
                    f"declared bounds {metric.bounds}, got {_short(array)}"
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
                f"({direction} is better); expected {_short(value)} to be {direction} than or "
                f"equal to {_short(worse)}"
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
            f"{_short(next(iter(_numbers(output).values()))[0])}"
        )


# -- item components ----------------------------------------------------------------------


def check_oracle(
    oracle: Oracle | type[Oracle],
    pairs: Sequence[tuple[Prompt, Response]] | None = None,
    *,
    rtol: float = 1e-6,
    atol: float = 1e-9,
) -> None:
    """Determinism, batch-size invariance and empty-response handling of an oracle's ``label``."""

    def run(component: Oracle, batch):
        labels = component.label(batch)
        for item in labels:
            if not isinstance(item, OracleLabel) or not math.isfinite(item.score):
                raise ConformanceError(
                    f"{_describe(component)}: label must return OracleLabels with "
                    f"finite scores, got {item!r}"
                )
        return [(item.score, *item.samples) for item in labels]

    _check_item_component(
        oracle,
        pairs if pairs is not None else _sample_pairs(),
        run,
        _with_empty_response,
        rtol=rtol,
        atol=atol,
    )


def check_reward_model(
    model: RewardModel | type[RewardModel],
    pairs: Sequence[tuple[Prompt, Response]] | None = None,
    *,
    rtol: float = 1e-6,
    atol: float = 1e-9,
) -> None:
    """Determinism, batch-size invariance and empty-response handling of an RM's ``score``."""

    def run(component: RewardModel, batch):
        scores = [float(s) for s in component.score(batch)]
        if not all(math.isfinite(s) for s in scores):
            raise ConformanceError(
                f"{_describe(component)}: score must return finite numbers, got {scores}"
            )
        return [(s,) for s in scores]

    _check_item_component(
        model,
        pairs if pairs is not None else _sample_pairs(),
        run,
        _with_empty_response,
        rtol=rtol,
        atol=atol,
    )


def check_reference_policy(
    policy: ReferencePolicy | type[ReferencePolicy],
    requests: Sequence[tuple[Prompt, int]] | None = None,
) -> None:
    """Determinism, batch-size invariance and empty-prompt handling of a policy's ``generate``."""

    def run(component: ReferencePolicy, batch):
        generations = component.generate(batch)
        for g in generations:
            if not isinstance(getattr(g, "text", None), str):
                raise ConformanceError(
                    f"{_describe(component)}: generate must return Generations with text, got {g!r}"
                )
        return [(g.text, repr(sorted(g.meta.items()))) for g in generations]

    if requests is None:
        requests = [(p, i) for p in sample_prompts() for i in range(3)]
    _check_item_component(policy, requests, run, _with_empty_prompt, rtol=0.0, atol=0.0)


def check_shift_perturber(
    perturber: ShiftPerturber | type[ShiftPerturber],
    texts: Sequence[str] | None = None,
    *,
    seed: int = 0,
) -> None:
    """Determinism under a seed, no hidden state across calls, and empty-text handling."""

    def run(component: ShiftPerturber, batch):
        out = [component.perturb(text, seed=seed) for text in batch]
        if not all(isinstance(text, str) for text in out):
            raise ConformanceError(f"{_describe(component)}: perturb must return str, got {out!r}")
        return [(text,) for text in out]

    texts = list(texts) if texts is not None else sample_texts()
    _check_item_component(perturber, texts, run, lambda items: [""], rtol=0.0, atol=0.0)


def check_component(component: Component | type[Component], **kwargs: Any) -> None:
    """Dispatch to the check of the component's kind (metric, oracle, RM, policy, perturber)."""
    checks: dict[str, Callable[..., None]] = {
        "metric": check_metric,
        "oracle": check_oracle,
        "reward_model": check_reward_model,
        "reference_policy": check_reference_policy,
        "shift_perturber": check_shift_perturber,
    }
    if component.kind not in checks:
        raise ValueError(
            f"expected a component of kind {', '.join(checks)}, got {component.kind!r}"
        )
    checks[component.kind](component, **kwargs)


def _check_item_component(
    component, items: Sequence, run, with_empty, *, rtol: float, atol: float
) -> None:
    first = _instance(component)
    label = _describe(first)
    items = list(items)
    all_at_once = _run_batch(run, first, items, label)

    def compare(check: str, got: list) -> None:
        for item_index, (a, b) in enumerate(zip(all_at_once, got, strict=True)):
            if not _close(a, b, rtol, atol):
                raise ConformanceError(
                    f"{label}: item {item_index} changed under {check}: expected {a!r}, got {b!r}"
                )

    fresh = type(first)(first.options)
    compare(
        "determinism: a fresh instance with the same options", _run_batch(run, fresh, items, label)
    )
    compare(
        "batch size: one item per call",
        [_run_batch(run, first, [item], label)[0] for item in items],
    )
    compare("batch order: the batch reversed", _run_batch(run, first, items[::-1], label)[::-1])
    with ThreadPoolExecutor(max_workers=1) as worker:  # where the local executor calls it
        try:
            in_thread = worker.submit(_run_batch, run, first, items, label).result()
        except ConformanceError:
            raise
        except Exception as error:
            raise ConformanceError(
                f"{label}: failed when called from a worker thread, as the "
                f"local executor calls it: {type(error).__name__}: {error}"
            ) from None
    compare("thread: called from a worker thread", in_thread)
    preferred = first.preferred_batch_items()
    if preferred is not None and not (isinstance(preferred, int) and preferred >= 1):
        raise ConformanceError(
            f"{label}: preferred_batch_items() should be None or an int >= 1, got {preferred!r}"
        )
    try:
        run(first, with_empty(items))
    except BadInput:
        pass  # a clear, located refusal is fine
    except ConformanceError:
        raise
    except Exception as error:
        raise ConformanceError(
            f"{label}: an empty text should give a valid output or raise "
            f"rmaudit.errors.BadInput, got {type(error).__name__}: {error}"
        ) from None


def _run_batch(run, component, batch, label) -> list:
    out = run(component, batch)
    if len(out) != len(batch):
        raise ConformanceError(
            f"{label}: expected one output per input ({len(batch)}), got {len(out)}"
        )
    return out


def _close(a: tuple, b: tuple, rtol: float, atol: float) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, float) and isinstance(y, float):
            if not math.isclose(x, y, rel_tol=rtol, abs_tol=atol):
                return False
        elif x != y:
            return False
    return True


def _sample_pairs() -> list[tuple[Prompt, Response]]:
    prompts = sample_prompts()
    by_id = {p.id: p for p in prompts}
    return [(by_id[r.prompt_id], r) for r in sample_responses(prompts)]


def _with_empty_response(pairs):
    prompt, response = pairs[0]
    return [(prompt, Response(response_id("conformance-empty", prompt.id, 0), prompt.id, 0, ""))]


def _with_empty_prompt(requests):
    prompt, _ = requests[0]
    return [(Prompt(prompt_id(""), "", dict(prompt.meta)), 0)]


def _instance(component):
    return component() if isinstance(component, type) else component


def _describe(component: Component) -> str:
    cls = type(component)
    return f"{component.kind} {component.name!r} ({cls.__module__}.{cls.__name__})"


def _short(array: np.ndarray | None) -> str:
    return np.array2string(np.asarray(array), precision=6, threshold=8)
