"""``report.html``: one self-contained page to share a run (or every suite of an audit).

The leaderboard, the legend, every figure (inline SVG, its text as text: :mod:`.svg`), the
run's provenance and recipe, and each RM's worst prompts with their responses (a pair run: the
pairs it gets most wrong), with a search box.  Nothing is fetched: no network, no external
file.  Every string from the DB is made :func:`visible` and HTML-escaped, and the page's
Content-Security-Policy allows no script but the page's own search (by its hash), so text from
data can never run or load anything.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Iterable
from dataclasses import dataclass, field

from rmaudit import __version__
from rmaudit.display.formatting import (
    format_number,
    one_line,
    short_label,
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
from rmaudit.results.solutions import run_threshold
from rmaudit.results.step_aggregation import aggregation_comparisons
from rmaudit.results.summary import OracleScale, RunSummary
from rmaudit.store import Store

from .html_style import PAGE_STYLE
from .scoring_checks import checks_html
from .worst import WORST_SHOWN, WorstItem, worst_items

#: the search: hides every worst-prompt entry whose text lacks the query (case-insensitive)
SEARCH_SCRIPT = """
const box = document.getElementById("search");
const count = document.getElementById("search-count");
box.addEventListener("input", () => {
  const query = box.value.trim().toLowerCase();
  let shown = 0;
  for (const item of document.querySelectorAll(".item")) {
    const hit = !query || item.textContent.toLowerCase().includes(query);
    item.hidden = !hit;
    if (hit) { shown += 1; if (query) { item.open = true; } }
  }
  count.textContent = query ? shown + " shown" : "";
});
"""
#: the most of a run's title a heading shows
TITLE_MAX = 200
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(SEARCH_SCRIPT.encode()).digest()).decode()
#: no request of any kind; images only from the page itself; only the search script runs
CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
    f"script-src 'sha256-{_SCRIPT_HASH}'; base-uri 'none'; form-action 'none'"
)


def esc(text: object) -> str:
    """Text from data as HTML: control and bidi characters visible, every markup character
    escaped (quotes too, so it is safe in an attribute)."""
    return html.escape(visible(str(text)), quote=True)


@dataclass(frozen=True)
class RunPage:
    """What the page shows of one run: its summary, its oracle's scale and its figures
    (file name → PNG bytes, for the files beside report.md; file name → inline SVG, for the
    page)."""

    summary: RunSummary
    scale: OracleScale | None
    pngs: dict[str, bytes]
    heading: str = ""  # e.g. the audit suite's name, above the run's title
    #: an audit suite's audit verdict lines (rmaudit.suites.audit_verdict), under its heading
    audit_verdicts: tuple[str, ...] = ()
    svgs: dict[str, str] = field(default_factory=dict)


def html_report(store: Store, runs: list[RunPage], db_path: str) -> str:
    """The whole page: a contents list when there are several runs, then each run."""
    title = "rmaudit report" if len(runs) != 1 else _title(runs[0].summary)
    contents = (
        [
            "<nav><h2>Contents</h2><ol>",
            *(
                f'<li><a href="#run-{i}">{esc(page.heading or _title(page.summary))}</a></li>'
                for i, page in enumerate(runs)
            ),
            "</ol></nav>",
        ]
        if len(runs) > 1
        else []
    )
    body = [
        f"<h1>{esc(title)}</h1>",
        f"<p class=meta>Stored in <code>{esc(db_path)}</code>; made by rmaudit "
        f"{esc(__version__)}. Everything is in this file: it opens offline.</p>",
        "<div class=search><label for=search>Search the worst prompts and pairs</label> "
        "<input id=search type=search autocomplete=off> <span id=search-count></span></div>",
        *contents,
        *(_run_section(store, page, f"run-{i}") for i, page in enumerate(runs)),
    ]
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{esc(title)}</title>",
            f"<style>{PAGE_STYLE}</style>",
            "</head><body><main>",
            *body,
            "</main>",
            f"<script>{SEARCH_SCRIPT}</script>",
            "</body></html>",
            "",
        ]
    )


def _run_section(store: Store, page: RunPage, anchor: str) -> str:
    summary, scale = page.summary, page.scale
    run, bench = summary.run, summary.benchmark
    size = (
        f"benchmark {bench.id}: {bench.per_prompt} responses per prompt"
        if run.benchmark_id
        else f"{summary.pairs:,} preference pairs"
    )
    parts = [f'<section id="{anchor}" class=run>']
    if page.heading:
        parts.append(f"<p class=suite>{esc(page.heading)}</p>")
    parts.append(f"<h2>{esc(_title(summary))}</h2>")
    if summary.simulated:
        parts.append(f"<p class=simulated>{esc(summary.simulated_notice)}</p>")
    parts.append(
        f"<p>Run <code>{esc(run.id)}</code> ({esc(run.status)}), {esc(size)}, "
        f"{len(summary.reward_models)} reward models.</p>"
    )
    parts += _audit_verdicts(page.audit_verdicts)
    parts += _leaderboard(leaderboard(store, summary))
    parts += _comparisons(
        [*headline_comparisons(store, run.id), *aggregation_comparisons(store, run.id)]
    )
    parts += ["<ul class=legend>", *_items(legend(summary, scale, terminal=False)), "</ul>"]
    parts += _across_rms(summary)
    parts += checks_html(store, run.id)
    if page.svgs:
        parts.append("<h3>Figures</h3><div class=figures>")
        parts += [_figure(name, svg) for name, svg in page.svgs.items()]
        parts.append("</div>")
    parts += _worst(store, summary)
    parts += _provenance(summary)
    parts.append("</section>")
    return "\n".join(parts)


def _title(summary: RunSummary) -> str:
    """The run's title on one line, cut at :data:`TITLE_MAX` (the recipe below has it whole)."""
    return one_line(summary.run.title, TITLE_MAX)


def _items(lines: Iterable[str]) -> list[str]:
    return [f"<li>{esc(line)}</li>" for line in lines]


def _cell(text: str) -> str:
    """A cell escaped; a value ± its stderr breaks only before the ±."""
    value, *stderr = text.split(" ± ", 1)
    if not stderr:
        return esc(text)
    parts = " ".join(
        f"<span class=nowrap>{esc(part)}</span>" for part in [value, *("± " + s for s in stderr)]
    )
    return f"<span class=value>{parts}</span>"


def _table(headers: list[str], rows: list[list[str]], first_is_label: bool = True) -> list[str]:
    """A table that reads as cards on a phone (each cell names its column: ``data-label``)
    and as rows and columns on a wider screen, scrolling sideways inside its own box when it
    is wider than the page (report/html_style.py). Cells are escaped here."""
    head = "".join(f"<th scope=col>{esc(h)}</th>" for h in headers)
    body = [
        "<tr>"
        + "".join(
            f'<td data-label="{esc(header)}"{" class=label" if i == 0 and first_is_label else ""}>'
            f"{_cell(cell)}</td>"
            for i, (header, cell) in enumerate(zip(headers, row, strict=True))
        )
        + "</tr>"
        for row in rows
    ]
    return [
        "<div class=scroll><table class=cards>",
        f"<thead><tr>{head}</tr></thead><tbody>",
        *body,
        "</tbody></table></div>",
    ]


def _leaderboard(board: Leaderboard) -> list[str]:
    """The leaderboard every view shows (:mod:`rmaudit.results.leaderboard`), the headline per
    subset, and every other number folded away."""
    table = board_table(board)
    parts = [
        "<h3>Leaderboard</h3>",
        f"<p>{esc(board.caption)}. ↑ higher is better, ↓ lower is better.</p>",
        *_table([h + u for h, u in zip(table.headers, table.units, strict=True)], table.rows),
        *(f"<p class=meta>{esc(line)}</p>" for line in signed_lines(board)),
    ]
    if board.subsets:
        subsets = subsets_table(board)
        parts += [f"<h3>{esc(board.name)} by subset</h3>", *_table(subsets.headers, subsets.rows)]
    if board.details:
        details = details_table(board)
        parts += [
            f"<details><summary>every other number ({len(board.details)})</summary>",
            *_table(details.headers, details.rows),
            "</details>",
        ]
    return parts


def _across_rms(summary: RunSummary) -> list[str]:
    if not summary.run_level:
        return []
    table = run_level_table(summary.run_level)
    return [
        "<h3>Across reward models</h3>",
        *_table(table.headers, table.rows, first_is_label=False),
    ]


def _figure(name: str, svg: str) -> str:
    return f"<figure>{svg}<figcaption>{esc(name.removesuffix('.png'))}</figcaption></figure>"


def _worst(store: Store, summary: RunSummary) -> list[str]:
    parts: list[str] = []
    for label, rm_key in summary.reward_models:
        items = worst_items(store, summary, rm_key)
        if not items:
            continue
        parts.append(f"<h4>{esc(short_label(label))}</h4>")
        parts += [_worst_item(item) for item in items]
    if not parts:
        return []
    what = (
        "the solutions whose first flagged step (the first scored below the threshold of "
        f"{run_threshold(store, summary.run.id):g}) lies furthest from the first step the data "
        "marks erroneous, each step with its score and marks"
        if summary.solutions
        else "the prompts where its favourite response is furthest below the oracle's best "
        "(oracle gap: the oracle's best score minus the score of the RM's pick"
        + ("; under the label design, from the labels it drew only" if summary.labelling else "")
        + "), each with every response, the RM's favourite first"
        if summary.run.benchmark_id
        else "the pairs it gets wrong by the widest margin (RM score of chosen − rejected)"
    )
    heading = (
        "Worst solutions"
        if summary.solutions
        else "Worst prompts"
        if summary.run.benchmark_id
        else "Worst pairs"
    )
    return [f"<h3>{heading}</h3>", f"<p>Per RM, up to {WORST_SHOWN}: {esc(what)}.</p>", *parts]


def _worst_item(item: WorstItem) -> str:
    texts = "".join(
        f"<div class=response><p class=caption>{esc(caption)}</p><pre>{esc(text)}</pre></div>"
        for caption, text in item.texts
    )
    return (
        f"<details class=item><summary><span class=badge>{esc(item.badge)}</span> "
        f"{esc(item.title)}</summary><pre class=prompt>{esc(item.prompt)}</pre>{texts}"
        "</details>"
    )


def _provenance(summary: RunSummary) -> list[str]:
    run = summary.run
    facts = [
        f"run {run.id}, created {run.created_at}"
        + (f", finished {run.finished_at}" if run.finished_at else ""),
        *summary.source_lines(),
    ]
    recipe = (run.recipe_text or "").rstrip()
    parts = ["<h3>Provenance</h3>", "<ul class=sources>", *_items(facts), "</ul>"]
    if recipe:
        parts += [
            f"<p>Recipe <code>{esc(run.recipe_path or '')}</code>:</p>",
            f"<pre class=recipe>{esc(recipe)}</pre>",
        ]
    return parts


def _audit_verdicts(lines: tuple[str, ...]) -> list[str]:
    if not lines:
        return []
    return ["<h3>Verdict</h3><ul class=verdicts>", *_items(lines), "</ul>"]


def _comparisons(results: list[MetricComparison]) -> list[str]:
    """Per compared number: each model's value, letters and ranks, then the differences."""
    parts = []
    for result in results:
        if result.comparison is None:
            continue
        rows = [
            [s.model, format_number(s.value), letter_runs(s.letters), s.ranks]
            for s in result.comparison.standings
        ]
        parts += [f"<p class=meta>{esc(caption(result))}</p>"]
        parts += _table(["model", "value", "group", "ranks"], rows)
        parts += [
            "<details><summary>differences</summary><ul>",
            *_items(head_to_head_lines(result)),
        ]
        parts += ["</ul></details>"]
    return ["<h3>Paired comparisons</h3>", *parts] if parts else []
