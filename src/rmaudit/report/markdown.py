"""``report.md``: the leaderboard, the legend of what its numbers mean, the RETA curve and shift
tables, results across RMs (a regret study in Rethinking RM Evaluation's Table 1 / 4
layout), the figures, and the recipe the run was made from.

Every string from the DB is escaped for Markdown (:func:`md`), so a label with ``|``, ``*``,
``[…](…)`` or ``<…>`` is shown as written and never becomes a link, HTML or a broken table.
"""

from __future__ import annotations

import re

from rmaudit.components.vocabulary import (
    RETA_CURVE,
    SHIFT_QUANTITIES,
    SHIFT_TARGETS,
    shift_curve_key,
)
from rmaudit.display.formatting import (
    LABEL_MAX,
    eta_label,
    format_number,
    format_value,
    markdown_line,
    spread,
    visible,
)
from rmaudit.metrics.letters import letter_runs
from rmaudit.results.comparison import MetricComparison, headline_comparisons
from rmaudit.results.comparison_text import caption, head_to_head_lines
from rmaudit.results.leaderboard import (
    Leaderboard,
    board_table,
    details_table,
    leaderboard,
    run_level_table,
    signed_lines,
    subsets_table,
)
from rmaudit.results.legend import legend
from rmaudit.results.regret import load_studies, study_table
from rmaudit.results.scoring_checks import TITLE as CHECKS_TITLE
from rmaudit.results.scoring_checks import block_lines, run_scoring_checks
from rmaudit.results.step_aggregation import aggregation_comparisons
from rmaudit.results.summary import OracleScale, RunSummary
from rmaudit.store import Store

#: the curve points a table shows
CURVE_POINTS, SHIFT_POINTS = 8, 6


#: text from data on one line, every character Markdown would act on escaped
md = markdown_line


def _table(headers: list[str], rows: list[list[str]], left: int = 1) -> list[str]:
    """A pipe table; the first ``left`` columns left-aligned, the rest right-aligned."""
    return [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" if i < left else "---:" for i in range(len(headers))) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def board_markdown(board: Leaderboard) -> list[str]:
    """The leaderboard every view shows (:mod:`rmaudit.results.leaderboard`), the headline per
    subset, and every other number (``--details`` in the CLI)."""
    table = board_table(board)
    lines = [
        "## Leaderboard",
        "",
        md(board.caption) + ". ↑ higher is better, ↓ lower is better.",
        "",
        *_table(
            [md(h) + u for h, u in zip(table.headers, table.units, strict=True)],
            [[md(c) for c in row] for row in table.rows],
        ),
        "",
        *(f"- {md(line)}" for line in signed_lines(board)),
    ]
    if board.subsets:
        subsets = subsets_table(board)
        lines += [
            "",
            f"### {md(board.name)} by subset",
            "",
            *_table([md(h) for h in subsets.headers], [[md(c) for c in r] for r in subsets.rows]),
        ]
    if board.details:
        details = details_table(board)
        headers = [md(h) for h in details.headers]
        rows = [[md(label, LABEL_MAX), *numbers] for label, *numbers in details.rows]
        lines += ["", "### Every other number", "", *_table(headers, rows)]
    return [*lines, ""]


def reta_curve_table(summary: RunSummary) -> list[str]:
    stored = [
        (label, summary.curves.get((rm_key, metric, RETA_CURVE)))
        for metric, key in summary.curve_keys()
        if key == RETA_CURVE
        for label, rm_key in summary.reward_models
    ]
    curves = [(label, curve) for label, curve in stored if curve is not None]
    if not curves:
        return []
    x = curves[0][1].x
    picks = curves[0][1].spread_from_largest_x(CURVE_POINTS)
    rows = [
        [
            md(label, LABEL_MAX),
            *(f"{format_number(c.value[i], 3)} ± {format_number(c.stderr[i], 3)}" for i in picks),
        ]
        for label, c in curves
    ]
    return [
        "## RETA curve",
        "",
        f"RETA(η) ± standard error across prompts, from η = {eta_label(float(x[picks[0]]))} to "
        f"{eta_label(float(x[picks[-1]]))} (1 = a random RM).",
        "",
        *_table(["reward model", *(f"η = {eta_label(float(x[i]))}" for i in picks)], rows),
        "",
    ]


def shift_tables(summary: RunSummary) -> list[str]:
    lines: list[str] = []
    labels = dict((rm_key, label) for label, rm_key in summary.reward_models)
    for quantity, (title, higher) in SHIFT_QUANTITIES.items():
        found = [
            (labels[rm], target, c)
            for target in SHIFT_TARGETS
            for (rm, _, key), c in summary.curves.items()
            if key == shift_curve_key(quantity, target) and rm in labels
        ]
        if not found:
            continue
        found.sort(key=lambda f: list(labels.values()).index(f[0]))
        picks = spread(len(found[0][2].x), SHIFT_POINTS)
        rows = [
            [
                md(label, LABEL_MAX),
                target,
                *(format_value(float(c.value[i]), float(c.stderr[i]), digits=3) for i in picks),
            ]
            for label, target, c in found
        ]
        lines += [
            f"### {title} {'↑' if higher else '↓'}",
            "",
            *_table(
                ["reward model", "shifted", *(f"p = {found[0][2].x[i]:g}" for i in picks)],
                rows,
                left=2,
            ),
            "",
        ]
    return (
        [
            "## Under shift",
            "",
            "Each quantity ± its standard error at a few shift levels p (p = 0: the "
            "unshifted pairs); the figures below plot every level, and the legend says "
            "what each ± covers.",
            "",
            *lines,
        ]
        if lines
        else []
    )


def across_rms(summary: RunSummary, store: Store) -> list[str]:
    studies = load_studies(store, summary.run.id)
    lines: list[str] = []
    rest = [(column, cell) for column, cell in summary.run_level if column.metric not in studies]
    if rest:
        across = run_level_table(rest)
        rows = [[md(metric), md(result), *numbers] for metric, result, *numbers in across.rows]
        lines += ["## Across reward models", "", *_table(across.headers, rows, left=2), ""]
    if studies:
        lines += ["## Regret study", ""]
    for label, study_rows in studies.items():
        table = study_table(label, study_rows)
        mean = f" {md(table.summary)}." if table.summary else ""
        lines += [
            f"### {md(label)}: error metric vs policy regret (best-of-{table.n} NDR)",
            "",
            f"{table.caption[0].upper()}{table.caption[1:]}.{mean}",
            "",
            *_table(
                [md(h) for h in table.headers], [[md(row[0]), *row[1:]] for row in table.rows]
            ),  # cells: our numbers
            "",
        ]
    return lines


def recipe_block(summary: RunSummary) -> list[str]:
    """The recipe the run was made from, in a fence longer than any run of backticks in it."""
    text = visible(summary.run.recipe_text or "").rstrip()
    if not text:
        return []
    fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", text)), default=0))
    return [
        "## Recipe",
        "",
        f"`{md(summary.run.recipe_path or '')}`:",
        "",
        f"{fence}toml",
        text,
        fence,
        "",
    ]


def scoring_checks(store: Store, run_id: str) -> list[str]:
    """The run's scoring-checks block (rmaudit.results.scoring_checks), one item a line."""
    lines = block_lines(run_scoring_checks(store, run_id))
    if not lines:
        return []
    return (
        [f"## {CHECKS_TITLE.capitalize()}", ""]
        + [f"- {md(line.text.strip())}" for line in lines]
        + [""]
    )


def markdown(
    summary: RunSummary,
    store: Store,
    scale: OracleScale | None,
    figures: list[str],
    audit_verdicts: tuple[str, ...] = (),
) -> str:
    run, bench = summary.run, summary.benchmark
    lines = [f"# {md(run.title)}", ""]
    if (simulated := summary.simulated_notice) is not None:
        notice = simulated.removeprefix("Simulated: ").removeprefix("SIMULATED — ")
        lines += [f"> **SIMULATED.** {md(notice[0].upper() + notice[1:])}", ""]
    size = (
        f"benchmark `{bench.id}`: {bench.per_prompt} responses per prompt"
        if run.benchmark_id
        else f"{summary.pairs:,} preference pairs"
    )
    lines += [
        f"Run `{run.id}` ({md(run.status)}), {size}, {len(summary.reward_models)} reward models.",
        "",
    ]
    if audit_verdicts:
        lines += ["## Verdict", "", *(f"- {md(line)}" for line in audit_verdicts), ""]
    board = leaderboard(store, summary)
    lines += board_markdown(board)
    compared = [*headline_comparisons(store, run.id), *aggregation_comparisons(store, run.id)]
    lines += comparisons_markdown(compared) + [""]
    lines += [f"- {md(line)}" for line in legend(summary, scale, terminal=False)] + [""]
    lines += reta_curve_table(summary) + shift_tables(summary) + across_rms(summary, store)
    lines += scoring_checks(store, run.id)
    if figures:
        lines += ["## Figures", ""]
        for name in figures:
            lines += [f"![{name.removesuffix('.png')}]({name})", ""]
    if summary.sources:
        lines += ["## Sources", ""] + [f"- {md(line)}" for line in summary.source_lines()] + [""]
    lines += recipe_block(summary)
    return "\n".join(lines).rstrip() + "\n"


def comparisons_markdown(results: list[MetricComparison]) -> list[str]:
    """A ``## Paired comparisons`` section: per compared number each model's value, letters
    and rank interval, then the differences (nothing when nothing is compared)."""
    lines = []
    for result in results:
        if result.comparison is None:
            continue
        rows = [
            [md(s.model), format_number(s.value), letter_runs(s.letters), s.ranks]
            for s in result.comparison.standings
        ]
        lines += ["", md(caption(result)), ""]
        lines += _table(["model", "value", "group", "ranks"], rows)
        lines += ["", *(f"- {md(line)}" for line in head_to_head_lines(result))]
    return ["", "## Paired comparisons", *lines] if lines else []
