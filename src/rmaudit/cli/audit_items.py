"""``rmaudit audit --write-items FILE``: each suite's items made and stored as a run makes
them, then written for scoring elsewhere (:mod:`rmaudit.suites.items_file`): the responses of
the suites of reward models, or the solutions of the suites of process reward models."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

from rmaudit.components import Component
from rmaudit.display.literal import literal
from rmaudit.recipe import Recipe
from rmaudit.store import Store
from rmaudit.suites import Suite
from rmaudit.suites.items_file import check_solutions_format, item_rows, solution_rows, write_items
from rmaudit.suites.preflight import preflight_suites

from .console import console


def write_suite_items(
    planned: Sequence[tuple[Suite, Recipe, dict[str, Component]]], db_path: str, path: Path
) -> None:
    """The suites' items stored and written to ``path``; nothing is scored."""
    process = planned[0][0].solutions is not None
    if process:
        check_solutions_format(path)
    # every suite's data checked before the DB is written (records all rejected, say)
    runners = preflight_suites(planned, db_path)
    names = [suite.name for suite, _, _ in planned]
    with closing(Store.open(db_path)) as store:
        for runner in runners:
            runner.attach(store)
        if process:
            rows = solution_rows(zip(names, [r.solutions_to_score() for r in runners], strict=True))
        else:
            rows = item_rows(zip(names, [r.items_to_score() for r in runners], strict=True))
    write_items(path, rows)
    what, then = (
        (
            "solutions",
            "add a step_scores list (one number per step) to each row, then "
            "rmaudit audit step-scores:FILE with the same --suite",
        )
        if process
        else (
            "responses",
            "add a score column, then rmaudit audit scores:FILE with the same --suite and --sample",
        )
    )
    console(stderr=True).print(
        literal(f"wrote {len(rows):,} {what} to score ({', '.join(names)}) to {path}: {then}")
    )
