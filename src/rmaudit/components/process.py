"""Process reward models: a score per step of a solution (docs/prm.md).

An outcome reward model (:class:`~rmaudit.components.RewardModel`) scores a whole response; a
process reward model (PRM) scores each reasoning step, so that the first step it doubts can be
checked against the first step that is wrong (*PRMBench*, arXiv 2501.03124; *ProcessBench*,
arXiv 2412.06559).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .kinds import Component, OptionsT
from .records import Source


@dataclass(frozen=True)
class Solution:
    """A solution as a PRM is shown it: the question and its steps, in order, each exactly as
    the data holds it."""

    question: str
    steps: tuple[str, ...]


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
