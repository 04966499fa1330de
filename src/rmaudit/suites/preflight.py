"""Every suite of an audit planned before its DB is opened for writing (docs/architecture.md,
"Errors and exit codes"): each suite's data, the models' scores files against its items and
the DB's schema are checked first, so a refused input leaves the DB absent or byte-identical,
and a scores file that matches another suite's items says which."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rmaudit.components import Component
from rmaudit.components.scoring_checks import CheckSettings
from rmaudit.errors import BadInput
from rmaudit.recipe import Recipe
from rmaudit.results.run_index import open_if_stored
from rmaudit.run import Runner
from rmaudit.store.access import check_writable

from . import Suite


def preflight_suites(
    planned: Sequence[tuple[Suite, Recipe, dict[str, Component]]],
    db_path: str,
    checks: CheckSettings | None = None,
) -> list[Runner]:
    """One runner per suite (its models checked as ``checks`` say), its plan made
    (``Runner.preflight``) on the DB opened read-only; the first suite's refusal is raised
    once every suite is planned."""
    check_writable(db_path)
    stored = open_if_stored(db_path)
    runners, refused = [], {}
    try:
        if stored is not None:
            stored.check_schema()
        for suite, recipe, components in planned:
            runner = Runner(recipe, stored, components=components, checks=checks)
            try:
                runner.preflight()
            except BadInput as error:
                refused[suite.name] = error
            runners.append(runner)
    finally:
        if stored is not None:
            stored.close()
    if refused:
        name, first = next(iter(refused.items()))
        matching = [suite.name for suite, _, _ in planned if suite.name not in refused]
        if matching and _models_file(first, planned):
            flags = " ".join(f"--suite {s}" for s in matching)
            raise BadInput(
                f"{first.problem}; suite {name}: the file matches the items of suite "
                f"{', '.join(matching)} (audit {'it' if len(matching) == 1 else 'them'} "
                f"alone with {flags})",
                file=first.file,
                field=first.field,
                value=first.value,
            )
        raise first
    return runners


def _models_file(
    error: BadInput, planned: Sequence[tuple[Suite, Recipe, dict[str, Component]]]
) -> bool:
    """Whether ``error`` names a file a model reads (a scores file), not a suite's data."""
    if error.file is None:
        return False
    file, _, line = error.file.rpartition(":")
    named = Path(file if line.isdigit() else error.file).resolve()
    return any(
        Path(str(path)).resolve() == named
        for _, recipe, _ in planned
        for spec in recipe.reward_models
        if (path := getattr(spec.options, "path", None)) is not None
    )
