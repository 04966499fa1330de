"""Built-in process reward models (docs/prm.md): the baselines every PRM is audited beside,
and step scores computed elsewhere, read from a file.

``random`` scores each step uniformly in [0, 1), fixed by the seed and the step's solution;
``step-length`` scores a step by its length, n/(n + half) for n characters (longer steps score
higher, ½ at ``half`` characters): a PRM that does not beat it has learnt little beyond how
long a step is, and PRMBench's erroneous steps are longer than its valid ones (a median of 91
characters against 79).  ``step-scores`` reads a file of rows ``question``, ``steps`` (the
step strings, exactly as ``rmaudit audit --write-items`` writes them) and ``step_scores`` (one
number per step), matched to the solutions by question and steps.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from rmaudit import hookimpl
from rmaudit.benchmark import solution_rows as rows
from rmaudit.benchmark.keyed_files import ALL_AT_ONCE
from rmaudit.benchmark.tabular import read_rows
from rmaudit.components import ComponentOptions, ProcessRewardModel, Solution, Source
from rmaudit.components.keys import prompt_id, solution_id
from rmaudit.components.options import HashedDataFile, file_source
from rmaudit.errors import BadInput


class RandomStepsOptions(ComponentOptions):
    seed: int = Field(0, ge=0, description="another seed, another random PRM")


class RandomSteps(ProcessRewardModel[RandomStepsOptions]):
    """A uniform random score in [0, 1) per step, fixed by the seed, the solution and the
    step's position: the floor every PRM is audited beside."""

    name = "random"
    Options = RandomStepsOptions

    def score_steps(self, batch: Sequence[Solution]) -> list[list[float]]:
        # a hash, not a generator: the same score whatever the batch
        scores = []
        for solution in batch:
            head = (
                f"{self.options.seed}:{solution_id(prompt_id(solution.question), solution.steps)}"
            )
            scores.append(
                [
                    int.from_bytes(hashlib.sha256(f"{head}:{i}".encode()).digest()[:8], "big")
                    / 2.0**64
                    for i in range(len(solution.steps))
                ]
            )
        return scores


class StepLengthOptions(ComponentOptions):
    half: float = Field(
        100.0, gt=0, allow_inf_nan=False, description="the length (characters) that scores ½"
    )


class StepLength(ProcessRewardModel[StepLengthOptions]):
    """A step's length as its score, n/(n + half) for n characters: longer steps score
    higher; the baseline a PRM that reads only length would match."""

    name = "step-length"
    Options = StepLengthOptions

    def score_steps(self, batch: Sequence[Solution]) -> list[list[float]]:
        half = self.options.half
        return [[len(step) / (len(step) + half) for step in s.steps] for s in batch]


class StepScoresOptions(ComponentOptions):
    path: HashedDataFile  # its content, not its location, decides whether stored scores hold


class StepScores(ProcessRewardModel[StepScoresOptions]):
    """Step scores computed elsewhere, read from a file (.jsonl or .json, optionally .gz):
    rows of question, steps and step_scores, matched to the solutions by question and steps."""

    name = "step-scores"
    Options = StepScoresOptions

    def __init__(self, options: StepScoresOptions | None = None) -> None:
        super().__init__(options)
        self.table = _read_step_scores(self.options.path)
        self._used: set[tuple[str, tuple[str, ...]]] = set()

    def score_steps(self, batch: Sequence[Solution]) -> list[list[float]]:
        self.check_solutions(batch)
        self._used.update((s.question, s.steps) for s in batch)
        return [list(self.table[(s.question, s.steps)]) for s in batch]

    def check_solutions(self, solutions: Sequence[Solution]) -> None:
        missing = [s for s in solutions if (s.question, s.steps) not in self.table]
        if missing:
            first = missing[0]
            raise BadInput(
                f"no row for {len(missing):,} of the {len(solutions):,} solutions to score "
                f"(rows match by question and steps, exactly as the data holds them: "
                f"rmaudit audit --write-items writes them); first: question "
                f"{first.question[:60]!r} with {len(first.steps)} steps",
                file=str(self.options.path),
            )

    def preferred_batch_items(self) -> int:
        return ALL_AT_ONCE

    def sources(self) -> tuple[Source, ...]:
        return (file_source("step scores", self.options.path),)

    def report(self) -> dict[str, Any]:
        unmatched = len(self.table) - len(self._used)
        if not self._used or not unmatched:
            return {}
        return {"rows matching no scored solution": f"{unmatched:,}"}


def _read_step_scores(path: Path) -> dict[tuple[str, tuple[str, ...]], tuple[float, ...]]:
    """(question, steps) → step scores; a malformed row, or two rows of one solution with
    different scores, is BadInput naming the file and line."""
    table: dict[tuple[str, tuple[str, ...]], tuple[float, ...]] = {}
    for where, record in read_rows(path):
        key = (rows.text(record, "question", where), rows.steps(record, "steps", where))
        scores = rows.step_scores(record, "step_scores", where, len(key[1]))
        if table.setdefault(key, scores) != scores:
            raise BadInput(
                "a second row for the same question and steps, with other step scores",
                file=where,
                field="step_scores",
            )
    if not table:
        raise BadInput("no rows of step scores", file=str(path))
    return table


@hookimpl
def register_process_reward_models(register):
    register(RandomSteps)
    register(StepLength)
    register(StepScores)
