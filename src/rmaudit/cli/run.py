"""``rmaudit run RECIPE``: build (or reuse) the benchmark, score the RMs, compute metrics."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import click
from rich.console import Console

from rmaudit.components.scoring_checks import CheckSettings
from rmaudit.display.literal import literal
from rmaudit.errors import BadInput
from rmaudit.recipe import load_recipe
from rmaudit.results.run_index import list_runs, open_for_reading, open_if_stored
from rmaudit.run import Runner, build_components
from rmaudit.store import Store
from rmaudit.store.access import check_writable
from rmaudit.store.lock import WriterLock

from .check_options import scoring_check_options
from .console import console
from .options import db_option
from .render import cost_table, plan_table, run_attached
from .summary import print_summary


@click.command()
@click.argument("recipe_path", metavar="RECIPE", type=click.Path(dir_okay=False))
@db_option()
@click.option(
    "--resume/--fresh",
    default=True,
    show_default=True,
    help="--fresh deletes the DB first and starts from nothing; a DB that also holds "
    "other recipes' runs is deleted only with --yes.",
)
@click.option("--yes", is_flag=True, help="Confirm that --fresh deletes other recipes' runs too.")
@click.option(
    "--dry-run", is_flag=True, help="Print the plan (items, stored, to do, oracle calls) and stop."
)
@click.option("--details", is_flag=True, help="Also print every number the leaderboard leaves out.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the run's results as JSON (as rmaudit runs DB RUN --json) instead of tables.",
)
@scoring_check_options
def run(
    recipe_path: str,
    db_path: str,
    resume: bool,
    yes: bool,
    dry_run: bool,
    details: bool,
    as_json: bool,
    checks: CheckSettings,
) -> None:
    """Run the audit described by RECIPE (a TOML file)."""
    recipe = load_recipe(recipe_path)
    components = build_components(recipe)  # rejects bad options and data before the DB is touched
    out, err = console(), console(stderr=True)
    if not dry_run:  # a DB that cannot be written is refused before the plan's work
        check_writable(db_path)
    stored = open_if_stored(db_path)
    try:  # every input is loaded and checked here, before the DB is opened for writing
        runner = Runner(
            recipe, None if not resume else stored, components=components, checks=checks
        )
        counts = runner.plan() if dry_run else runner.preflight()
    finally:
        if stored is not None:
            stored.close()
    if dry_run:
        out.print(plan_table(counts, f"plan for {recipe_path} (db: {db_path}); nothing was run"))
        for line in runner.planned_skips():
            err.print(literal(f"warning: {line}"), style="yellow")
        from rmaudit.run.costs import estimate_costs  # with the API clients' prices: dry runs only

        costs = estimate_costs(recipe, components, counts, runner.pending_texts())
        if costs:
            out.print(cost_table(costs))
        return
    if not resume:
        _delete_db(db_path, recipe.run_key, yes, err)
    created = not Path(db_path).exists()
    with closing(
        Store.open(
            db_path,
            waiting=lambda pid: err.print(
                literal(f"waiting: another rmaudit run is writing {db_path} (pid {pid or '?'})")
            ),
        )
    ) as store:
        try:
            result = run_attached(runner, store, err)
        except BaseException:
            if created and not list_runs(store):  # a --strict stop wrote nothing: no DB
                store.close()
                for suffix in ("", "-wal", "-shm"):
                    Path(db_path + suffix).unlink(missing_ok=True)
            raise
        if as_json:
            from rmaudit.results.as_json import runs_json

            click.echo(runs_json(store, [result.run_id]))
            return
        print_summary(out, store, result.run_id, db_path, details=details)
        out.print(
            literal(
                f"stored in {db_path} (run {result.run_id}); browse it: rmaudit tui "
                f"{db_path} (needs rmaudit[tui]), plots: rmaudit report {db_path}"
            )
        )


def _delete_db(db_path: str, run_id: str, yes: bool, err: Console) -> None:
    """``--fresh``: delete the DB file, unless it holds runs of other recipes and ``yes`` is
    not given (then ``BadInput``, before anything is touched)."""
    if not Path(db_path).exists():
        return
    with closing(open_for_reading(db_path)) as store:
        runs = list_runs(store)
    others = [run for run in runs if run.id != run_id]
    if others and not yes:
        titles = ", ".join(repr(run.title) for run in others[:3]) + ", …" * (len(others) > 3)
        raise BadInput(
            f"--fresh would delete the whole DB, with {len(others)} run(s) of other "
            f"recipes ({titles}); add --yes to delete them, or use another --db",
            file=db_path,
            field="--fresh",
        )
    lock = WriterLock.acquire(db_path)  # not while another run writes it
    try:
        for suffix in ("", "-wal", "-shm"):
            Path(db_path + suffix).unlink(missing_ok=True)
    finally:
        lock.release()
    err.print(literal(f"--fresh: deleted {db_path} ({len(runs)} run(s))"))
