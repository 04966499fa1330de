"""The "scoring checks" block of a run's summary (rmaudit.results.scoring_checks)."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from rmaudit.display.literal import literal
from rmaudit.results.scoring_checks import TITLE, block_lines, run_scoring_checks
from rmaudit.store import Store

STYLES = {"pass": "green", "warn": "yellow", "fail": "bold red", "skipped": "dim"}


def print_scoring_checks(out: Console, store: Store, run_id: str) -> None:
    lines = block_lines(run_scoring_checks(store, run_id))
    if not lines:
        return
    out.print(Text(TITLE, style="bold"))
    for line in lines:
        out.print(literal(line.text), style=STYLES.get(line.status or "", ""))
