"""``rmaudit tui [DB]``: browse runs, leaderboards, curves and per-prompt failures in the
terminal."""

from __future__ import annotations

import click

from rmaudit.errors import BadInput

from .options import db_argument


@click.command()
@db_argument()
@click.option(
    "--run", "run_id", help="Open this run's leaderboard (id or prefix; default: the latest)."
)
def tui(db_path: str, run_id: str | None) -> None:
    """Browse an audit DB (read-only). Keys: arrows/j/k, enter, escape, / search, s sort, ? help, q
    quit."""
    try:  # Textual is an optional extra; the core never imports it
        from rmaudit.tui.app import AuditApp
    except ImportError as error:
        raise BadInput(
            f"the TUI needs the 'tui' extra: pip install 'rmaudit[tui]' ({error})", field="tui"
        ) from None
    app = AuditApp(db_path, run_id)  # a missing, foreign or newer DB is BadInput: exit code 2
    app.run()
