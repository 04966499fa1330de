"""The results ``rmaudit run`` and ``rmaudit runs RUN`` print, fitted to the console.

Each table comes in layouts from the widest to the narrowest — RMs as rows, then RMs as
columns, then the RMs split over several tables — and the first that fits the console's
width is printed, so no number is ever cut (text columns may wrap).  Piped output has no
width limit (``COLUMNS`` sets one), so it gets the widest layout, unpadded.  Every string from
the DB is a ``Text`` (:mod:`rmaudit.display.literal`), never markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rmaudit.components import MetricValue
from rmaudit.components.vocabulary import (
    SHIFT_QUANTITIES,
    THRESHOLD_CURVES,
    in_oracle_units,
)
from rmaudit.display.formatting import format_number, short_label, sparkline
from rmaudit.display.literal import assemble, literal
from rmaudit.results.leaderboard import Leaderboard, leaderboard
from rmaudit.results.legend import legend
from rmaudit.results.regret import StudyTable, load_studies, study_table
from rmaudit.results.summary import (
    Column,
    OracleScale,
    RunSummary,
    load_summary,
    oracle_scale,
)
from rmaudit.store import Store

from .comparison_block import print_comparisons
from .curve_tables import THRESHOLD, curve_layouts, models_header, shift_layouts
from .leaderboard import brief_board, print_leaderboard, value_text
from .scoring_checks_block import print_scoring_checks
from .table_fit import LABEL_WIDTH, Layout, broken_label, chunks, fitting, one_table

#: the shift quantities the summary tabulates (all five are plotted by the TUI and the report)
SHIFT_TABLES = ("accuracy", "ece", "auroc")


def print_summary(
    out: Console,
    store: Store,
    run_id: str,
    db_path: str,
    sources: bool = False,
    details: bool = False,
    brief: bool = False,
) -> RunSummary:
    """Every table of a run's results — the leaderboard first — then the legend of what the
    numbers mean; with ``sources``, where each part of the run came from (files with their
    SHA-256, models); with ``details``, every number the leaderboard leaves out. ``brief``
    (rmaudit audit without --details): the leaderboard's best rows, a row a line, no subset
    table, the legend's ± alone, and one line saying where the rest is. Returns the summary
    printed."""
    summary = load_summary(store, run_id)
    scale = oracle_scale(store, summary.benchmark)
    tag = Text("  SIMULATED", style="bold yellow") if summary.simulated else ""
    out.print(assemble((summary.run.title, "bold"), tag))
    reta = summary.reta_curve
    _print_board(out, store, summary, scale, db_path, details, reta, brief)
    if summary.simulated:
        out.print(literal(summary.simulated_notice), style="yellow")
    if sources and summary.sources:
        out.print(Text("sources", style="bold"))
        for line in summary.source_lines():
            out.print(literal(f"  {line}"))
    if reta:
        _print(
            out,
            Text("RETA curve by η (value ± stderr across prompts)", style="bold"),
            curve_layouts(summary, reta),
        )
    for metric, key in summary.curve_keys():
        if key in THRESHOLD_CURVES:  # a step metric over the step threshold (docs/prm.md)
            label = next(
                c.label for (_, m, k), c in summary.curves.items() if (m, k) == (metric, key)
            )
            _print(
                out,
                Text(f"{label} by step threshold (value ± stderr across questions)", style="bold"),
                curve_layouts(summary, (metric, key), THRESHOLD),
            )
    _print_across_models(out, store, summary)
    print_scoring_checks(out, store, run_id)
    if not brief:
        out.print()
    for line in legend(summary, scale, db_path, brief=brief):
        out.print(literal(line))
    return summary


def _print_board(
    out: Console,
    store: Store,
    summary: RunSummary,
    scale: OracleScale | None,
    db_path: str,
    details: bool,
    reta: tuple[str, str] | None,
    brief: bool,
) -> None:
    """The leaderboard (with each RM's RETA curve as a sparkline), its caption, the paired
    comparisons, and the numbers it leaves out (with ``details``) or how to see them."""
    board = leaderboard(store, summary)
    curves = {
        rm_key: sparkline(curve.from_largest_x())
        for _, rm_key in summary.reward_models
        if reta and (curve := summary.curves.get((rm_key, *reta))) is not None
    }
    shown = brief_board(board) if brief else board
    columns = print_leaderboard(out, shown, curves, brief=brief)
    out.print(literal(_caption(summary)))
    print_comparisons(out, store, board, db_path)
    if brief:
        out.print(literal(_behind_details(board, len(shown.rows), len(columns), db_path)))
    elif board.details and details:
        _print(
            out,
            Text("every other number (± standard error)", style="bold"),
            _board_layouts(summary, scale, board.details),
        )
    elif board.details:
        out.print(
            literal(
                f"{len(board.details)} more numbers (per subset, details): "
                f"rmaudit runs {db_path} {summary.run.id[:10]} --details"
            )
        )


def _behind_details(board: Leaderboard, rows: int, columns: int, db_path: str) -> str:
    """Where a brief summary's left-out parts are (it showed ``rows`` models and ``columns``
    other numbers): the rows past the best, the headline per subset, the other numbers and
    the whole legend."""
    parts = [f"all {len(board.rows)} models"] if rows < len(board.rows) else []
    if board.subsets:
        parts.append(f"{board.name} by subset")
    if board.details or columns < len(board.columns):
        parts.append("every other number")
    parts.append("what each number means")
    return (
        f"more ({', '.join(parts)}): --details, or rmaudit runs {db_path} "
        f"{board.summary.run.id[:10]} --details"
    )


def _print_across_models(out: Console, store: Store, summary: RunSummary) -> None:
    """The tables across reward models: each regret study's, the other run-level metrics',
    and the shift sweep's."""
    studies = load_studies(store, summary.run.id)
    for label, rows in studies.items():
        study = study_table(label, rows)
        mean_ndr = f"; {study.summary}" if study.summary else ""
        _print(
            out,
            assemble(
                (f"{label}: error metric vs policy regret (best-of-{study.n} NDR)", "bold"),
                f" — {study.caption}{mean_ndr}",
            ),
            _study_layouts(study),
        )
    run_level = [
        (column, cell) for column, cell in summary.run_level if column.metric not in studies
    ]
    if run_level:
        _print(out, Text("across reward models", style="bold"), _run_level_layouts(run_level))
    for quantity in SHIFT_TABLES:
        layouts = shift_layouts(summary, quantity)
        if layouts:
            title, higher = SHIFT_QUANTITIES[quantity]
            _print(
                out,
                Text(
                    f"{title} {'↑' if higher else '↓'} under shift, by shift level p", style="bold"
                ),
                layouts,
            )


def _print(out: Console, title: Text, layouts: list[Layout]) -> None:
    out.print(title)
    for table in fitting(out, layouts):
        out.print(table)


def _header(column: Column, scale: OracleScale | None) -> Text:
    """The metric's label and arrow, and for an oracle score (with ``scale``) the oracle's
    scale under it."""
    header = literal(f"{column.header} {column.arrow}")
    if scale is not None and in_oracle_units(column.key):
        header.append(f"\n[{scale.short}]", style="dim")
    return header


# -- the leaderboard ------------------------------------------------------------------------


def _board_layouts(
    summary: RunSummary, scale: OracleScale | None, columns: list[Column]
) -> list[Layout]:
    rms = summary.reward_models
    layouts: list[Layout] = [
        lambda: [_board_by_rm(summary, scale, columns)],
        lambda: [_board_by_metric(summary, scale, rms, False, columns)],
        lambda: [_board_by_metric(summary, scale, rms, True, columns)],
    ]
    for size in range(len(rms) - 1, 0, -1):
        layouts.append(partial(_boards_by_metric, summary, scale, chunks(rms, size), columns))
    return layouts


def _boards_by_metric(
    summary: RunSummary,
    scale: OracleScale | None,
    chunks: list[list[tuple[str, str]]],
    columns: list[Column],
) -> list[Table]:
    return [_board_by_metric(summary, scale, chunk, True, columns) for chunk in chunks]


def _board_by_rm(summary: RunSummary, scale, columns: list[Column]) -> Table:
    table = Table()
    table.add_column(models_header(summary), style="bold", overflow="fold")
    for column in columns:
        table.add_column(_header(column, scale), justify="right", no_wrap=True)
    for label, rm_key in summary.reward_models:
        row: list[Text | str] = [literal(short_label(label))]
        row += [value_text(summary.cells.get((rm_key, c.metric, c.key)), True) for c in columns]
        table.add_row(*row)
    return table


def _board_by_metric(
    summary: RunSummary,
    scale,
    rms: Sequence[tuple[str, str]],
    two_lines: bool,
    columns: list[Column],
) -> Table:
    table = Table()
    # the oracle's scale once, in the corner, rather than on every best-of-n row
    oracle_units = scale is not None and any(in_oracle_units(c.key) for c in columns)
    corner = Text(f"BoN scale:\n[{scale.short}]", style="dim") if oracle_units else ""
    table.add_column(corner, overflow="fold", max_width=LABEL_WIDTH)
    for label, _ in rms:
        table.add_column(
            broken_label(short_label(label)) if two_lines else literal(short_label(label)),
            justify="right",
            overflow="fold",
        )
    for column in columns:
        table.add_row(
            _header(column, None),
            *(
                value_text(summary.cells.get((rm_key, column.metric, column.key)), two_lines)
                for _, rm_key in rms
            ),
        )
    return table


# -- results across RMs: regret studies (Table 1 / 4 layout) and the rest ----------------------


def _study_layouts(study: StudyTable) -> list[Layout]:
    return [partial(one_table, _study, study, two_lines) for two_lines in (False, True)]


def _study(study: StudyTable, two_lines: bool) -> Table:
    table = Table()
    for index, header in enumerate(study.headers):
        table.add_column(
            broken_label(header) if two_lines else literal(header),
            style="bold" if index == 0 else None,
            justify="left" if index == 0 else "right",
            no_wrap=index > 0,
        )
    for row in study.rows:
        cells = [
            literal(cell.replace(" [", "\n[") if two_lines and i else cell)
            for i, cell in enumerate(row)
        ]
        table.add_row(*cells)
    return table


def _run_level_layouts(run_level: list[tuple[Column, MetricValue]]) -> list[Layout]:
    return [partial(one_table, _run_level, run_level, capped) for capped in (False, True)]


def _run_level(run_level: list[tuple[Column, MetricValue]], capped: bool) -> Table:
    table = Table()
    for header in ("metric", "result"):
        table.add_column(header, overflow="fold", max_width=LABEL_WIDTH if capped else None)
    for header in ("value", "± stderr", "95% CI"):
        table.add_column(header, justify="right", no_wrap=True)
    for column, cell in run_level:
        table.add_row(
            literal(column.metric),
            literal(column.header),
            format_number(cell.value),
            format_number(cell.stderr),
            f"[{format_number(cell.ci_low, 3)}, {format_number(cell.ci_high, 3)}]"
            + ("≈" if cell.approximate else ""),
        )
    return table


def _caption(summary: RunSummary) -> str:
    bench = summary.benchmark
    if summary.solutions:
        line = (
            f"{summary.solutions:,} solutions of {summary.questions:,} questions "
            f"(set {(summary.run.solution_set_key or '')[:10]})"
        )
    elif summary.run.benchmark_id:
        line = f"benchmark {bench.id[:10]}: {bench.per_prompt} responses per prompt, {bench.origin}"
        if summary.pairs:
            line += f"; {summary.pairs:,} preference pairs"
    else:
        line = f"{summary.pairs:,} preference pairs (set {bench.id[:10]})"
    return line + f"; run {summary.run.id[:10]}"
