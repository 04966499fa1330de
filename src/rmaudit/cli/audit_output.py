"""The tables ``rmaudit audit`` prints: the suites (``--list-suites``) and the closing table
of each suite's headline numbers per model, the baselines beside them, and the verdicts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.table import Table

from rmaudit.display.literal import literal
from rmaudit.suites import SUITES
from rmaudit.suites.verdict import SuiteResult, shown, verdict_word


def suites_table(
    data_dir: str | None, locate: Callable, earlier: list[Path], db_path: str
) -> Table:
    """Each suite: what it measures, its size, its data and whether it is found here, or in
    the ``earlier`` data folders that runs stored in ``db_path`` read."""
    table = Table(title="rmaudit audit suites", title_justify="left")
    for header in ("suite", "measures", "size", "data (source and version)", "found"):
        table.add_column(header, overflow="fold", no_wrap=header == "suite")
    for suite in SUITES.values():
        located = locate(suite, data_dir, download=False)
        used = next((root for root in earlier if locate(suite, root, download=False)), None)
        if located:
            where = located.where
        elif used:
            where = f"under {used}, which an audit in {db_path} read: pass --data-dir {used}"
        elif suite.hub:
            where = "no: hub download when named with --suite"
        else:
            where = f"no: fetch {suite.fetch}"
        origin = suite.origin
        if suite.hub:
            origin += (
                f"; from the hub: hf.co/datasets/{suite.hub.repo} at revision "
                f"{suite.hub.revision!r}, not pinned yet: the commit it resolves to is "
                "recorded with each run"
            )
        table.add_row(suite.name, suite.measures, suite.size, origin, literal(where))
    return table


def closing_table(results: list[SuiteResult]) -> Table:
    """One row per suite × model: the suite's headline numbers with their ±, and the verdict
    on the first number against length (paired) and chance."""
    table = Table(
        title="audit summary (a model must beat length, on the paired difference, and chance "
        "on the first number; random is a reference, not a bar; ± standard error; (judge): "
        "a pairwise judge's accuracy, both orders, a tie ½)",
        title_justify="left",
    )
    for header in ("suite", "model", "numbers", "verdict"):
        table.add_column(header, overflow="fold")
    for result in results:
        for index, model in enumerate(result.models):
            numbers = " · ".join(
                f"{name} {shown(cell)}" + (" (judge)" if index_of == 0 and model.convention else "")
                for index_of, (name, cell) in enumerate(model.cells.items())
            )
            table.add_row(
                result.suite.name if index == 0 else "",
                literal(model.label),
                numbers,
                verdict_word(model),
                style="red" if model.passes is False else None,
                end_section=index == len(result.models) - 1,
            )
    return table
