"""What runs of process reward models store (docs/prm.md, schema ``M012``): solutions keyed
by their question and steps, the ordered solution sets runs audit with what the data says of
each position, and one score per step and PRM.

A solution's step scores are written in one call (a savepoint), so a solution with any step
score stored has all of them: "which solutions has this PRM scored" asks for any.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from .damage import damaged_value
from .json_columns import dumps, json_object
from .tables import Table, chunks, marks


class StoredSolution(NamedTuple):
    """One position of a solution set (``solution_sets``, and its solution's row of
    ``solutions``), written and read back: the solution, its problem (what the metrics cluster
    by), its question and what the data says of it there (``labels``)."""

    position: int
    solution_id: str
    problem_id: str
    ref: str
    subset: str
    labels: dict[str, Any]
    prompt_id: str
    question: str
    steps: tuple[str, ...]


class Solutions(Table):
    def add(self, rows: Iterable[StoredSolution]) -> None:
        """The positions' solutions (id, question, steps)."""
        self._insert(
            "insert or ignore into solutions (id, prompt_id, steps) values (?, ?, ?)",
            ((s.solution_id, s.prompt_id, dumps(list(s.steps))) for s in rows),
        )

    def stored(self, ids: Sequence[str]) -> set[str]:
        return self._stored("select id from solutions where id in", [], ids)

    def add_set(self, key: str, rows: Sequence[StoredSolution]) -> None:
        """The positions of a solution set, in order."""
        self._insert(
            "insert or ignore into solution_sets (solution_set_key, position, solution_id, "
            "problem_id, ref, subset, labels) values (?, ?, ?, ?, ?, ?, ?)",
            ((key, s.position, *s[1:5], dumps(s.labels)) for s in rows),
        )

    def has_set(self, key: str) -> bool:
        return self._any("solution_sets", "solution_set_key = ?", key)

    def set_size(self, key: str) -> tuple[int, int]:
        """(solutions, distinct problems) of a stored solution set."""
        solutions, questions = self.store.execute(
            "select count(*), count(distinct problem_id) from solution_sets "
            "where solution_set_key = ?",
            [key],
        ).fetchone()
        return int(solutions), int(questions)

    def solution_set(self, key: str) -> list[StoredSolution]:
        """Every position of a stored solution set, in order, with its solution's texts."""
        rows = self.store.execute(
            "select s.position, s.solution_id, s.problem_id, s.ref, s.subset, s.labels, "
            "o.prompt_id, p.text, o.steps from solution_sets s join solutions o "
            "on o.id = s.solution_id join prompts p on p.id = o.prompt_id "
            "where s.solution_set_key = ? "
            "order by s.position",
            [key],
        ).fetchall()
        found = []
        for row in rows:
            *head, steps = row
            position, solution_id, problem_id, ref, subset, labels, prompt_id, question = head
            found.append(
                StoredSolution(
                    position,
                    solution_id,
                    problem_id,
                    ref,
                    subset,
                    json_object(labels, self.store.path, "solution_sets.labels"),
                    prompt_id,
                    question,
                    tuple(self._steps(steps)),
                )
            )
        return found

    def _steps(self, text: str) -> list[str]:
        try:
            steps = json.loads(text)
        except (TypeError, ValueError):
            raise damaged_value(self.store.path, "solutions.steps", text) from None
        if not isinstance(steps, list):
            raise damaged_value(self.store.path, "solutions.steps", text)
        return steps

    # -- step scores --------------------------------------------------------------------
    def add_step_scores(self, prm_key: str, scores: Mapping[str, Sequence[float]]) -> None:
        """``scores``: solution id → its step scores in order, as :meth:`step_scores` reads."""
        self._insert(
            "insert or ignore into step_scores (prm_key, solution_id, step, score) "
            "values (?, ?, ?, ?)",
            (
                (prm_key, sid, step, float(score))
                for sid, steps in scores.items()
                for step, score in enumerate(steps)
            ),
        )

    def scored(self, prm_key: str, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` the PRM has step scores of."""
        return self._stored(
            "select distinct solution_id from step_scores where prm_key = ? and solution_id in",
            [prm_key],
            ids,
        )

    def step_scores(self, prm_key: str, ids: Sequence[str]) -> dict[str, list[float]]:
        """Solution id → its step scores in order, for those of ``ids`` the PRM scored."""
        found: dict[str, list[float]] = {}
        for chunk in chunks(list(dict.fromkeys(ids))):
            rows = self.store.execute(
                "select solution_id, score from step_scores where prm_key = ? "
                f"and solution_id in ({marks(chunk)}) order by solution_id, step",
                [prm_key, *chunk],
            ).fetchall()
            for sid, score in rows:
                if not isinstance(score, float | int):
                    raise damaged_value(self.store.path, "step_scores.score", score)
                found.setdefault(sid, []).append(float(score))
        return found
