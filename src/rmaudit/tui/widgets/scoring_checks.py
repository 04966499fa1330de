"""The "scoring checks" block under a run's leaderboard (rmaudit.results.scoring_checks),
mounted only for a run that has checks, so other runs' screens are unchanged."""

from __future__ import annotations

from rich.text import Text
from textual.screen import Screen
from textual.widgets import Footer, Static

from rmaudit.display.literal import literal
from rmaudit.results.scoring_checks import TITLE, block_lines, run_scoring_checks
from rmaudit.store import Store

STYLES = {"pass": "green", "warn": "yellow", "fail": "bold red", "skipped": "dim"}
WIDGET_ID = "scoring-checks"


def scoring_checks_text(store: Store, run_id: str) -> Text | None:
    lines = block_lines(run_scoring_checks(store, run_id))
    if not lines:
        return None
    text = Text(TITLE, style="bold")
    for line in lines:
        text.append("\n")
        text.append_text(literal(line.text, style=STYLES.get(line.status or "", "")))
    return text


def show_scoring_checks(screen: Screen, store: Store, run_id: str) -> None:
    """Mount (or update) the block above the screen's footer when the run has checks."""
    text = scoring_checks_text(store, run_id)
    if text is None:
        return
    shown = screen.query(f"#{WIDGET_ID}")
    if shown:
        shown.first(Static).update(text)
    else:
        screen.mount(Static(text, id=WIDGET_ID, classes="note"), before=screen.query_one(Footer))
