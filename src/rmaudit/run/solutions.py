"""Stage "solutions": the step-labelled solutions a run of process reward models audits
(docs/prm.md), stored once — each question as a prompt, each solution keyed by its question
and steps — as an ordered solution set keyed by the source and every position's solution and
labels, in one transaction: there whole or not at all."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from typing import Any

from rmaudit.components import LabelledSolution, Prompt
from rmaudit.components.keys import content_key, prompt_id, solution_id
from rmaudit.errors import BadInput
from rmaudit.store.solutions import StoredSolution

from .batches import write_whole
from .context import RunContext, prompt_row, required

STAGE = "solutions"


@dataclass(frozen=True)
class SolutionSet:
    """The solutions a run audits, in source order, with their content keys."""

    key: str
    solutions: tuple[LabelledSolution, ...]
    ids: tuple[str, ...]
    #: each solution's question (the prompt the PRM is shown) …
    prompt_ids: tuple[str, ...]
    #: … and its problem (``LabelledSolution.cluster``): what its metrics' ± clusters it by
    problem_ids: tuple[str, ...]

    def repeats(self) -> str:
        """A line where some solutions repeat another of the set (its question and steps): a
        PRM scores them once, each counted at every place it holds ("": none repeats)."""
        repeated = len(self.ids) - len(set(self.ids))
        if not repeated:
            return ""
        return (
            f"solutions: {len(self.ids):,}, {repeated:,} of them the same question and steps as "
            f"another: {len(set(self.ids)):,} scored, each counted wherever it stands in the set"
        )

    def positions(self) -> list[StoredSolution]:
        """Every position as stored."""
        return [
            StoredSolution(
                i, sid, problem, s.ref, s.subset, _labels(s), pid, s.solution.question, s.steps
            )
            for i, (sid, problem, pid, s) in enumerate(
                zip(self.ids, self.problem_ids, self.prompt_ids, self.solutions, strict=True)
            )
        ]


def _labels(solution: LabelledSolution) -> dict[str, Any]:
    return {
        "erroneous": list(solution.erroneous),
        "first_error": solution.first_error,
        "final_answer_correct": solution.final_answer_correct,
        "meta": solution.meta,
    }


def _keyed(positions: list[StoredSolution]) -> list[tuple[str, str, str, str, str]]:
    """What a set's key hashes of each position: its labels as the store spells them."""
    spelled = partial(json.dumps, ensure_ascii=False, sort_keys=True)
    return [(p.solution_id, p.problem_id, p.ref, p.subset, spelled(p.labels)) for p in positions]


def load(ctx: RunContext) -> SolutionSet:
    """Ask the source for its solutions; key them and their set by content."""
    spec = required(ctx.recipe.solution_source, "[solutions.source]")
    source = ctx.component(spec)
    try:
        solutions = tuple(source.load_solutions())
    except BadInput as error:
        raise ctx.located(error, spec) from None
    if not solutions:
        raise BadInput(
            "the solution source gave no solutions", file=ctx.recipe.path, field=spec.field
        )
    prompts = tuple(prompt_id(s.solution.question) for s in solutions)
    problems = tuple(prompt_id(s.cluster) for s in solutions)
    ids = tuple(solution_id(p, s.steps) for p, s in zip(prompts, solutions, strict=True))
    unkeyed = SolutionSet("", solutions, ids, prompts, problems)
    key = content_key("solution-set", source.key, _keyed(unkeyed.positions()))
    return SolutionSet(key, solutions, ids, prompts, problems)


def stage(ctx: RunContext, execute: bool) -> SolutionSet:
    """The solutions, loaded once per run (its plan loads them first) and stored if new."""
    with ctx.timed(STAGE):
        if ctx.loaded_solutions is None:
            ctx.loaded_solutions = load(ctx)
        solution_set: SolutionSet = ctx.loaded_solutions
        total = len(solution_set.ids)
        stored = ctx.store is not None and ctx.store.solutions.has_set(solution_set.key)
        write_whole(ctx, STAGE, total, stored, execute, partial(_write, ctx, solution_set))
        return solution_set


def _write(ctx: RunContext, solution_set: SolutionSet) -> None:
    with ctx.db.transaction():
        ctx.add_components(ctx.component(ctx.recipe.solution_source))
        # the problems too: the per-question values of the metrics are keyed by them
        ctx.db.items.add_prompts(
            prompt_row(Prompt(pid, text))
            for s, ids in zip(
                solution_set.solutions,
                zip(solution_set.prompt_ids, solution_set.problem_ids, strict=True),
                strict=True,
            )
            for pid, text in zip(ids, (s.solution.question, s.cluster), strict=True)
        )
        positions = solution_set.positions()
        ctx.db.solutions.add(positions)
        ctx.db.solutions.add_set(solution_set.key, positions)
