"""RewardMATH's recorded scores (*Evaluating Robustness of Reward Models for Mathematical
Reasoning*, Kim et al., arXiv 2410.01729; github.com/kimsh0507/RewardMATH_official
``results/``): one file per model, a JSON list of records.

* **Per problem** (``results/RewardMATH/<model>_reward.json``, most of ``results/Rewardbench/``):
  ``{problem, solution_reference: [names], score: [...]}``, one score per solution in the
  order of ``solution_reference``; the solution named ``human_to_GPT-4`` (``chosen`` in some
  RewardBench files) is the correct one.  ``score`` holds a classifier's float per solution, a
  rating judge's integer, a PRM's list of step scores, or — a pairwise judge, whose
  ``solution_reference`` names the incorrect solutions only — its verdict ``"A"``/``"B"``
  (null: unparsed) on the correct solution against each, beside ``chosen_position``, the
  letter the correct one was shown as.
* **Per solution** (the PRM files of ``results/Rewardbench/``, and the benchmark's texts in
  the hub dataset's schema): ``{problem, problem_id, solution_type: chosen | rejected,
  eval_solution: [steps], output: {step_scores: [...]}}``, a problem's solutions consecutive.

A solution is keyed within its problem by its name, the correct one by
:data:`CORRECT`; a name that recurs in a problem (77 of RewardMATH's problems list one model's
solution twice) is numbered ``NAME#2``, ``NAME#3`` in the record's order.  RewardBench's two
solutions per problem are keyed by their role, ``chosen`` and ``rejected``: its files name the
incorrect one ``modified_with_GPT-4``, ``unaligned_GPT-4`` or ``rejected``.  Anything else is
``BadInput`` naming the file, the record and the field."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from rmaudit.benchmark.keyed_files import text_key
from rmaudit.benchmark.tabular import read_rows
from rmaudit.components.options import file_digest
from rmaudit.errors import BadInput

from . import shortened

#: the name of the correct solution
CORRECT = "human_to_GPT-4"
#: RewardBench's words for its correct and its incorrect solution
CHOSEN, REJECTED = "chosen", "rejected"
#: how a benchmark keys its solutions: by name (RewardMATH's ten), by role (RewardBench's two)
Layout = Literal["rewardmath", "rewardbench"]
#: what a file's scores are
Kind = Literal["scores", "ratings", "steps", "pairwise"]
LETTERS = ("A", "B")
#: the suffix a results file's name ends with, and the prefix RewardBench's files start with
STEM_SUFFIX, STEM_PREFIX = "_reward", "rewardbench_"


@dataclass(frozen=True)
class RecordedProblem:
    """One problem of a results file: its solutions' keys, the correct one first, and what
    the model gave each.

    ``values`` holds one entry per solution: a score (scores, ratings), a tuple of step
    scores (steps), or a verdict "A", "B" or None (pairwise, whose ``solutions`` are the
    incorrect ones only and ``shown`` the letter the correct one was shown as, per verdict).
    """

    where: str
    problem: str
    solutions: tuple[str, ...]
    values: tuple[Any, ...]
    shown: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return text_key(self.problem)

    def all_solutions(self) -> tuple[str, ...]:
        """Every solution of the problem: a pairwise record's correct one added first."""
        return (CORRECT, *self.solutions) if self.shown else self.solutions


def pairwise_scores(record: RecordedProblem) -> list[float]:
    """A pairwise judge's record as RewardMATH's evaluation scores it, in the order of
    :meth:`RecordedProblem.all_solutions`: the correct solution 1 + the comparisons it won, an
    incorrect one 1 where the correct one beat it and (comparisons + 2) where it lost or the
    verdict is unparsed — so the correct solution is the top pick of a set of solutions
    exactly when it beat each incorrect one there."""
    won = [verdict == shown for verdict, shown in zip(record.values, record.shown, strict=True)]
    return [1.0 + sum(won), *(1.0 if w else float(len(won) + 2) for w in won)]


@dataclass(frozen=True)
class RecordedScores:
    path: Path
    kind: Kind
    problems: tuple[RecordedProblem, ...]


def model_label(path: Path) -> str:
    """A results file's model: its name without ``.json[.gz]``, ``_reward`` and
    ``rewardbench_``."""
    stem = path.name.removesuffix(".gz").removesuffix(".json")
    return stem.removesuffix(STEM_SUFFIX).removeprefix(STEM_PREFIX)


def read_scores(path: Path, layout: Layout) -> RecordedScores:
    """Every record of a results file, checked (read once per content: the benchmark and the
    file's model both read it)."""
    return _read_scores(path, layout, file_digest(path))


@lru_cache(maxsize=64)
def _read_scores(path: Path, layout: Layout, digest: str) -> RecordedScores:
    rows = list(read_rows(path, "json"))
    if not rows:
        raise BadInput("no record", file=str(path))
    if "output" in rows[0][1] and "score" not in rows[0][1]:
        problems = [_from_solutions(p, layout) for p in per_solution(rows)]
        return RecordedScores(path, "steps", tuple(problems))
    kind = _kind(rows)
    return RecordedScores(
        path, kind, tuple(_record(where, row, kind, layout) for where, row in rows)
    )


def _kind(rows: list[tuple[str, dict[str, Any]]]) -> Kind:
    """What the file's scores are, from its first record's."""
    where, row = rows[0]
    score = row.get("score")
    if not isinstance(score, list) or not score:
        raise BadInput("expected a list of scores", file=where, field="score", value=score)
    if any(isinstance(s, str) or s is None for s in score) or "chosen_position" in row:
        return "pairwise"
    if isinstance(score[0], list):
        return "steps"
    integers = all(
        isinstance(s, int) and not isinstance(s, bool) for _, r in rows for s in _list(r)
    )
    return "ratings" if integers else "scores"


def _list(row: dict[str, Any]) -> list[Any]:
    score = row.get("score")
    return score if isinstance(score, list) else []


def _record(where: str, row: dict[str, Any], kind: Kind, layout: Layout) -> RecordedProblem:
    problem = _text(row, "problem", where)
    names = row.get("solution_reference")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise BadInput(
            "expected the solutions' names", file=where, field="solution_reference", value=names
        )
    score = row.get("score")
    if not isinstance(score, list) or len(score) != len(names):
        got = len(score) if isinstance(score, list) else shortened(score)
        raise BadInput(
            f"expected {len(names)} scores, one per solution of solution_reference",
            file=where,
            field="score",
            value=got,
        )
    values = _values(score, kind, where)
    if kind == "pairwise":
        return RecordedProblem(
            where, problem, _incorrect_keys(names, layout, where), values, _shown(row, names, where)
        )
    correct = [name in (CORRECT, CHOSEN) for name in names]
    return _correct_first(where, problem, solution_keys(names, correct, layout, where), values)


def _correct_first(
    where: str, problem: str, keys: tuple[str, ...], values: tuple[Any, ...]
) -> RecordedProblem:
    """The problem with its correct solution first, the others in the record's order."""
    right = next(i for i, key in enumerate(keys) if key in (CORRECT, CHOSEN))
    if right == 0:  # as RewardMATH's files list them
        return RecordedProblem(where, problem, keys, values)
    order = [right, *(i for i in range(len(keys)) if i != right)]
    return RecordedProblem(
        where, problem, tuple(keys[i] for i in order), tuple(values[i] for i in order)
    )


def _values(score: list[Any], kind: Kind, where: str) -> tuple[Any, ...]:
    """A record's values, checked: at once where all are well formed (a results file holds
    ~5,000 of them), else one by one to name the first that is not."""
    if kind == "pairwise" and all(v is None or v in LETTERS for v in score):
        return tuple(score)
    if kind == "steps" and all(type(s) is list and s and _finite(s) for s in score):
        return tuple(tuple(s) for s in score)
    if kind in ("scores", "ratings") and _finite(score):
        return tuple(score)
    return tuple(_value(s, kind, where, f"score[{i}]") for i, s in enumerate(score))


def _finite(values: list[Any]) -> bool:
    return all(type(v) in (int, float) for v in values) and all(map(math.isfinite, values))


def _value(value: Any, kind: Kind, where: str, field: str) -> Any:
    if kind == "pairwise":
        if value is not None and value not in LETTERS:
            raise BadInput(
                'expected a verdict "A", "B" or null', file=where, field=field, value=value
            )
        return value
    if kind == "steps":
        if not isinstance(value, list) or not value:
            raise BadInput(
                "expected a list of step scores, at least one", file=where, field=field, value=value
            )
        return tuple(_number(s, where, f"{field}[{j}]") for j, s in enumerate(value))
    return _number(value, where, field)


def _number(value: Any, where: str, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadInput("expected a finite number", file=where, field=field, value=shortened(value))
    return value


def _shown(row: dict[str, Any], names: list[str], where: str) -> tuple[str, ...]:
    shown = row.get("chosen_position")
    if (
        not isinstance(shown, list)
        or len(shown) != len(names)
        or not all(s in LETTERS for s in shown)
    ):
        raise BadInput(
            f'expected {len(names)} letters "A" or "B": where the correct solution was shown in '
            "each comparison",
            file=where,
            field="chosen_position",
            value=shortened(shown),
        )
    return tuple(shown)


def solution_keys(
    names: Sequence[str], correct: Sequence[bool], layout: Layout, where: str
) -> tuple[str, ...]:
    """The keys of a problem's solutions (their ``names``, which are ``correct``): exactly
    one correct."""
    if sum(correct) != 1:
        raise BadInput(
            f"expected one correct solution, named {CORRECT}"
            + (" or chosen" if layout == "rewardbench" else "")
            + f"; found {sum(correct)}",
            file=where,
            field="solution_reference",
            value=shortened(list(names)),
        )
    if layout == "rewardbench":
        if len(names) != 2:
            raise BadInput(
                "expected RewardBench's two solutions, the chosen and the rejected",
                file=where,
                field="solution_reference",
                value=shortened(list(names)),
            )
        return tuple(CHOSEN if c else REJECTED for c in correct)
    if len(set(names)) == len(names):  # most problems: each name once
        return tuple(CORRECT if right else name for name, right in zip(names, correct, strict=True))
    seen: Counter[str] = Counter()
    keys = []
    for name, right in zip(names, correct, strict=True):
        seen[name] += 1
        keys.append(CORRECT if right else name if seen[name] == 1 else f"{name}#{seen[name]}")
    return tuple(keys)


def _incorrect_keys(names: Sequence[str], layout: Layout, where: str) -> tuple[str, ...]:
    """A pairwise record's keys: every solution it names is an incorrect one."""
    if any(name in (CORRECT, CHOSEN) for name in names):
        raise BadInput(
            "a pairwise record compares the correct solution with each incorrect one: expected "
            "the incorrect ones' names only",
            file=where,
            field="solution_reference",
            value=shortened(list(names)),
        )
    return solution_keys([CORRECT, *names], [True] + [False] * len(names), layout, where)[1:]


@dataclass(frozen=True)
class SolutionRow:
    """One record of the per-solution schema."""

    where: str
    name: str
    correct: bool
    row: dict[str, Any]


def per_solution(rows: Sequence[tuple[str, dict[str, Any]]]) -> Iterator[list[SolutionRow]]:
    """Per-solution records grouped by problem (consecutive records of one ``problem_id``, or
    of one ``problem`` where there is no id)."""
    group: list[SolutionRow] = []
    last: Any = object()
    for where, row in rows:
        problem = row.get("problem_id", row.get("problem"))
        if group and problem != last:
            yield group
            group = []
        last = problem
        kind = row.get("solution_type")
        name = row.get("solution_reference", kind)
        if not isinstance(name, str):
            raise BadInput(
                "expected the solution's name (solution_reference) or its type (solution_type)",
                file=where,
                field="solution_reference",
                value=shortened(name),
            )
        correct = kind == CHOSEN if kind is not None else name in (CORRECT, CHOSEN)
        group.append(SolutionRow(where, name, correct, row))
    if group:
        yield group


def _from_solutions(group: list[SolutionRow], layout: Layout) -> RecordedProblem:
    """A problem from its per-solution records with their PRM's step scores."""
    first = group[0]
    problem = _text(first.row, "problem", first.where)
    keys = solution_keys([s.name for s in group], [s.correct for s in group], layout, first.where)
    values = []
    for solution in group:
        output = solution.row.get("output")
        steps = output.get("step_scores") if isinstance(output, dict) else None
        values.append(_value(steps, "steps", solution.where, "output.step_scores"))
    return _correct_first(first.where, problem, keys, tuple(values))


def _text(row: dict[str, Any], name: str, where: str) -> str:
    value = row.get(name)
    if not isinstance(value, str) or not value.strip():
        raise BadInput("expected a text", file=where, field=name, value=shortened(value))
    return value


@dataclass(frozen=True)
class SolutionTexts:
    """The benchmark's texts (the hub dataset's per-solution schema): each problem's solution
    keys in order and each solution's text, its steps one a line."""

    path: Path
    problems: dict[str, tuple[str, ...]]  # problem key → its solutions' keys
    texts: dict[tuple[str, str], str]  # (problem key, solution key) → text


def read_texts(path: Path, layout: Layout) -> SolutionTexts:
    """A texts file's problems and solutions (JSON, JSON Lines or Parquet, gzipped or not)."""
    problems: dict[str, tuple[str, ...]] = {}
    texts: dict[tuple[str, str], str] = {}
    for group in per_solution(list(read_rows(path))):
        first = group[0]
        key = text_key(_text(first.row, "problem", first.where))
        keys = solution_keys(
            [s.name for s in group], [s.correct for s in group], layout, first.where
        )
        problems[key] = _correct_first(first.where, key, keys, keys).solutions
        for solution, solution_key in zip(group, keys, strict=True):
            texts[key, solution_key] = _steps_text(solution)
    return SolutionTexts(path, problems, texts)


def _steps_text(solution: SolutionRow) -> str:
    steps = solution.row.get("eval_solution")
    if isinstance(steps, str) and steps.strip():
        return steps
    if isinstance(steps, (list, tuple)) and steps and all(isinstance(s, str) for s in steps):
        return "\n".join(steps)
    raise BadInput(
        "expected the solution's steps, a list of texts",
        file=solution.where,
        field="eval_solution",
        value=shortened(steps),
    )
