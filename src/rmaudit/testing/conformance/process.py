"""Conformance checks of process reward models: ``score_steps`` gives one finite score per
step, the same scores whatever batch a solution arrives in, and the options and identity
behave as the store relies on (the contracts are listed in
:mod:`rmaudit.testing.conformance`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import ValidationError

from rmaudit.components import ProcessRewardModel, Solution
from rmaudit.errors import BadInput
from rmaudit.testing.samples import sample_solutions

from ._common import ConformanceError, describe, instance
from .items import _check_item_component


def check_process_reward_model(
    model: ProcessRewardModel | type[ProcessRewardModel],
    solutions: Sequence[Solution] | None = None,
    *,
    rtol: float = 1e-6,
    atol: float = 1e-9,
) -> None:
    """One finite score per step; the same scores from a fresh instance, one solution per
    call, the batch reversed and a worker thread; an empty step gives a score or
    ``BadInput``, a solution with no steps no score or ``BadInput``; options that validate
    again as they are and refuse an unknown name; an identity of its kind, stable across
    instances."""
    first = instance(model)
    label = describe(first)
    _check_options(first, label)
    fresh = type(first)(first.options)
    if first.identity().get("kind") != "process_reward_model" or fresh.key != first.key:
        raise ConformanceError(
            f"{label}: identity() must name the kind 'process_reward_model' and give the "
            f"same key for the same options, got {first.identity()!r}"
        )

    def run(component: ProcessRewardModel, batch: Sequence[Solution]) -> list[tuple]:
        scores = component.score_steps(batch)
        for solution, steps in zip(batch, scores, strict=False):
            numbers = [float(s) for s in steps]
            if len(numbers) != len(solution.steps) or not all(map(math.isfinite, numbers)):
                raise ConformanceError(
                    f"{label}: score_steps must give one finite score per step "
                    f"({len(solution.steps)}), got {steps!r}"
                )
        return [tuple(float(s) for s in steps) for steps in scores]

    chosen = list(solutions) if solutions is not None else sample_solutions()
    first.check_solutions(chosen)
    _check_item_component(
        first,
        chosen,
        run,
        lambda items: [Solution(items[0].question, ("",))],
        rtol=rtol,
        atol=atol,
    )
    try:
        none = first.score_steps([Solution(chosen[0].question, ())])
    except BadInput:
        return
    except Exception as error:
        raise ConformanceError(
            f"{label}: a solution with no steps should get no score or BadInput, got "
            f"{type(error).__name__}: {error}"
        ) from None
    if [list(steps) for steps in none] != [[]]:
        raise ConformanceError(
            f"{label}: a solution with no steps should get no score or BadInput, got {none!r}"
        )


def _check_options(component: ProcessRewardModel, label: str) -> None:
    options_model = type(component).Options
    dumped = component.options.model_dump()
    try:
        again = options_model.model_validate(dumped)
    except ValidationError as error:
        raise ConformanceError(
            f"{label}: its options do not validate again as they are: {error}"
        ) from None
    if again != component.options:
        raise ConformanceError(f"{label}: its options change when validated again: {again!r}")
    try:
        options_model.model_validate({**dumped, "conformance_unknown_option": 1})
    except ValidationError:
        return
    raise ConformanceError(f"{label}: an unknown option must be an error, not ignored")
