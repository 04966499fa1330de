"""Conformance checks of process reward models: ``score_steps`` gives one finite score per
step, the same scores whatever batch a solution arrives in, and a solution with no steps
no score (the contracts are listed in :mod:`rmaudit.testing.conformance`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rmaudit.components import ProcessRewardModel, Solution
from rmaudit.testing.samples import sample_solutions

from ._common import Checks, ConformanceError, describe, instance, valid_or_refused
from .items import ITEM_CHECKS, ItemSubject, run_checks


def _no_steps(subject: ItemSubject) -> None:
    """A solution with no steps gets no score, or ``BadInput``."""
    label = describe(subject.component)
    what = "a solution with no steps should get no score or BadInput; it"
    solution = Solution(subject.items[0].question, ())
    none = valid_or_refused(label, what, lambda: subject.component.score_steps([solution]))
    if none is not None and [list(steps) for steps in none] != [[]]:
        raise ConformanceError(
            f"{label}: a solution with no steps should get no score or BadInput, got {none!r}"
        )


PRM_CHECKS: Checks = {**ITEM_CHECKS, "no_steps": _no_steps}


def check_process_reward_model(
    model: ProcessRewardModel | type[ProcessRewardModel],
    solutions: Sequence[Solution] | None = None,
    *,
    rtol: float = 1e-6,
    atol: float = 1e-9,
    only: str | None = None,
) -> None:
    """One finite score per step; the same scores from a fresh instance, one solution per
    call, the batch reversed and a worker thread; an empty step gives a score or
    ``BadInput``, a solution with no steps no score or ``BadInput``."""

    def run(component: ProcessRewardModel, batch: Sequence[Solution]) -> list[tuple]:
        scores = component.score_steps(batch)
        for solution, steps in zip(batch, scores, strict=False):
            numbers = [float(s) for s in steps]
            if len(numbers) != len(solution.steps) or not all(map(math.isfinite, numbers)):
                raise ConformanceError(
                    f"{describe(component)}: score_steps must give one finite score per step "
                    f"({len(solution.steps)}), got {steps!r}"
                )
        return [tuple(float(s) for s in steps) for steps in scores]

    first = instance(model)
    chosen = list(solutions) if solutions is not None else sample_solutions()
    first.check_solutions(chosen)
    empty_step = lambda items: [Solution(items[0].question, ("",))]  # noqa: E731
    subject = ItemSubject(first, chosen, run, empty_step, rtol, atol)
    run_checks(first, subject, PRM_CHECKS, only)
