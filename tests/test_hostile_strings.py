"""Text from data is never markup: hostile titles, RM labels, prompts, responses and subsets
(tests/_hostile.py) come out of ``rmaudit run``, ``rmaudit runs`` and ``rmaudit report``
exactly as written — control characters as visible escapes, nothing as a link, style or
mathtext — and nothing crashes.  (The TUI's screens: tests/tui/test_tui_hostile.py.)"""

from __future__ import annotations

import re
import sqlite3

import pytest
from _hostile import EMOJI, LABELS, MARKUP, SHOWN_BIDI, SHOWN_CONTROL, hostile_audit, hostile_recipe
from matplotlib.backends.backend_agg import FigureCanvasAgg
from rich.cells import cell_len

from rmaudit.report import REPORT_NAME, build_figures
from rmaudit.results.run_index import open_for_reading, resolve_run
from rmaudit.results.summary import load_summary

#: what must never reach a terminal raw: C0/C1 controls but newline, DEL, bidi controls
RAW = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff]"
)


def assert_literal(text: str) -> None:
    """Every hostile string is there as written, control characters as escapes."""
    assert not RAW.search(text), repr(RAW.search(text).group())
    flat = re.sub(r"\s+", " ", text)  # at 80 columns a line may wrap at a space
    for markup in MARKUP:
        assert markup in flat, markup
    assert EMOJI in text
    for piece in SHOWN_CONTROL.split() + SHOWN_BIDI.split():
        assert piece in flat, piece


@pytest.mark.parametrize("columns", ["80", "200", None])  # None: piped (tables fit 100)
def test_run_and_runs_print_hostile_text_literally(rmaudit, tmp_path, monkeypatch, columns):
    if columns:
        monkeypatch.setenv("COLUMNS", columns)
    else:
        monkeypatch.delenv("COLUMNS", raising=False)
    recipe, db = hostile_recipe(tmp_path), tmp_path / "hostile.db"
    result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 0, result.err[-2000:]
    assert_literal(result.out)
    assert not RAW.search(result.err)
    assert "END" in result.out  # the 100 KB title, to its end
    assert "(needs rmaudit[tui])" in re.sub(r"\s+", " ", result.out)
    listing = rmaudit("runs", "--db", str(db))
    assert listing.code == 0 and not RAW.search(listing.out)
    assert "[link=" in listing.out  # the title folds in its column (piped: 100 columns)
    run_id = sqlite3.connect(db).execute("select id from runs").fetchone()[0]
    shown = rmaudit("runs", "--db", str(db), run_id[:8])
    assert shown.code == 0
    assert_literal(shown.out)
    if columns is None:  # piped, a line of text is never wrapped: the title line whole
        assert MARKUP[1] in shown.out and "⟨U+001B⟩" in shown.out
    if columns:
        # as Rich counts cells (a terminal may draw an emoji ZWJ sequence narrower)
        assert max(cell_len(line) for line in shown.out.splitlines()) <= int(columns)


def test_the_report_shows_hostile_text_as_written(rmaudit, tmp_path):
    db = hostile_audit(tmp_path)
    out = tmp_path / "report"
    result = rmaudit("report", str(db), "--out", str(out))  # draws every figure: no mathtext error
    assert result.code == 0, result.err
    markdown = (out / REPORT_NAME).read_text(encoding="utf-8")
    assert not RAW.search(markdown)
    # Markdown's own characters escaped: no link, image, HTML or broken table from data
    assert r"\[link=file:///etc/passwd\]passwd\[/link\]" in markdown
    assert r"\!\[img\]…" in markdown  # (the label is cut at 60 characters)
    # (the recipe at the end is a fenced code block: Markdown shows it as it is)
    prose = markdown.split("## Recipe")[0]
    assert r"\<script\>alert(1)" in prose and "<script>" not in prose
    assert r"\| pipe \|" in markdown
    assert "esc⟨U+001B⟩\\[31mred" in markdown
    store = open_for_reading(db)
    try:
        figures = build_figures(load_summary(store, resolve_run(store, None)), store)
    finally:
        store.close()
    labels = set()
    for name, figure in figures.items():
        FigureCanvasAgg(figure).draw()  # mathtext would fail on "$unbalanced"
        texts = [t for legend in figure.legends for t in legend.get_texts()]
        texts += [t for ax in figure.axes for t in (ax.title, ax.xaxis.label, ax.yaxis.label)]
        assert all(not t.get_parse_math() for t in texts), name
        # an entry wider than the figure wraps: read it as one line
        labels |= {
            t.get_text().replace("\n", " ") for legend in figure.legends for t in legend.get_texts()
        }
    assert (
        "$x^2$ $unbalanced <script>alert(1)</script> | pipe | ![img]…" in labels
    )  # the RM's label as written, cut at 60 characters
    assert any(label.startswith(LABELS[2][:3] + "⟨U+001B⟩") for label in labels)
