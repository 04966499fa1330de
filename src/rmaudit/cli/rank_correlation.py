"""``rmaudit compare DB RUN_A RUN_B --rank-correlation [--same A=B...]``: do two benchmarks rank
their shared models alike (docs/metrics.md, "Do two benchmarks rank alike?")."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import closing

import click
from rich.table import Table
from rich.text import Text

from rmaudit.display.literal import literal
from rmaudit.errors import BadInput
from rmaudit.metrics.rank_agreement import Correlation
from rmaudit.results.benchmark_agreement import BenchmarkAgreement, benchmark_agreements
from rmaudit.results.run_index import DONE, list_runs, open_for_reading, resolve_run

from .console import console


def print_rank_correlation(
    db_path: str, run_ids: Sequence[str], aliases: Sequence[str], *, level: float, as_json: bool
) -> None:
    """Both runs' shared models ranked against each other, as a table or JSON."""
    if len(run_ids) != 2:
        raise BadInput(
            f"expected two runs (the two benchmarks), got {len(run_ids)}",
            field="RUN",
            value=" ".join(run_ids),
        )
    same = dict(_alias(a) for a in aliases)
    with closing(open_for_reading(db_path)) as store:
        first, second = (resolve_run(store, r) for r in run_ids)
        done = {r.id: r for r in list_runs(store) if r.status == DONE}
        for run_id, named in ((first, run_ids[0]), (second, run_ids[1])):
            if run_id not in done:
                raise BadInput("compare complete runs", field="RUN", value=named)
        found = benchmark_agreements(store, first, second, aliases=same, level=level)
    titles = (done[first].title, done[second].title)
    if as_json:
        body = {"db": db_path, "runs": [first, second], "level": level}
        body["agreements"] = [_as_json(a) for a in found]
        click.echo(json.dumps(body, indent=2, allow_nan=False))
        return
    out = console()
    out.print(literal(f"first: {first[:10]} {titles[0]}"))
    out.print(literal(f"second: {second[:10]} {titles[1]}"))
    if found:
        out.print(literal("models on both: " + ", ".join(found[0].models)))
    out.print(_table(found, level))
    for agreement in found:
        if agreement.found is not None and agreement.found.unbounded:
            out.print(literal(f"{agreement.second}: too many orderings possible: ±1 bounds"))
    out.print(
        literal(
            f"intervals: every correlation over the model orders the paired comparisons leave "
            f"possible on each side, jointly at {level:.0%} (conservative; docs/metrics.md)"
        )
    )


def _alias(text: str) -> tuple[str, str]:
    first, sep, second = text.partition("=")
    if not sep or not first.strip() or not second.strip():
        raise BadInput("expected FIRST=SECOND (two model labels)", field="--same", value=text)
    return first.strip(), second.strip()


def _table(found: list[BenchmarkAgreement], level: float) -> Table:
    table = Table(box=None, padding=(0, 1))
    table.add_column("first's headline against second's", overflow="fold")
    table.add_column("Spearman ρ", justify="right", no_wrap=True)
    table.add_column(f"{level:.0%} interval", justify="right", no_wrap=True)
    table.add_column("Kendall τ", justify="right", no_wrap=True)
    table.add_column(f"{level:.0%} interval", justify="right", no_wrap=True)
    for agreement in found:
        if agreement.found is None:
            table.add_row(literal(agreement.second), literal(agreement.note), "", "", "")
            continue
        rho, tau = agreement.found.spearman, agreement.found.kendall
        table.add_row(literal(agreement.second), *_cells(rho), *_cells(tau))
    return table


def _cells(correlation: Correlation) -> tuple[Text, Text]:
    return (
        Text(f"{correlation.value:+.3f}"),
        Text(f"[{correlation.ci_low:+.2f}, {correlation.ci_high:+.2f}]"),
    )


def _as_json(agreement: BenchmarkAgreement) -> dict[str, object]:
    body: dict[str, object] = {
        "first": agreement.first,
        "second": agreement.second,
        "models": list(agreement.models),
        "note": agreement.note,
    }
    if agreement.found is not None:
        found = agreement.found
        body |= {
            "spearman": vars(found.spearman),
            "kendall": vars(found.kendall),
            "units": [found.units_a, found.units_b],
            "orderings": [found.orderings_a, found.orderings_b],
            "unbounded": found.unbounded,
        }
    return body
