"""The recorded judges' figures under their publishers' rules, beside rmaudit's, as ``rmaudit
audit`` prints them after a suite's summary (docs/judges.md, "Recorded judges")."""

from __future__ import annotations

import math
from functools import partial

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rmaudit.display.formatting import format_number
from rmaudit.display.literal import literal
from rmaudit.metrics.publishers import JudgeBenchScore, LLMBarFigures
from rmaudit.suites.publisher_figures import PublisherFigures

from .table_fit import LABEL_WIDTH, Layout, fitting


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
