"""``rmaudit compare DB [RUN...] [--metric NAME...] [--model NAME...] [--subsets] [--json]``:
every pair of reward models and judges compared on the same items — the paired difference with
its ±, Holm-adjusted p-values, significance groups and rank intervals (docs/metrics.md,
"Comparing models") — as tables that fit the console."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import closing
from functools import partial
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from rmaudit.display.literal import literal
from rmaudit.errors import BadInput
from rmaudit.metrics.letters import letter_runs
from rmaudit.results.comparison import MetricComparison
from rmaudit.results.parity import DEFAULT_TOLERANCE, parity_json, parity_sections
from rmaudit.results.run_index import DONE, list_runs, open_for_reading, resolve_run
from rmaudit.store import Store

from .console import console
from .options import FiniteFloat
from .parity_block import print_parity
from .table_fit import LABEL_WIDTH, Layout, fitting, one_table

#: the most pairs of models printed without --model (10 models' 45)
HEAD_TO_HEADS_SHOWN = 45


@click.command()
@click.argument("db_path", metavar="DB", type=click.Path(dir_okay=False))
@click.argument("run_ids", nargs=-1, metavar="[RUN...]")
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    help="Compare only this number (its label, key or metric name; repeatable).",
)
@click.option(
    "--model",
    "models",
    multiple=True,
    help="Print only this model's standing and pairs (repeatable; two: their pair). The "
    "letters, ranks and Holm adjustment stay those of every model. Without it, more than 10 "
    "models' pairs are left to --json.",
)
@click.option(
    "--subsets", is_flag=True, help="Also compare every per-subset number (and signed ones)."
)
@click.option("--alpha", default=0.05, show_default=True, help="Family-wise error rate.")
@click.option(
    "--rank-correlation",
    is_flag=True,
    help="Two runs on different benchmarks: do they rank their shared models alike? The first "
    "run's headline against each main number of the second (Spearman, Kendall, intervals).",
)
@click.option(
    "--same",
    "aliases",
    multiple=True,
    metavar="FIRST=SECOND",
    help="With --rank-correlation: a model labelled FIRST in the first run is SECOND in the "
    "second (repeatable).",
)
@click.option(
    "--parity",
    "parity_of",
    multiple=True,
    metavar="SERVED=CHECKPOINT",
    help="A parity section for these two models (labels; repeatable): a served reward model "
    "against its checkpoint. Default: each served model whose --rm-tokenizer is a compared "
    "Hugging Face model.",
)
@click.option(
    "--tolerance",
    type=FiniteFloat(min=0),
    default=DEFAULT_TOLERANCE,
    show_default=True,
    help="The parity section's tolerance on |score difference|.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the comparisons as JSON.")
def compare(
    db_path: str,
    run_ids: tuple[str, ...],
    metrics: tuple[str, ...],
    models: tuple[str, ...],
    subsets: bool,
    alpha: float,
    rank_correlation: bool,
    aliases: tuple[str, ...],
    parity_of: tuple[str, ...],
    tolerance: float,
    as_json: bool,
) -> None:
    """Paired differences of reward models on shared items, groups and rank intervals.

    RUN: run ids or prefixes (default: the newest complete run); the models of several runs
    on the same benchmark or suite are compared on the items they share, matched by key.
    Judges and RMs are ranked together on their headline (a judge's accuracy in both orders,
    a tie ½; an RM's accuracy); then every number of the whole data is compared.  A served
    reward model and its checkpoint get a parity section (docs/real-models.md).
    """
    from rmaudit.results.comparison import compare_stored
    from rmaudit.results.comparison_text import comparison_json
    from rmaudit.results.step_aggregation import aggregation_comparisons

    if not 0 < alpha < 1:
        raise BadInput("expected a level in (0, 1)", field="--alpha", value=alpha)
    if rank_correlation or aliases:
        from .rank_correlation import print_rank_correlation

        print_rank_correlation(db_path, run_ids, aliases, level=1 - alpha, as_json=as_json)
        return
    _not_a_db(run_ids)
    asked = [_parity_labels(given) for given in parity_of]
    with closing(open_for_reading(db_path)) as store:
        ids = [resolve_run(store, r, "RUN") for r in run_ids] or [resolve_run(store, None)]
        _complete(store, ids, run_ids)
        _same_data(store, ids)
        results = compare_stored(
            store, list(dict.fromkeys(ids)), metrics, alpha=alpha, parts=subsets
        )
        if metrics and not results:
            raise _no_such_number(store, ids, metrics)
        if not run_ids:
            click.echo(_picked(store, ids[0], db_path), err=True)
        # a run of process reward models: each PRM's step aggregations compared too
        aggregations = [
            found
            for run_id in dict.fromkeys(ids)
            for found in aggregation_comparisons(store, run_id, alpha)
            if not metrics
        ]
        pair_set = store.read.run(ids[0]).pair_set_key
        sections = parity_sections(store, list(dict.fromkeys(ids)), pair_set, asked, tolerance)
    _check_models([*results, *aggregations], models)
    if as_json:
        body = {
            "db": db_path,
            "runs": ids,
            "comparisons": [comparison_json(r) for r in results],
            "aggregations": [comparison_json(r) for r in aggregations],
            "parity": [parity_json(section) for section in sections],
        }
        click.echo(json.dumps(body, indent=2, allow_nan=False))
        return
    out = console()
    out.print(literal(f"runs: {', '.join(ids)}"))
    for result in [*results, *aggregations]:
        print_comparison(out, result, models)
    for section in sections:
        print_parity(out, section)


def _parity_labels(given: str) -> tuple[str, str]:
    """``--parity SERVED=CHECKPOINT`` as its two labels (split at the last '=')."""
    served, equals, checkpoint = given.rpartition("=")
    if not equals or not served.strip() or not checkpoint.strip():
        raise BadInput(
            "expected SERVED=CHECKPOINT, two model labels", field="--parity", value=given
        )
    return served.strip(), checkpoint.strip()


def print_comparison(out: Console, result: MetricComparison, models: Sequence[str] = ()) -> None:
    """One comparison: its caption, each model's standing, and each pair's difference (only
    the pairs with one of ``models``, where given)."""
    from rmaudit.results.comparison_text import caption

    if result.comparison is None:
        out.print(literal(f"{result.label}: not compared: {result.note}"))
        return
    out.print(literal(caption(result) + ":", "bold"))
    standings: list[Layout] = [
        partial(one_table, _standings, result, models, cap) for cap in (None, 32)
    ]
    for table in fitting(out, standings):
        out.print(table)
    pairs = [
        p
        for p in result.comparison.head_to_heads
        if not models
        or (p.first in models and p.second in models)
        or (len(models) == 1 and models[0] in (p.first, p.second))
    ]
    if not models and len(pairs) > HEAD_TO_HEADS_SHOWN:
        out.print(
            literal(
                f"{len(pairs):,} pairs of models: --model NAME prints a model's (twice: one "
                f"pair's), --json every one"
            )
        )
        pairs = []
    if pairs:
        layouts: list[Layout] = [
            partial(one_table, _pairs, pairs, cap) for cap in (None, LABEL_WIDTH, 14)
        ]
        for table in fitting(out, layouts):
            out.print(table)
    if result.note:
        out.print(literal(f"note: {result.note}"))


def _standings(result: MetricComparison, models: Sequence[str], cap: int | None) -> Table:
    from rmaudit.results.comparison_text import number

    assert result.comparison is not None
    measures = result.measures or {}
    table = Table(box=None, padding=(0, 1))
    table.add_column("group", no_wrap=True)
    table.add_column("model", overflow="fold", max_width=cap)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("rank", justify="right", no_wrap=True)
    if measures:
        table.add_column("number", overflow="fold", max_width=cap)
    for s in result.comparison.standings:
        if models and s.model not in models:
            continue
        row: list[Text | str] = [
            Text(letter_runs(s.letters)),
            literal(s.model),
            number(s.value),
            Text(f"#{s.ranks}"),
        ]
        if measures:
            own = measures.get(s.model)
            row.append(literal(own.key if own else result.key))
        table.add_row(*row)
    return table


def _pairs(pairs: list, cap: int | None) -> Table:
    from rmaudit.results.comparison_text import number, p_text, signed

    table = Table(box=None, padding=(0, 1))
    for header in ("first", "second"):
        table.add_column(header, overflow="fold", max_width=cap)
    table.add_column("difference ± stderr", justify="right", no_wrap=True)
    table.add_column("95% interval", justify="right", no_wrap=True)
    table.add_column("p_Holm", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    for p in pairs:
        d = p.difference
        table.add_row(
            literal(p.first),
            literal(p.second),
            f"{signed(d.value)} ± {number(d.stderr)}",
            f"[{signed(d.ci_low)}, {signed(d.ci_high)}]",
            p_text(p.adjusted_p),
            "" if p.separable else "not separable",
        )
    return table


def _check_models(results: list[MetricComparison], models: tuple[str, ...]) -> None:
    """A --model that no comparison holds is one line, exit code 2."""
    known = {s.model for r in results if r.comparison is not None for s in r.comparison.standings}
    unknown = [m for m in models if m not in known]
    if unknown:
        raise BadInput(
            f"no compared model of that label (known: {', '.join(sorted(known)) or 'none'})",
            field="--model",
            value=unknown[0],
        )


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


def _not_a_db(run_ids: Sequence[str]) -> None:
    """A RUN that is a DB file: compare reads one DB, whose runs it pairs by their items."""
    for given in run_ids:
        if given.endswith(".db") or Path(given).is_file():
            raise BadInput(
                "a DB file, not a run: rmaudit compare DB [RUN...] compares runs stored in one "
                "DB (rmaudit runs DB lists them), paired on the items they share; runs in two "
                "DBs share none: audit both models into one --db",
                field="RUN",
                value=given,
            )


def _no_such_number(store: Store, ids: Sequence[str], asked: Sequence[str]) -> BadInput:
    """``--metric`` naming nothing stored: the names it could be, the whole numbers first."""
    from rmaudit.results.comparison import stored_columns

    columns = stored_columns(store, list(dict.fromkeys(ids)))
    names = list(dict.fromkeys(c.label for c in sorted(columns, key=lambda c: "[" in c.key)))
    shown = ", ".join(names[:12]) + (f", … ({len(names) - 12} more)" if len(names) > 12 else "")
    return BadInput(
        f"no stored number of that name (stored: {shown or 'none'})",
        field="--metric",
        value=",".join(asked),
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
    data = {(r.benchmark_id, r.pair_set_key) for r in runs}
    if len(data) > 1:
        first, other = (
            runs[0],
            next(
                r
                for r in runs
                if (r.benchmark_id, r.pair_set_key) != (runs[0].benchmark_id, runs[0].pair_set_key)
            ),
        )
        raise BadInput(
            f"runs {first.id[:10]} ({first.title}) and {other.id[:10]} "
            f"({other.title}) audit different data: compare runs of one benchmark or suite",
            field="RUN",
        )
