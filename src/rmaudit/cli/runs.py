"""``rmaudit runs``: list the audits stored in a DB, or show one run's results again."""

from __future__ import annotations

import click
from rich.table import Table

from rmaudit.errors import BadInput
from rmaudit.results import load_summary
from rmaudit.store import Store

from .render import console, summary_tables


@click.command()
@click.option("--db", "db_path", default="rmaudit.db", show_default=True, type=click.Path(dir_okay=False))
@click.argument("run_id", required=False)
def runs(db_path: str, run_id: str | None) -> None:
    """List stored runs; with RUN_ID (or a prefix), print that run's summary."""
    store = Store.open_readonly(db_path)
    if store is None:
        raise BadInput("database does not exist", file=db_path)
    out = console()
    runs = store.read.runs()[::-1]  # oldest first
    if run_id:
        matches = [run[0] for run in runs if run[0].startswith(run_id)]
        if len(matches) != 1:
            raise BadInput("no such run" if not matches else "run id prefix is ambiguous",
                           file=db_path, field="run_id", value=run_id)
        for table in summary_tables(load_summary(store, matches[0])):
            out.print(table)
        return
    table = Table(title=f"runs in {db_path}", title_justify="left")
    for header in ("run", "title", "status", "RMs", "N", "simulated", "created", "recipe"):
        table.add_column(header)
    for run, title, status, simulated, created, recipe, _prompts, per_prompt, rms in runs:
        table.add_row(run[:10], title, status, str(rms), str(per_prompt or "pairs"),
                      "yes" if simulated else "no", created, recipe)
    out.print(table)
