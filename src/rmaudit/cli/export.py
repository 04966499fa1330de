"""``rmaudit export``: write a stored benchmark to a portable file."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import click

from rmaudit.benchmark.portable import export_benchmark
from rmaudit.errors import BadInput
from rmaudit.results.run_index import open_for_reading

from .options import db_option


@click.command()
@click.argument("out", type=click.Path(dir_okay=False))
@db_option("SQLite file the benchmark is stored in.")
@click.option(
    "--benchmark",
    "benchmark_id",
    help="Benchmark id or prefix (default: the only one, or the one of the latest run).",
)
def export(out: str, db_path: str, benchmark_id: str | None) -> None:
    """Write a benchmark (prompts, responses, oracle labels) to OUT (.jsonl or .jsonl.gz)."""
    # a missing, foreign or newer DB is BadInput: exit code 2
    with closing(open_for_reading(db_path)) as store:
        ids = store.read.benchmark_ids()
        if benchmark_id:
            ids = [i for i in ids if i.startswith(benchmark_id)]
            if len(ids) != 1:
                raise BadInput(
                    "no such benchmark" if not ids else "benchmark id prefix is ambiguous",
                    file=db_path,
                    field="--benchmark",
                    value=benchmark_id,
                )
        if not ids:
            raise BadInput("no benchmark stored; run a recipe first", file=db_path)
        count = export_benchmark(store, ids[0], Path(out))
    click.echo(f"exported benchmark {ids[0]} ({count} prompts) to {out}")
