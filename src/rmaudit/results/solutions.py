"""A process reward model's solutions read back for reading its failures (the TUI's
solutions screen, the report's worst solutions): each solution's steps with the PRM's score
of each, the steps the data marks erroneous, and the first step the PRM flags — the first
scored below the run's threshold, ProcessBench's prediction (docs/prm.md).

Worst first: the solutions where the PRM's first flagged step lies furthest from the data's
first erroneous step (a solution with no error, or no flagged step, counts its end), then
those where the first erroneous step scores furthest above the threshold (a solution
without error: its lowest step furthest below it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rmaudit.metrics.process import first_flagged
from rmaudit.store import Store

#: the threshold of a run whose step metrics store none
DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class StepView:
    text: str
    score: float
    #: the data marks it erroneous
    erroneous: bool


@dataclass(frozen=True)
class SolutionView:
    position: int
    ref: str
    subset: str
    question: str
    steps: tuple[StepView, ...]
    #: the data's first erroneous step (0-based), −1 for none
    first_error: int
    #: the PRM's first step scored below the threshold, −1 for none
    first_flagged: int
    final_answer_correct: bool | None

    @property
    def miss(self) -> int:
        """How many steps the first flagged step lies from the first erroneous one."""
        end = len(self.steps)

        def at(step: int) -> int:
            return step if step >= 0 else end

        return abs(at(self.first_flagged) - at(self.first_error))


def run_threshold(store: Store, run_id: str) -> float:
    """The step threshold the run's step metrics used (the first that stores one)."""
    for row in store.read.metric_rows(run_id):
        threshold = row.params.get("threshold")
        if isinstance(threshold, int | float):
            return float(threshold)
    return DEFAULT_THRESHOLD


def solution_views(store: Store, run_id: str, rm_key: str) -> list[SolutionView]:
    """The run's solutions the PRM scored, worst first."""
    run = store.read.run(run_id)
    if not run.solution_set_key:
        return []
    threshold = run_threshold(store, run_id)
    stored = store.solutions.solution_set(run.solution_set_key)
    scores = store.solutions.step_scores(rm_key, [s.solution_id for s in stored])
    views, margins = [], []
    for row in stored:
        found = scores.get(row.solution_id)
        if found is None or len(found) != len(row.steps):
            continue
        labels = row.labels
        wrong = set(labels.get("erroneous") or ())
        first_error = int(labels.get("first_error", -1))
        values = np.array(found)
        views.append(
            SolutionView(
                row.position,
                row.ref,
                row.subset,
                row.question,
                tuple(
                    StepView(text, score, i in wrong)
                    for i, (text, score) in enumerate(zip(row.steps, found, strict=True))
                ),
                first_error,
                first_flagged(values, threshold),
                labels.get("final_answer_correct"),
            )
        )
        margins.append(
            values[first_error] - threshold if first_error >= 0 else threshold - values.min()
        )
    order = sorted(range(len(views)), key=lambda i: (-views[i].miss, -margins[i], i))
    return [views[i] for i in order]


def step_caption(view: SolutionView, index: int) -> str:
    """``step 3 · score 0.412 · marked erroneous · first flagged``."""
    step = view.steps[index]
    parts = [f"step {index + 1}", f"score {step.score:.3f}"]
    if step.erroneous:
        parts.append("marked erroneous" + (" (the first)" if index == view.first_error else ""))
    if index == view.first_flagged:
        parts.append("first flagged by the PRM")
    return " · ".join(parts)


def solution_badge(view: SolutionView) -> str:
    """``first error step 3, first flagged none (3 steps off)``, 1-based."""

    def named(step: int) -> str:
        return f"step {step + 1}" if step >= 0 else "none"

    return (
        f"first error {named(view.first_error)}, first flagged {named(view.first_flagged)} "
        f"({view.miss} steps off)"
    )
