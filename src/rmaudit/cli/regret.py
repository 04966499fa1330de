"""``rmaudit regret [DB]``: a stored regret-correlation study in Rethinking RM Evaluation's Table 1
/ Table 4 layout, and ``rmaudit correlate DB --downstream FILE``: which stored metric predicts your
own
downstream results?"""

from __future__ import annotations

import csv
import io
import math
from contextlib import closing
from pathlib import Path

import click
import numpy as np
from rich.table import Table
from rich.text import Text

from rmaudit.backends.simulated import SIMULATED_NOTICE
from rmaudit.components import RUN_LEVEL
from rmaudit.components.data_text import read_text
from rmaudit.components.vocabulary import REGRET_SUMMARY
from rmaudit.display.formatting import short_label
from rmaudit.display.literal import assemble, literal
from rmaudit.errors import BadInput
from rmaudit.metrics.regret import correlate_across, goodhart_from_accuracy, permutation_p_values
from rmaudit.results.regret import load_studies, study_table
from rmaudit.results.run_index import open_for_reading, resolve_run

from .console import console
from .options import db_argument


def _cell(value: float | None, digits: int = 3) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


@click.command("regret")
@db_argument()
@click.option("--run", "run_id", help="Run id or prefix (default: the latest run).")
@click.option(
    "--pairs",
    is_flag=True,
    help="Also print each gold's proxies: accuracy, NDR, and the NDR the Regressional "
    "Goodhart normal model predicts from that accuracy (Rethinking RM Evaluation, Fig. 8).",
)
def regret(db_path: str, run_id: str | None, pairs: bool) -> None:
    """Print a run's regret-correlation study: error metric × correlation with best-of-n regret."""
    with closing(open_for_reading(db_path)) as store:
        run = resolve_run(store, run_id)
        studies = load_studies(store, run)
        stored = store.read.run(run)
        assert stored is not None, "resolve_run returns a stored run's id"
        simulated = stored.simulated
    if not studies:
        raise BadInput(
            "run has no regret-correlation results; add a [[metrics]] entry with "
            'name = "regret-correlation" to the recipe',
            file=db_path,
            field="run",
            value=run,
        )
    out = console()
    for label, rows in studies.items():
        out.print(_study_table(label, rows, simulated))
        summary = next((r for r in rows if r["key"] == REGRET_SUMMARY), None)
        if pairs and summary is not None:
            for table in _pair_tables(summary["params"]):
                out.print(table)
    if simulated:
        out.print(SIMULATED_NOTICE)


def _study_table(label: str, rows: list[dict], simulated: bool) -> Table:
    study = study_table(label, rows)
    tag = Text("  SIMULATED", style="bold yellow") if simulated else ""
    table = Table(
        title=assemble(f"{label}: error metric vs policy regret (best-of-{study.n} NDR)", tag),
        title_justify="left",
        caption=study.caption,
        caption_justify="left",
    )
    for index, header in enumerate(study.headers):
        table.add_column(
            literal(header),
            style="bold" if index == 0 else None,
            justify="left" if index == 0 else "right",
        )
    for row in study.rows:
        table.add_row(*(literal(cell) for cell in row))
    return table


def _pair_tables(params: dict) -> list[Table]:
    rms, golds = params["rms"], params["golds"]
    accuracy = params["error"].get("accuracy")
    tables = []
    for g, gold in enumerate(golds):
        table = Table(
            title=literal(f"gold = {short_label(gold)}: proxies by best-of-{params['n']} NDR"),
            title_justify="left",
        )
        table.add_column("proxy", style="bold")
        if accuracy is not None:
            table.add_column("accuracy", justify="right")
        table.add_column("NDR", justify="right")
        if accuracy is not None:
            table.add_column("NDR if only Regressional Goodhart", justify="right")
        proxies = [p for p in range(len(rms)) if params["ndr"][g][p] is not None]
        for p in sorted(proxies, key=lambda p: -params["ndr"][g][p]):
            row: list[Text | str] = [literal(short_label(rms[p]))]
            if accuracy is not None:
                acc = accuracy[g][p]
                row.append(_cell(acc))
            row.append(_cell(params["ndr"][g][p]))
            if accuracy is not None:
                # the normal model only covers accuracies in [1/2, 1]
                row.append(_cell(float(goodhart_from_accuracy(acc)["ndr"])) if acc >= 0.5 else "—")
            table.add_row(*row)
        tables.append(table)
    return tables


@click.command("correlate")
@db_argument(optional=False)
@click.option(
    "--downstream",
    "downstream",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="CSV: a column of RM labels (the recipe's labels), then one numeric column "
    "per downstream outcome (RLHF win rate, PPO regret, human eval, …).",
)
@click.option("--run", "run_id", help="Run id or prefix (default: the latest run).")
@click.option(
    "--rm-column", default=None, help="Name of the RM label column (default: the first column)."
)
def correlate(db_path: str, downstream: str, run_id: str | None, rm_column: str | None) -> None:
    """Correlate every stored per-RM metric with each downstream outcome across RMs.

    Kendall τ-b, Pearson and Spearman, each with a two-sided permutation p-value: exact (all
    n! pairings) for up to 8 RMs, 20,000 seeded random permutations beyond.  No bootstrap.
    """
    outcomes, order, label_column = _read_downstream(Path(downstream), rm_column)
    with closing(open_for_reading(db_path)) as store:
        run = resolve_run(store, run_id)
        labels = {rm_key: label for label, rm_key in store.read.reward_models(run)}
        metric_rows = [row for row in store.read.metric_rows(run) if row.rm_key != RUN_LEVEL]
    unknown = [label for label in order if label not in labels.values()]
    if unknown:
        raise BadInput(
            f"RM label not in run {run[:10]} (its RMs: {', '.join(labels.values())})",
            file=downstream,
            field=label_column,
            value=unknown[0],
        )
    if len(order) < 3:
        raise BadInput(
            f"expected at least 3 RMs to correlate across, got {len(order)}", file=downstream
        )
    columns: dict[tuple[str, str], dict[str, float]] = {}
    titles: dict[tuple[str, str], str] = {}
    for row in metric_rows:
        ident = (row.metric, row.key)
        columns.setdefault(ident, {})[labels[row.rm_key]] = row.value
        titles[ident] = row.label if row.label == row.metric else f"{row.metric}: {row.label}"
    out = console()
    for outcome, values in outcomes.items():
        table = Table(
            title=literal(f"which stored metric predicts {outcome!r}? ({len(order)} RMs)"),
            title_justify="left",
            caption="correlation across RMs (p: two-sided permutation test, "
            + ("exact" if len(order) <= 8 else "20,000 permutations")
            + ")",
            caption_justify="left",
        )
        for header in ("metric", "Kendall τ", "Pearson", "Spearman"):
            table.add_column(header, justify="left" if header == "metric" else "right")
        y = np.array([values[label] for label in order])
        for ident, by_rm in columns.items():
            if any(label not in by_rm for label in order):
                continue  # the metric was not computed for every RM in the file
            x = np.array([by_rm[label] for label in order])
            stats, p = correlate_across(x, y), permutation_p_values(x, y)
            table.add_row(
                literal(titles[ident]),
                *(f"{stats[s]:+.3f} (p={p[s]:.3g})" for s in ("kendall", "pearson", "spearman")),
            )
        out.print(table)


def _read_downstream(
    path: Path, rm_column: str | None
) -> tuple[dict[str, dict[str, float]], list[str], str]:
    """{outcome: {rm label: value}}, the RM labels in file order, and the label column."""
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
    try:
        header = list(reader.fieldnames or [])
        rows = list(reader)
    except csv.Error as error:
        raise BadInput(f"invalid CSV ({error})", file=f"{path}:{reader.line_num + 1}") from None
    if len(header) < 2:
        raise BadInput(
            "expected a header with an RM label column and at least one outcome column",
            file=str(path),
            value=",".join(header),
        )
    key = rm_column or header[0]
    if key not in header:
        raise BadInput(
            f"no such column (columns: {', '.join(header)})",
            file=str(path),
            field="--rm-column",
            value=key,
        )
    outcomes: dict[str, dict[str, float]] = {name: {} for name in header if name != key}
    order: list[str] = []
    for number, row in enumerate(rows, start=2):
        label = (row[key] or "").strip()
        if label in order:
            raise BadInput("RM label listed twice", file=f"{path}:{number}", field=key, value=label)
        order.append(label)
        for name in outcomes:
            try:
                value = float(row[name])
            except (TypeError, ValueError):
                raise BadInput(
                    "expected a number", file=f"{path}:{number}", field=name, value=row[name]
                ) from None
            if not math.isfinite(value):
                raise BadInput(
                    "expected a finite number", file=f"{path}:{number}", field=name, value=value
                )
            outcomes[name][label] = value
    return outcomes, order, key
