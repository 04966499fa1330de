"""``rmaudit report [DB] [--out DIR] [--html]``: PNG plots and a Markdown summary of a run, and
one self-contained HTML page to share."""

from __future__ import annotations

from contextlib import closing

import click

from rmaudit.errors import BadInput
from rmaudit.results.run_index import open_for_reading, resolve_run

from .options import db_argument


@click.command()
@db_argument()
@click.option("--run", "run_id", help="Run id or prefix (default: the newest complete run).")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    help="Folder for report.md and the PNGs, created if missing (default: beside the "
    "DB, named after it: audit.db → audit-report/).",
)
@click.option(
    "--html",
    is_flag=True,
    help="Also write report.html: one self-contained page to share (figures inline, no "
    "network) with each RM's worst prompts, searchable.",
)
def report(db_path: str, run_id: str | None, out_dir: str | None, html: bool) -> None:
    """Write plots of every stored curve and a Markdown summary of a run."""
    # a missing, foreign or newer DB is BadInput: exit code 2
    with closing(open_for_reading(db_path)) as store:
        run = resolve_run(store, run_id)
        try:  # matplotlib is an optional extra
            from rmaudit.report import default_out_dir, run_page, write_report
        except ImportError as error:
            raise BadInput(
                f"the report needs the 'report' extra: pip install 'rmaudit[report]' ({error})",
                field="report",
            ) from None
        written = write_report(
            store, run_page(store, run), out_dir or default_out_dir(db_path), html=html
        )
    if run_id is None:
        click.echo(f"run {run}: the newest complete run (another: --run RUN)", err=True)
    for path in written:
        click.echo(str(path))
