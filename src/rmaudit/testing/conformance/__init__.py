"""Conformance checks: the contracts rmaudit relies on, run against any component.

The runner stores every item under a key of its inputs and the component's identity, maps
components over batches of any size, and hands metrics a benchmark whose prompts and
responses come in storage order.  That is only sound if components behave as follows, which
these checks test on small inputs, each contract a check with a name, run alone or all
together (:func:`check_component`, or one test per component and check: :func:`check_names`
and :func:`run_check`, as scikit-learn's common tests do).  Every kind is checked for options
that validate again as a run stores them and refuse an unknown name, and an identity of its
kind whose key a fresh instance shares; then:

* **metrics** — the same value whatever the order of the prompts, and whatever the order of a
  prompt's responses (oracle and RM scores permuted together); values inside the declared
  ``bounds``; a perfect RM (Y = J) scoring at least as well as a reversed one (Y = −J) in the
  declared ``higher_is_better`` direction; a :class:`~rmaudit.errors.BadInput` (e.g.
  ``MetricInputError``) for NaN scores rather than a crash or a NaN result; preference-pair
  metrics (``scope = "pairs"``) the same value whatever the order of the pairs, values inside
  the bounds, the per-pair values they declare (``Metric.per_pair``, one per pair) averaging
  to the values they return, and a ``BadInput`` for a NaN logit;
* **oracles, reward models, reference policies, shift perturbers** — the same output from a
  fresh instance with the same options (determinism), the same output for an item whether it
  arrives in one batch, alone, in a reversed batch or from a worker thread (where the local
  executor calls it), either a valid output or a clear ``BadInput`` for an empty text, and a
  ``preferred_batch_items()`` that is None or a positive int;
* **process reward models** — one finite score per step, the same step scores for a solution
  whether it arrives in one batch, alone, in a reversed batch or from a worker thread, a fresh
  instance with the same options giving the same scores and key, a valid output or a clear
  ``BadInput`` for an empty step or a solution with no steps;
* **prompt, pair, solution and benchmark sources** — the same items from a fresh instance,
  items the stages can store (a pair's ids its texts', metadata the store can write as JSON,
  a solution's marked steps its own, a benchmark's records what a benchmark file's must be),
  and a pair or solution source's prompts the distinct prompts of its items, in order;
* **prompt samplers** — distinct indices into the pool, as many as ``planned_size`` says, the
  same from a fresh instance, and every pool ``check_pool`` accepts one ``sample`` draws from;
* **embedders** — one finite row per text, no wider than ``max_dims`` says, the same from a
  fresh instance, and a valid output or ``BadInput`` for an empty text.

Every check raises :class:`ConformanceError` (an ``AssertionError``, so pytest reports it as a
test failure) whose message names the component and the contract it broke.

>>> from rmaudit.testing import check_metric
>>> from rmaudit.default_plugins.metrics import PairwiseAccuracy
>>> check_metric(PairwiseAccuracy)    # silent when the metric conforms
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rmaudit.components import (
    Component,
    Metric,
    MetricInputs,
    PairInputs,
    PairSource,
    SolutionSource,
    StepInputs,
)
from rmaudit.errors import BadInput
from rmaudit.testing.samples import sample_benchmark, sample_pairs, sample_step_inputs

from ._common import COMMON, Checks, ConformanceError, describe, instance
from .items import (
    ITEM_CHECKS,
    check_oracle,
    check_reference_policy,
    check_reward_model,
    check_shift_perturber,
    run_checks,
)
from .metrics import PAIR_CHECKS, RM_CHECKS, RUN_CHECKS, MetricSubject
from .process import PRM_CHECKS, check_process_reward_model
from .selection import EMBEDDER_CHECKS, SAMPLER_CHECKS, check_embedder, check_prompt_sampler
from .sources import ITEM_SOURCE_CHECKS, SOURCE_CHECKS, check_source
from .step_metrics import STEP_CHECKS

__all__ = [
    "KINDS",
    "ConformanceError",
    "check_component",
    "check_embedder",
    "check_metric",
    "check_names",
    "check_oracle",
    "check_process_reward_model",
    "check_prompt_sampler",
    "check_reference_policy",
    "check_reward_model",
    "check_shift_perturber",
    "check_source",
    "kind_of",
    "run_check",
]


def check_metric(
    metric: Metric | type[Metric],
    inputs: MetricInputs | PairInputs | StepInputs | None = None,
    *,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    seed: int = 0,
    only: str | None = None,
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
    component = instance(metric)
    label, scope = describe(component), component.scope
    samples: dict[str, tuple[Callable[..., Any], type]] = {
        "steps": (sample_step_inputs, StepInputs),
        "pairs": (sample_pairs, PairInputs),
    }
    sample, expected = samples.get(scope, (sample_benchmark, MetricInputs))
    given = inputs if inputs is not None else sample(seed=seed)
    if not isinstance(given, expected):
        raise ConformanceError(
            f"{label}: a metric of scope {scope!r} is checked on {expected.__name__}"
        )
    if isinstance(given, MetricInputs):
        try:
            component.check_pool_size(min(len(j) for j in given.oracle))
        except BadInput as error:
            raise ConformanceError(
                f"{label}: its options need bigger pools than the check inputs "
                f"({error.one_line()}); pass inputs=sample_benchmark(per_prompt=...)"
            ) from None
    subject = MetricSubject(component, given, rtol, atol, seed)
    run_checks(component, subject, METRIC_CHECKS[scope], only)


#: a metric's checks, by its scope
METRIC_CHECKS = {"rm": RM_CHECKS, "run": RUN_CHECKS, "pairs": PAIR_CHECKS, "steps": STEP_CHECKS}
#: each of the twelve kinds of components (docs/architecture.md, "Plugin kinds"): its check
#: (every check, or ``only`` one) and its checks by name (a metric's: by its scope)
KINDS: dict[str, tuple[Callable[..., None], Checks]] = {
    "prompt_source": (check_source, SOURCE_CHECKS),
    "pair_source": (check_source, ITEM_SOURCE_CHECKS),
    "prompt_sampler": (check_prompt_sampler, SAMPLER_CHECKS),
    "embedder": (check_embedder, EMBEDDER_CHECKS),
    "reference_policy": (check_reference_policy, ITEM_CHECKS),
    "oracle": (check_oracle, ITEM_CHECKS),
    "benchmark_source": (check_source, SOURCE_CHECKS),
    "reward_model": (check_reward_model, ITEM_CHECKS),
    "process_reward_model": (check_process_reward_model, PRM_CHECKS),
    "solution_source": (check_source, ITEM_SOURCE_CHECKS),
    "shift_perturber": (check_shift_perturber, ITEM_CHECKS),
    "metric": (check_metric, RM_CHECKS),
}


def kind_of(component: Component | type[Component]) -> str:
    """The component's kind among :data:`KINDS` (a pair or solution source is a prompt
    source registered as one, with contracts of its own)."""
    cls = component if isinstance(component, type) else type(component)
    if issubclass(cls, SolutionSource):
        return "solution_source"
    return "pair_source" if issubclass(cls, PairSource) else cls.kind


def _checks_of(cls: type[Component]) -> Checks:
    kind = kind_of(cls)
    if kind not in KINDS:
        raise ValueError(f"expected a component of kind {', '.join(KINDS)}, got {kind!r}")
    return METRIC_CHECKS[cls.scope] if issubclass(cls, Metric) else KINDS[kind][1]


def check_names(component: Component | type[Component]) -> tuple[str, ...]:
    """The names of the kit's checks of ``component`` (its class is enough): every kind's,
    then its kind's."""
    cls = component if isinstance(component, type) else type(component)
    return (*COMMON, *_checks_of(cls))


def run_check(component: Component | type[Component], name: str, **options: Any) -> None:
    """Run the check ``name`` (one of :func:`check_names`) on ``component``; ``options`` are
    its kind's check's (``rtol``, ``atol``, the inputs or items to check it on)."""
    check_component(component, only=name, **options)


def check_component(component: Component | type[Component], **options: Any) -> None:
    """Every check of the component's kind (:data:`KINDS`), with its options."""
    KINDS[kind_of(component)][0](component, **options)
