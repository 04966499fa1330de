"""The "scoring checks" block of report.html (rmaudit.results.scoring_checks): one line per
check, its fix under a warning; text is escaped and shown literally."""

from __future__ import annotations

from html import escape

from rmaudit.display.formatting import visible
from rmaudit.results.scoring_checks import TITLE, block_lines, run_scoring_checks
from rmaudit.store import Store


def checks_html(store: Store, run_id: str) -> list[str]:
    lines = block_lines(run_scoring_checks(store, run_id))
    if not lines:
        return []
    rows = [
        f"<span class=check-{line.status or 'fix'}>{escape(visible(line.text))}</span>"
        for line in lines
    ]
    return [f"<h3>{TITLE.capitalize()}</h3>", "<pre class=checks>" + "\n".join(rows) + "</pre>"]
