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
from rmaudit.metrics.publishers import OVERALL, JudgeBenchScore, LLMBarFigures, RewardMathFigures
from rmaudit.suites.publisher_figures import PublisherFigures, shared_notes

from .table_fit import LABEL_WIDTH, Layout, fitting


def publisher_tables(out: Console, figures: list[PublisherFigures]) -> list[Table]:
    """A suite's recorded judges under their publisher's rule beside rmaudit's number, one row
    per judge; the subsets spread over as many tables as ``out``'s width needs."""
    if not figures:
        return []
    if figures[0].publisher == "RewardMATH":
        return [_rewardmath_table(figures)]
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


def _rewardmath_table(figures: list[PublisherFigures]) -> Table:
    """RewardMATH's figures, one row per model (a PRM's: one per aggregation, ◂ the one
    rmaudit audited it under), rmaudit's beside them; what is to know of a model below."""
    notes = shared_notes(figures)
    table = Table(
        title=f"RewardMATH's own figures beside rmaudit's ({figures[0].rule}; rmaudit: over "
        "the distinct problems, ± in the summary above)",
        caption="\n".join(notes) or None,
        title_justify="left",
        caption_justify="left",
    )
    table.add_column("model", max_width=LABEL_WIDTH, overflow="fold")
    table.add_column("kind")
    table.add_column("aggregation\n(◂: rmaudit's)")
    for name in ("Acc.", "Acc. w/ tie", "MRR"):
        table.add_column(f"RewardMATH\n{name}", justify="right")
    names = list(figures[0].alongside)
    for name in names:
        table.add_column(f"rmaudit\n{name}", justify="right")
    for f in figures:
        for index, (group, counts) in enumerate(f.groups.items()):
            assert isinstance(counts, RewardMathFigures)
            own = math.isfinite(f.rmaudit.get(group, math.nan))
            table.add_row(
                literal(f.label) if index == 0 else "",
                f.kind if index == 0 else "",
                "" if group == OVERALL else group + (" ◂" if own else ""),
                *(
                    format_number(v)
                    for v in (counts.accuracy, counts.accuracy_with_ties, counts.mrr)
                ),
                *(_number(f.alongside.get(n)) if own else "" for n in names),
                end_section=len(f.groups) > 1 and index == len(f.groups) - 1,
            )
    return table
