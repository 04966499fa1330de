"""``rmaudit compare DB [RUN...] [--metric NAME...] [--json]``: every pair of reward models
compared on the same items — the paired difference with its ±, Holm-adjusted p-values,
significance groups and rank intervals (docs/metrics.md, "Comparing models")."""

from __future__ import annotations

import json

import click

from rmaudit.errors import BadInput
from rmaudit.results.run_index import DONE, list_runs, open_for_reading, resolve_run
from rmaudit.store import Store


@click.command()
@click.argument("db_path", metavar="DB", type=click.Path(dir_okay=False))
@click.argument("run_ids", nargs=-1, metavar="[RUN...]")
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    help="Compare only this number (its label, key or metric name; repeatable).",
)
@click.option("--alpha", default=0.05, show_default=True, help="Family-wise error rate.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparisons as JSON.")
def compare(
    db_path: str, run_ids: tuple[str, ...], metrics: tuple[str, ...], alpha: float, as_json: bool
) -> None:
    """Paired differences of reward models on shared items, groups and rank intervals.

    RUN: run ids or prefixes (default: the newest complete run); the models of several runs
    on the same benchmark or suite are compared on the items they share, matched by key.
    """
    from rmaudit.results.comparison import compare_stored, comparison_json, comparison_lines
    from rmaudit.results.step_aggregation import aggregation_comparisons

    if not 0 < alpha < 1:
        raise BadInput("expected a level in (0, 1)", field="--alpha", value=alpha)
    store = open_for_reading(db_path)
    try:
        ids = [resolve_run(store, r) for r in run_ids] or [resolve_run(store, None)]
        _complete(store, ids, run_ids)
        _same_data(store, ids)
        results = compare_stored(store, list(dict.fromkeys(ids)), metrics, alpha=alpha)
        if not run_ids:
            click.echo(_picked(store, ids[0], db_path), err=True)
        # a run of process reward models: each PRM's step aggregations compared too
        aggregations = [
            found
            for run_id in dict.fromkeys(ids)
            for found in aggregation_comparisons(store, run_id, alpha)
            if not metrics
        ]
    finally:
        store.close()
    if metrics and not results:
        raise BadInput("no stored number of that name", field="--metric", value=",".join(metrics))
    if as_json:
        body = {
            "db": db_path,
            "runs": ids,
            "comparisons": [comparison_json(r) for r in results],
            "aggregations": [comparison_json(r) for r in aggregations],
        }
        click.echo(json.dumps(body, indent=2, allow_nan=False))
        return
    click.echo(f"runs: {', '.join(ids)}")
    for result in [*results, *aggregations]:
        for line in comparison_lines(result):
            click.echo(line)


def _complete(store: Store, ids: list[str], named: tuple[str, ...]) -> None:
    """Only complete runs are compared: a running, failed or interrupted one holds no results,
    or those of an earlier run of its recipe."""
    for run_id, name in zip(ids, named, strict=False):
        run = next(r for r in list_runs(store) if r.id == run_id)
        if run.status != DONE:
            why = f": {run.error}" if run.error else ""
            raise BadInput(
                f"run {run.id[:10]} ({run.title}) is {run.status or 'not finished'}{why}; "
                f"compare complete runs (rmaudit runs {store.path} lists them)",
                field="RUN",
                value=name,
            )


def _picked(store: Store, run_id: str, db_path: str) -> str:
    """The line saying which run ``compare DB`` picked, and how to pick others."""
    runs = [r for r in list_runs(store) if r.status == DONE]
    run = next(r for r in runs if r.id == run_id)
    others = len(runs) - 1
    return f"run {run.id[:10]} ({run.title}): the newest complete run" + (
        f"; {others} more in {db_path} (rmaudit runs {db_path} lists them): compare "
        f"others with rmaudit compare {db_path} RUN..."
        if others
        else ""
    )


def _same_data(store: Store, ids: list[str]) -> None:
    """Runs compared together audit one benchmark or one pair set (their items match by key)."""
    runs = [store.read.run(i) for i in ids]
    data = [(r.benchmark_id, r.pair_set_key, r.solution_set_key) for r in runs]
    if len(set(data)) > 1:
        first, other = runs[0], next(r for r, d in zip(runs, data, strict=True) if d != data[0])
        raise BadInput(
            f"runs {first.id[:10]} ({first.title}) and {other.id[:10]} "
            f"({other.title}) audit different data: compare runs of one benchmark or suite",
            field="RUN",
        )
