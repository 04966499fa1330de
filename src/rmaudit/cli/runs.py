"""``rmaudit runs``: list the audits stored in a DB, or show one run's results again."""

from __future__ import annotations

import string
from contextlib import closing
from pathlib import Path

import click
from rich.table import Table

from rmaudit.display.formatting import LABEL_MAX, one_line
from rmaudit.display.literal import assemble, literal
from rmaudit.results.run_index import ListedRun, list_runs, open_for_reading, resolve_run
from rmaudit.store import Store
from rmaudit.store.damage import check_run_row

from .console import console
from .options import DEFAULT_DB, db_option
from .table_fit import LABEL_WIDTH, fitting


@click.command()
@click.argument("targets", nargs=-1, metavar="[DB] [RUN_ID]")
@db_option("The SQLite file, as DB (default: rmaudit.db).", default=None, name="db_option")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print every stored metric and curve (of RUN_ID, or of every run) as JSON.",
)
@click.option(
    "--details", is_flag=True, help="With RUN_ID: also every number the leaderboard leaves out."
)
def runs(targets: tuple[str, ...], db_option: str | None, as_json: bool, details: bool) -> None:
    """List stored runs, newest first; with RUN_ID, print that run's summary.

    DB is the SQLite file (as in `rmaudit tui DB` and `rmaudit report DB`; or --db); a lone
    argument is the DB when it names a file or is not a run id (hexadecimal).
    """
    db_path, run_id = _db_and_run(targets, db_option)
    # a missing, foreign or newer DB is BadInput: exit code 2
    with closing(open_for_reading(db_path)) as store:
        out = console()
        if as_json:
            from rmaudit.results.as_json import runs_json

            ids = [resolve_run(store, run_id)] if run_id else [r.id for r in list_runs(store)]
            _check_runs(store, ids)
            click.echo(runs_json(store, ids))
            return
        if run_id:
            # a run's summary needs numpy and the metric tables; the bare listing needs neither
            from .summary import print_summary

            resolved = resolve_run(store, run_id)
            _check_runs(store, [resolved])
            print_summary(out, store, resolved, db_path, sources=True, details=details)
            return
        store.check_integrity()  # the listing reads too little to notice damaged pages
        rows = list_runs(store)
        _check_runs(store, [row.id for row in rows])
    out.print(literal(f"{len(rows)} run{'s' * (len(rows) != 1)} in {db_path}"), style="bold")
    layouts = [lambda cap=cap: [_runs_table(rows, cap)] for cap in (None, 32)]
    for table in fitting(out, [*layouts, lambda: [_narrow_runs_table(rows)]]):
        out.print(table)
    for run in rows:
        if run.error:
            out.print(literal(one_line(f"{run.id[:10]} {run.status}: {run.error}", 4 * LABEL_MAX)))


def _check_runs(store: Store, run_ids: list[str]) -> None:
    """A damaged run row (its status, timings, times) is one line naming the run and the field
    (exit code 2), not a ``null`` in the output."""
    for run_id in run_ids:
        run = store.read.run_as_stored(run_id)
        if run is not None:
            check_run_row(store.path, run)


def _db_and_run(targets: tuple[str, ...], db_option: str | None) -> tuple[str, str | None]:
    """(DB, RUN_ID) from the positional arguments and ``--db``."""
    if len(targets) > 2 or (db_option and len(targets) == 2):
        raise click.UsageError("give at most a DB (or --db) and a RUN_ID")
    if len(targets) == 2:
        return targets[0], targets[1]
    if not targets:
        return db_option or DEFAULT_DB, None
    (target,) = targets
    if db_option is None and (Path(target).is_file() or not _looks_like_run_id(target)):
        return target, None
    return db_option or DEFAULT_DB, target


def _looks_like_run_id(text: str) -> bool:
    return bool(text) and all(c in string.hexdigits for c in text)


def _runs_table(rows: list[ListedRun], cap: int | None) -> Table:
    """One row per run, every field in its own column; title and recipe wrap at ``cap``."""
    table = Table()
    table.add_column("run", no_wrap=True)
    table.add_column("title", overflow="fold", max_width=cap)
    for header in ("status", "world", "prompts", "N", "RMs", "created"):
        table.add_column(
            header, no_wrap=True, justify="right" if header in ("prompts", "N", "RMs") else "left"
        )
    table.add_column("recipe", overflow="fold", max_width=cap and cap - 8)
    for run in rows:
        table.add_row(
            run.id[:10],
            literal(one_line(run.title, 2 * LABEL_MAX)),
            literal(run.status),
            "SIMULATED" if run.simulated else "real",
            # a run of preference pairs (or solutions) has no prompts × N benchmark: its size
            # is its pairs (or solutions)
            f"{run.prompts:,}" if run.per_prompt else "—",
            str(run.per_prompt) if run.per_prompt else run.size,
            str(run.reward_models),
            run.created_at.replace("T", " ")[:16],
            literal(run.recipe_path),
        )
    return table


def _narrow_runs_table(rows: list[ListedRun]) -> Table:
    """The same in 80 columns: the recipe under the title, the world beside the status."""
    table = Table()
    table.add_column("run", no_wrap=True)
    table.add_column("title · recipe", overflow="fold", max_width=LABEL_WIDTH - 2)
    table.add_column("status", no_wrap=True)
    table.add_column("size", justify="right", no_wrap=True)
    table.add_column("RMs", justify="right", no_wrap=True)
    table.add_column("created", no_wrap=True)
    for run in rows:
        size = (
            f"{run.prompts:,}×{run.per_prompt}"
            if run.per_prompt
            else "solutions"
            if run.solutions
            else "pairs"
        )
        # an audit's title starts with its command, which stands for its recipe: said once
        said = run.recipe_path is None or run.title.startswith(run.recipe_path)
        table.add_row(
            run.id[:10],
            assemble(
                one_line(run.title, 2 * LABEL_MAX),
                *(() if said else ("\n", (run.recipe_path, "dim"))),
            ),
            assemble(run.status, ("\nSIM." if run.simulated else "", "yellow")),
            size,
            str(run.reward_models),
            run.created_at[:10],
        )
    return table
