"""``rmaudit runs``: list the audits stored in a DB, or show one run's results again."""

from __future__ import annotations

import click
from rich.table import Table

from rmaudit.errors import BadInput
from rmaudit.store import Store

from .console import console


@click.command()
@click.option("--db", "db_path", default="rmaudit.db", show_default=True, type=click.Path(dir_okay=False))
@click.argument("run_id", required=False)
def runs(db_path: str, run_id: str | None) -> None:
    """List stored runs; with RUN_ID (or a prefix), print that run's summary."""
    store = Store.open_readonly(db_path)
    if store is None:
        raise BadInput("database does not exist", file=db_path)
    out = console()
    rows = list(store.db.query(
        "select r.*, (select count(*) from run_reward_models m where m.run_id = r.id) as rms, "
        "b.per_prompt from runs r left join benchmarks b on b.id = r.benchmark_id "
        "order by r.created_at"))
    if run_id:
        matches = [r for r in rows if r["id"].startswith(run_id)]
        if len(matches) != 1:
            raise BadInput("no such run" if not matches else "run id prefix is ambiguous",
                           file=db_path, field="run_id", value=run_id)
        # a run's summary needs numpy and the metric tables; the bare listing needs neither
        from rmaudit.results import load_summary

        from .render import summary_tables

        for table in summary_tables(load_summary(store, matches[0]["id"])):
            out.print(table)
        return
    table = Table(title=f"runs in {db_path}", title_justify="left")
    for header in ("run", "title", "status", "RMs", "N", "simulated", "created", "recipe"):
        table.add_column(header)
    for r in rows:
        table.add_row(r["id"][:10], r["title"], r["status"], str(r["rms"]), str(r["per_prompt"] or "pairs"),
                      "yes" if r["simulated"] else "no", r["created_at"], r["recipe_path"])
    out.print(table)
