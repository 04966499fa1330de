"""The tables ``rmaudit audit`` prints: the suites (``--list-suites``), the closing table
of each suite's headline numbers per model, the baselines beside them, and the verdicts, and
the recorded judges' figures under their publishers' rules."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rmaudit.display.formatting import format_number
from rmaudit.display.literal import literal
from rmaudit.metrics.publishers import JudgeBenchScore, LLMBarFigures
from rmaudit.suites import SUITES
from rmaudit.suites.publisher_figures import PublisherFigures
from rmaudit.suites.verdict import SuiteResult, shown, verdict_word

from .table_fit import LABEL_WIDTH, Layout, fitting


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
        measures = suite.measures
        if suite.recorded:
            measures += f"; --recorded-judges: {suite.recorded.where}"
        if suite.hub:
            origin += (
                f"; from the hub: hf.co/datasets/{suite.hub.repo} at revision "
                f"{suite.hub.revision!r}, not pinned yet: the commit it resolves to is "
                "recorded with each run"
            )
        table.add_row(suite.name, measures, suite.size, origin, literal(where))
    return table


def closing_table(results: list[SuiteResult]) -> Table:
    """One row per suite × model: the suite's headline numbers with their ±, and the verdict
    on the first number against length (paired) and chance."""
    table = Table(
        title="audit summary (a model must beat length, on the paired difference, and chance "
        "on the first number; random is a reference, not a bar; ± standard error)",
        title_justify="left",
    )
    for header in ("suite", "model", "numbers", "verdict"):
        table.add_column(header, overflow="fold")
    for result in results:
        for index, model in enumerate(result.models):
            numbers = " · ".join(f"{name} {shown(cell)}" for name, cell in model.cells.items())
            table.add_row(
                result.suite.name if index == 0 else "",
                literal(model.label),
                numbers,
                verdict_word(model),
                style="red" if model.passes is False else None,
                end_section=index == len(result.models) - 1,
            )
    return table


def publisher_tables(out: Console, figures: list[PublisherFigures]) -> list[Table]:
    """A suite's recorded judges under their publisher's rule beside rmaudit's number, one row
    per judge; the subsets spread over as many tables as ``out``'s width needs."""
    if not figures:
        return []
    groups = list(dict.fromkeys(group for f in figures for group in f.groups))
    layouts: list[Layout] = [
        partial(_publisher_tables, figures, groups, size) for size in range(len(groups), 0, -1)
    ]
    return fitting(out, layouts)


def _publisher_tables(
    figures: list[PublisherFigures], groups: list[str], per_table: int
) -> list[Table]:
    first = figures[0]
    llmbar = first.publisher == "LLMBar"
    tables = []
    for start in range(0, len(groups), per_table):
        table = Table(
            title=None
            if start
            else f"{first.publisher}'s own figures beside rmaudit's ({first.rule}; rmaudit: a "
            "judge's accuracy in both orders, a tie ½, a pair unparsed in both orders left "
            "out; a reward model's pair accuracy)",
            title_justify="left",
        )
        table.add_column("model", max_width=LABEL_WIDTH, overflow="fold")
        chunk = groups[start : start + per_table]
        for group in chunk:
            table.add_column(f"{group}\nrmaudit", justify="right")
            for name in ("Acc.", "Agr.") if llmbar else (first.publisher,):
                table.add_column(f"\n{name}", justify="right")
        for f in figures:
            cells: list[Text | str] = [literal(f.label)]
            for group in chunk:
                counts = f.groups.get(group)
                cells.append(_number(f.rmaudit.get(group)))
                if isinstance(counts, LLMBarFigures):
                    cells += [format_number(counts.accuracy), format_number(counts.agreement)]
                elif isinstance(counts, JudgeBenchScore):
                    cells.append(format_number(counts.score))
                else:
                    cells += ["—"] * (2 if llmbar else 1)
            table.add_row(*cells)
        tables.append(table)
    return tables


def _number(value: float | None) -> str:
    return "—" if value is None or not math.isfinite(value) else format_number(value)
