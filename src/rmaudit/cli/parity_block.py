"""``rmaudit compare``'s parity section as tables that fit the console: a served reward
model's figures against its checkpoint's, and its worst pair flips (docs/real-models.md,
"Served reward models")."""

from __future__ import annotations

from functools import partial

from rich.console import Console
from rich.table import Table

from rmaudit.display.literal import literal
from rmaudit.results.parity import ParitySection, parity_lines

from .table_fit import Layout, fitting, one_table

#: characters of a flipped pair's texts shown in its row
EXCERPT = 60


def print_parity(out: Console, section: ParitySection) -> None:
    """One served model against one checkpoint: its figures, then its worst flips."""
    out.print(literal(f"parity: {section.served} (served) against {section.checkpoint}:", "bold"))
    figures = Table(box=None, padding=(0, 1), show_header=False)
    figures.add_column("what", no_wrap=True)
    figures.add_column("value", overflow="fold")
    for what, value in parity_lines(section):
        figures.add_row(literal(what), literal(value))
    out.print(figures)
    if section.worst:
        out.print(literal(f"the {len(section.worst)} worst flips (largest |logit difference|):"))
        layouts: list[Layout] = [
            partial(one_table, _flips, section, cap) for cap in (EXCERPT, 30, 16)
        ]
        for table in fitting(out, layouts):
            out.print(table)
    if section.note and section.parity is not None:
        out.print(literal(f"note: {section.note}"))


def _flips(section: ParitySection, cap: int) -> Table:
    table = Table(box=None, padding=(0, 1))
    for header in ("prompt", "chosen", "rejected"):
        table.add_column(header, overflow="ellipsis", no_wrap=True, max_width=cap)
    table.add_column("served logit", justify="right", no_wrap=True)
    table.add_column("checkpoint logit", justify="right", no_wrap=True)
    for flip in section.worst:
        table.add_row(
            literal(flip.prompt),
            literal(flip.chosen),
            literal(flip.rejected),
            f"{flip.served_logit:+.4g}",
            f"{flip.checkpoint_logit:+.4g}",
        )
    return table
