"""What ``rmaudit audit`` prints and writes besides its runs: the closing table of each
suite's headline numbers per model, the baselines beside them and the verdicts, and the
reports (``--report``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.table import Table

from rmaudit.display.literal import literal
from rmaudit.suites.audit_verdict import SuiteResult, audit_verdict_word, shown

if TYPE_CHECKING:
    from rich.console import Console

    from rmaudit.store import Store
    from rmaudit.suites.publisher_figures import PublisherFigures


def print_suite_summary(
    out: Console,
    store: Store,
    run_id: str,
    db_path: str,
    figures: list[PublisherFigures],
    details: bool,
) -> list[str]:
    """A suite's summary as the audit prints it: in brief, or with ``details`` in full with
    its recorded judges' figures under their publisher's rules (in brief: where they are).
    Returns the lines left to say after the verdicts (brief: the next step)."""
    from rmaudit.results.legend import next_steps

    from .publisher_tables import publisher_tables
    from .summary import print_summary

    summary = print_summary(out, store, run_id, db_path, brief=not details)
    if details:
        for table in publisher_tables(out, figures):
            out.print(table)
        return []
    if figures:
        from rmaudit.suites.publisher_figures import shared_notes

        rule = figures[0].publisher
        per = "per model and PRM aggregation" if rule == "RewardMATH" else "per subset"
        out.print(literal(f"{rule}'s own figures beside rmaudit's, {per}: --details"))
        for line in shared_notes(figures, most=3):
            out.print(literal(line))
    return next_steps(summary, db_path)


def of_prms(results: list[SuiteResult]) -> bool:
    """Whether the audit's models are process reward models (an audit never mixes kinds)."""
    return bool(results) and all(r.suite.solutions is not None for r in results)


def closing_table(results: list[SuiteResult]) -> Table:
    """One row per suite × model: the suite's headline numbers with their ±, and the verdict
    on the first number against length (paired) and chance."""
    bars = (
        "a PRM must beat step-length and random on the first number, on the paired difference"
        if of_prms(results)
        else "a model must beat length, on the paired difference, and chance on the first "
        "number; random is a reference, not a bar; (judge): a pairwise judge's accuracy, both "
        "orders, a tie ½"
    )
    table = Table(title=f"audit summary ({bars}; ± standard error)", title_justify="left")
    for header in ("suite", "model", "numbers", "verdict"):
        table.add_column(header, overflow="fold")
    for result in results:
        for index, model in enumerate(result.models):
            numbers = " · ".join(
                f"{name} {shown(cell)}" + (" (judge)" if index_of == 0 and model.convention else "")
                for index_of, (name, cell) in enumerate(model.cells.items())
            )
            table.add_row(
                result.suite.name if index == 0 else "",
                literal(model.label),
                numbers,
                audit_verdict_word(model),
                style="red" if model.passes is False else None,
                end_section=index == len(result.models) - 1,
            )
    return table


def write_reports(store: Store, results: list[SuiteResult], report_dir: Path) -> dict[str, Path]:
    """Each suite's folder (PNGs and report.md), then one report.html of every suite."""
    try:  # matplotlib is an optional extra
        from rmaudit.report import HTML_NAME, run_page, write_html, write_report
        from rmaudit.suites.audit_verdict import audit_verdict_lines
    except ImportError as error:
        raise click.ClickException(
            f"--report needs the 'report' extra: pip install 'rmaudit[report]' ({error})"
        ) from None
    written: dict[str, Path] = {}
    pages = []
    for result in results:
        page = replace(
            run_page(store, result.run_id, heading=f"suite {result.suite.name}"),
            audit_verdicts=tuple(line for _, line in audit_verdict_lines([result])),
        )
        paths = write_report(store, page, report_dir / result.suite.name)
        written[result.suite.name] = paths[-1]
        pages.append(page)
    write_html(store, pages, report_dir / HTML_NAME)
    return written
