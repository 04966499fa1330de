"""``rmaudit import``: store a benchmark file so RMs can be audited on it with no oracle cost."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import click

from rmaudit.benchmark.portable import (
    imported_keys,
    refuse_conflicts,
    store_benchmark,
)
from rmaudit.benchmark.portable_read import read_benchmark
from rmaudit.results.run_index import open_if_stored
from rmaudit.store import Store

from .options import db_option


@click.command(name="import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@db_option("SQLite file the benchmark is stored in.")
def import_command(path: str, db_path: str) -> None:
    """Import a benchmark file written by `rmaudit export` (all or nothing)."""
    header, records = read_benchmark(Path(path))  # checked before the DB is touched
    stored = open_if_stored(db_path)
    if stored is not None:
        try:
            refuse_conflicts(stored, header, records, file=path)
        finally:
            stored.close()
    with closing(Store.open(db_path)) as store:
        benchmark_id = imported_keys(header, records, store)[0]
        known = store.items.benchmark(benchmark_id) is not None
        if not known:
            store_benchmark(store, header, records, origin=f"imported from {Path(path).name}")
    if known:
        click.echo(f"benchmark {benchmark_id} is already in {db_path}: nothing new")
    else:
        click.echo(
            f"imported benchmark {benchmark_id} into {db_path}; audit it with a recipe whose "
            f"[benchmark] file = {path!r}"
        )
