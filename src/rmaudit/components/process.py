"""Process reward models: a score per step of a solution (docs/prm.md).

An outcome reward model (:class:`~rmaudit.components.RewardModel`) scores a whole response; a
process reward model (PRM) scores each reasoning step, so that the first step it doubts can be
checked against the first step that is wrong (*PRMBench*, arXiv 2501.03124; *ProcessBench*,
arXiv 2412.06559).  A :class:`SolutionSource` gives the solutions a PRM is audited on, each
with what its benchmark says about its steps (:class:`LabelledSolution`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .kinds import Component, OptionsT, PromptSource
from .records import Source

#: what a solution source's labels say, by name (``SolutionSource.labels``, ``Metric.needs``):
#: every erroneous step marked (PRMBench), the first erroneous step (ProcessBench), whether the
#: final answer is correct
STEP_LABELS = ("erroneous_steps", "first_error", "final_answer")


@dataclass(frozen=True)
class Solution:
    """A solution as a PRM is shown it: the question and its steps, in order, each exactly as
    the data holds it."""

    question: str
    steps: tuple[str, ...]

    @property
    def size(self) -> int:
        """Characters of the question and the steps (what orders solutions by length)."""
        return len(self.question) + sum(len(step) for step in self.steps)


@dataclass(frozen=True)
class LabelledSolution:
    """A solution as its benchmark gives it: what the PRM is shown and what the data says.

    ``erroneous`` holds the 0-based positions of the steps the data marks erroneous (those
    within the steps; PRMBench marks every one, ProcessBench only the first) and
    ``first_error`` the first of them, −1 for a solution the data holds correct throughout.
    """

    #: the data's own id (PRMBench: ``class/idx``, ProcessBench: ``id``), for people to read
    ref: str
    solution: Solution
    #: the error class (PRMBench) or split (ProcessBench) it is counted in
    subset: str
    erroneous: tuple[int, ...] = ()
    first_error: int = -1
    #: whether the solution's final answer is correct (None: the data does not say)
    final_answer_correct: bool | None = None
    #: the problem it answers, which several solutions may share (PRMBench modifies one problem
    #: several ways, rewording its question for some): the cluster its metrics' ± groups it
    #: by; empty: the question it shows
    problem: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def steps(self) -> tuple[str, ...]:
        return self.solution.steps

    @property
    def cluster(self) -> str:
        """The text it is clustered by: its problem, else its question."""
        return self.problem or self.solution.question


class SolutionSource(PromptSource[OptionsT]):
    """Solutions with step labels, for auditing PRMs (``[solutions.source]``).

    Registered through ``register_prompt_sources`` like a pair source: as a prompt source it
    gives the distinct questions of its solutions.
    """

    #: which of :data:`STEP_LABELS` its solutions carry; a metric that needs another is refused
    labels: ClassVar[tuple[str, ...]] = ()

    def load_solutions(self) -> list[LabelledSolution]:
        """The solutions in the data's order; a malformed record is ``BadInput`` naming its
        file, line and field."""
        raise NotImplementedError

    def load(self) -> list[tuple[str, dict[str, Any]]]:
        questions = dict.fromkeys(s.solution.question for s in self.load_solutions())
        return [(question, {}) for question in questions]


class ProcessRewardModel(Component[OptionsT]):
    """The process reward model under audit: one real-valued score per step of a solution,
    higher for a step more likely correct (a probability in [0, 1] for the HF conventions)."""

    kind = "process_reward_model"

    def score_steps(self, batch: Sequence[Solution]) -> list[list[float]]:
        """One list per solution, one score per step (``len(steps)`` of them); a solution's
        scores must not depend on the other solutions of the batch."""
        raise NotImplementedError

    def check_solutions(self, solutions: Sequence[Solution]) -> None:
        """Raise ``BadInput`` for solutions ``score_steps`` would refuse without any work (a
        step-scores file without their rows), before a run writes anything."""

    def sources(self) -> tuple[Source, ...]:
        """Where the scores come from (a file, a model id and revision), for provenance."""
        return ()

    def report(self) -> dict[str, Any]:
        """Facts about the scoring so far worth showing after a run, as label → value."""
        return {}
