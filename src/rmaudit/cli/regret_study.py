"""``rmaudit regret-study KIND``: Rethinking RM Evaluation's test-set design studies (Sec. 4, Fig.
4, 6, 7) on a
synthetic normal world, printed as a table (:mod:`rmaudit.metrics.regret.design_studies`)."""

from __future__ import annotations

from typing import TypedDict

import click
from rich.table import Table

from rmaudit.errors import BadInput, MetricInputError
from rmaudit.metrics.regret import design_studies
from rmaudit.metrics.regret.world import RegretWorld

from .console import console
from .options import Choice

KINDS = ("responses", "budget", "rank-bins")


def _ks(value: str | None) -> tuple[int, ...] | None:
    if value is None:
        return None
    try:
        return tuple(int(part) for part in value.split(","))
    except ValueError:
        raise BadInput("expected comma-separated integers", field="--ks", value=value) from None


@click.command("regret-study")
@click.argument("kind", type=Choice(KINDS))
@click.option(
    "--samples",
    type=int,
    default=64,
    show_default=True,
    help="responses: prompt-response pairs in each test set.",
)
@click.option(
    "--budget",
    type=int,
    default=256,
    show_default=True,
    help="budget: pairwise comparisons by the annotator per test set.",
)
@click.option(
    "--beta",
    type=float,
    default=0.5,
    show_default=True,
    help="budget: the Bradley-Terry annotator's temperature β (Eq. 4).",
)
@click.option(
    "--ks", default=None, help="responses/budget: responses per prompt to try, e.g. 2,4,8,16."
)
@click.option("--bins", type=int, default=5, show_default=True, help="rank-bins: number of bins.")
@click.option(
    "--pool",
    type=int,
    default=20,
    show_default=True,
    help="rank-bins: responses per test prompt that are binned by gold rank.",
)
@click.option(
    "--replicates",
    type=int,
    default=None,
    help="Test sets drawn per design (default: 200 for responses, 100 otherwise).",
)
@click.option(
    "--difficulty",
    type=float,
    default=0.0,
    show_default=True,
    help="World: log-sd of how far apart a prompt's responses are (prompts differ in difficulty).",
)
@click.option(
    "--disagreement",
    type=float,
    default=0.0,
    show_default=True,
    help="World: log-sd of each proxy's noise per prompt (prompts differ in how far "
    "proxy and gold disagree).",
)
@click.option(
    "--response-correlation",
    type=float,
    default=0.0,
    show_default=True,
    help="World: share of variance common to a prompt's responses, in [0, 1).",
)
@click.option("--seed", type=int, default=0, show_default=True)
def regret_study(
    kind: str,
    samples: int,
    budget: int,
    beta: float,
    ks: str | None,
    bins: int,
    pool: int,
    replicates: int | None,
    difficulty: float,
    disagreement: float,
    response_correlation: float,
    seed: int,
) -> None:
    """Which RM test set predicts best-of-n regret best (Rethinking RM Evaluation, Sec. 4)?

    KIND: responses (fixed sample count, Fig. 6), budget (fixed annotation budget with a BT
    annotator, Fig. 7) or rank-bins (which gold ranks the chosen and rejected responses come
    from, Fig. 4).

    A synthetic world: gold r* ~ N(0, 1), 10 proxies r* + σ·N(0, 1) with σ from 0.5 to 1.5,
    optionally with prompts that differ in difficulty and disagreement and correlated
    responses (rmaudit.metrics.regret.world); each proxy's regret is its best-of-16 NDR on 200
    downstream prompts × 16 responses.  Each row: Spearman correlation across proxies of
    test-set accuracy with NDR, mean ± stderr over replicate test sets, and the replicates'
    2.5-97.5 % range.
    """
    options: _StudyOptions = {"seed": seed}
    if replicates is not None:
        options["replicates"] = replicates
    try:
        options["world"] = RegretWorld(
            difficulty=difficulty,
            disagreement=disagreement,
            response_correlation=response_correlation,
        )
        if kind == "responses":
            result = design_studies.responses_vs_prompts(samples, **_with_ks(ks), **options)
        elif kind == "budget":
            result = design_studies.annotation_budget(budget, **_with_ks(ks), beta=beta, **options)
        else:
            result = design_studies.rank_bins(bins, pool, **options)
    except MetricInputError as error:
        field = f"--{error.field.replace('_', '-')}" if error.field else None
        raise BadInput(error.problem, field=field) from None
    console().print(_table(result))


class _StudyOptions(TypedDict, total=False):
    """The options every design study takes, where the command line sets them."""

    seed: int
    replicates: int
    world: RegretWorld


class _Ks(TypedDict, total=False):
    ks: tuple[int, ...]


def _with_ks(value: str | None) -> _Ks:
    ks = _ks(value)
    return {} if ks is None else {"ks": ks}


def _table(result: design_studies.StudyResult) -> Table:
    notes = ", ".join(f"{k} {v}" for k, v in result.notes.items())
    table = Table(
        title=f"{result.title}  [bold yellow]SIMULATED[/]",
        title_justify="left",
        caption=f"Spearman of test-set accuracy with best-of-n NDR across proxies; "
        f"mean ± stderr over replicates [2.5-97.5 % of replicates]; {notes}",
        caption_justify="left",
    )
    for name in result.rows[0].setting:
        table.add_column(name, justify="right")
    table.add_column("Spearman corr.", justify="right")
    table.add_column("range", justify="right")
    for row in result.rows:
        table.add_row(
            *(f"{v:g}" if isinstance(v, int) else f"{v:.1f}" for v in row.setting.values()),
            f"{row.spearman:.3f} ± {row.stderr:.3f}",
            f"[{row.low:.2f}, {row.high:.2f}]",
        )
    return table
