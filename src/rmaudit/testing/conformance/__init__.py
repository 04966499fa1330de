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
  ``BadInput`` for an empty step or a solution with no steps, and options that validate again
  as they are and refuse an unknown name.

Every check raises :class:`ConformanceError` (an ``AssertionError``, so pytest reports it as a
test failure) whose message names the component and the contract it broke.

>>> from rmaudit.testing import check_metric
>>> from rmaudit.default_plugins.metrics import PairwiseAccuracy
>>> check_metric(PairwiseAccuracy)    # silent when the metric conforms
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rmaudit.components import Component

from ._common import ConformanceError
from .items import check_oracle, check_reference_policy, check_reward_model, check_shift_perturber
from .metrics import check_metric
from .process import check_process_reward_model

__all__ = [
    "ConformanceError",
    "check_component",
    "check_metric",
    "check_oracle",
    "check_process_reward_model",
    "check_reference_policy",
    "check_reward_model",
    "check_shift_perturber",
]


def check_component(component: Component | type[Component], **kwargs: Any) -> None:
    """Dispatch to the check of the component's kind (metric, oracle, RM, PRM, policy,
    perturber)."""
    checks: dict[str, Callable[..., None]] = {
        "metric": check_metric,
        "oracle": check_oracle,
        "reward_model": check_reward_model,
        "process_reward_model": check_process_reward_model,
        "reference_policy": check_reference_policy,
        "shift_perturber": check_shift_perturber,
    }
    if component.kind not in checks:
        raise ValueError(
            f"expected a component of kind {', '.join(checks)}, got {component.kind!r}"
        )
    checks[component.kind](component, **kwargs)
