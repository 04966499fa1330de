"""``rmaudit report --html``: one self-contained page (figures inline, no network, no script
but its own search) with the leaderboard, the legend, every figure, provenance and each RM's
worst prompts, read back with Python's HTML parser and checked against the DB."""

from __future__ import annotations

import base64
import hashlib
import re
import sqlite3
from html.parser import HTMLParser
from pathlib import Path

import pytest
from _hostile import ALL, MARKDOWN, MARKUP, SHOWN_CONTROL, hostile_audit
from _support import PAIR_RECIPE, metric_rows, run_small_audit

from rmaudit.components.vocabulary import ResultKey
from rmaudit.recipe import load_recipe
from rmaudit.report import HTML_NAME
from rmaudit.run import Runner
from rmaudit.store import Store

ROOT = Path(__file__).resolve().parents[1]
VOID = {"meta", "img", "input", "br", "hr", "link"}
#: the page's width on a narrow phone, where the issue found figure text about 4 px tall
PHONE_PX = 400
#: the least a figure's text may measure there (its box's height, px)
READABLE_PX = 9.0


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None]) -> None:
        self.tag, self.attrs, self.children = tag, attrs, []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def walk(self):
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.walk()

    def find(self, tag: str, cls: str | None = None) -> list[Node]:
        return [
            n
            for n in self.walk()
            if n.tag == tag and (cls is None or cls in (n.attrs.get("class") or "").split())
        ]


class Tree(HTMLParser):
    """The page as a tree of nodes (text decoded), failing on a tag closed out of order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag):
        assert self.stack[-1].tag == tag, (self.stack[-1].tag, tag)
        self.stack.pop()

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse(path: Path) -> Node:
    tree = Tree()
    tree.feed(path.read_text(encoding="utf-8"))
    tree.close()
    assert [n.tag for n in tree.stack] == ["#root"]  # every element closed
    return tree.root


@pytest.fixture(scope="module")
def small_db(tmp_path_factory):
    return run_small_audit(tmp_path_factory.mktemp("html"))


def run_pairs(folder: Path, recipe_text: str) -> Path:
    recipe = folder / "pairs.toml"
    examples = ROOT / "examples" / "rewardbench-mini.jsonl"
    recipe.write_text(recipe_text.replace("{path}", str(examples)), encoding="utf-8")
    db = folder / "pairs.db"
    store = Store.open(db)
    try:
        Runner(load_recipe(recipe), store).run()
    finally:
        store.close()
    return db


@pytest.fixture(scope="module")
def pairs_db(tmp_path_factory):
    return run_pairs(tmp_path_factory.mktemp("html-pairs"), PAIR_RECIPE)


#: labels past LABEL_MAX (60) that differ only after it, so both shorten to the same text
ALIKE = "a reward model whose label runs on well past what a table shows: "
ALIKE_LABELS = [ALIKE + "honest", ALIKE + "length-biased"]


@pytest.fixture(scope="module")
def alike_db(tmp_path_factory):
    recipe = PAIR_RECIPE.replace('label = "honest"', f'label = "{ALIKE_LABELS[0]}"').replace(
        'label = "length-biased"', f'label = "{ALIKE_LABELS[1]}"'
    )
    return run_pairs(tmp_path_factory.mktemp("html-alike"), recipe)


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory):
    return hostile_audit(tmp_path_factory.mktemp("html-hostile"))


def report(rmaudit, db: Path, out: Path) -> Node:
    result = rmaudit("report", str(db), "--out", str(out), "--html")
    assert result.code == 0, result.err
    assert str(out / HTML_NAME) in result.out.split()
    return parse(out / HTML_NAME)


def worst_by_rm(page: Node) -> dict[str, list[Node]]:
    """Each RM's heading → its worst-prompt entries, in page order."""
    found: dict[str, list[Node]] = {}
    current = None
    for node in page.walk():
        if node.tag == "h4":
            current = found.setdefault(node.text(), [])
        elif node.tag == "details" and "item" in node.attrs.get("class", ""):
            current.append(node)
    return found


def test_the_page_is_self_contained_and_runs_only_its_own_search(rmaudit, small_db, tmp_path):
    page = report(rmaudit, small_db, tmp_path)
    nodes = list(page.walk())
    assert not page.find("link") and not page.find("iframe") and not page.find("object")
    for node in nodes:
        for name, value in node.attrs.items():
            assert not name.startswith("on"), (node.tag, name)  # no event handler
            if name in ("src", "href", "action", "data"):
                assert value.startswith(("data:image/png;base64,", "#")), (node.tag, value)
    (script,) = page.find("script")
    assert "src" not in script.attrs
    (csp,) = [
        m for m in page.find("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"
    ]
    policy = dict(part.strip().split(" ", 1) for part in csp.attrs["content"].split(";"))
    assert policy["default-src"] == "'none'" and policy["img-src"] == "data:"
    digest = base64.b64encode(hashlib.sha256(script.text().encode()).digest()).decode()
    assert policy["script-src"] == f"'sha256-{digest}'"  # no other script can run
    # every figure written beside the page is inline as SVG, its text as text, and every id a
    # figure keeps is its own: no figure draws with another's clip path or marker
    assert not page.find("img")
    figures = {svg.attrs["aria-label"]: svg for svg in page.find("svg")}
    pngs = sorted(p for p in tmp_path.iterdir() if p.suffix == ".png")
    assert sorted(figures) == sorted(p.stem for p in pngs) and pngs
    assert all(svg.find("text") for svg in figures.values())
    ids = [n.attrs["id"] for n in page.walk() if "id" in n.attrs]
    assert len(ids) == len(set(ids))
    for name, svg in figures.items():
        refs = {n.attrs.get("xlink:href") for n in svg.walk()} - {None}
        refs |= set(re.findall(r"url\(#([^)]*)\)", str([n.attrs for n in svg.walk()])))
        mine = {n.attrs["id"] for n in svg.walk() if "id" in n.attrs}
        assert {r.removeprefix("#") for r in refs} <= mine, name
    search = page.find("input")
    assert [i.attrs["id"] for i in search] == ["search"]


def test_the_leaderboard_legend_and_provenance_say_what_the_db_says(rmaudit, small_db, tmp_path):
    page = report(rmaudit, small_db, tmp_path)
    table = page.find("table")[0]  # the leaderboard; the paired comparisons' tables follow
    headers = [th.text() for th in table.find("th")]
    rows = {tr.find("td")[0].text(): tr.find("td") for tr in table.find("tr")[1:]}
    for label, _, key, value, stderr in metric_rows(small_db):
        column = next(i for i, h in enumerate(headers) if h.startswith(LABELS[key]))
        cell = rows[label][column]
        assert cell.text() == f"{value:.4f} ± {stderr:.4f}"
        assert cell.attrs["data-label"] == headers[column]  # a phone shows it beside the value
    (legend,) = page.find("ul", "legend")
    lines = [li.text() for li in legend.find("li")]
    assert any(line.startswith("RETA(η): mean oracle score") for line in lines)
    assert not any("sparkline" in line or line.startswith("Next:") for line in lines)
    conn = sqlite3.connect(small_db)
    run_id, recipe = conn.execute("select id, recipe_text from runs").fetchone()
    conn.close()
    (recipe_block,) = page.find("pre", "recipe")
    assert recipe_block.text() == recipe.rstrip()
    assert any(run_id in li.text() for li in page.find("ul", "sources")[0].find("li"))


def test_a_pair_runs_leaderboard_has_a_row_per_rm_and_every_number_on_the_page(
    rmaudit, pairs_db, tmp_path
):
    """A pair run's leaderboard: a row per RM with its headline, letters and rank; the
    accuracy per subset in its own table (a row per RM); every other number in a folded table
    (a row per RM, as the Markdown report has it). Each stored value appears, with its ±."""
    page = report(rmaudit, pairs_db, tmp_path)
    board, subsets, details = page.find("table")[:3]
    headers = [th.text() for th in board.find("th")]
    assert headers[:5] == ["model", "accuracy ↑", "95% CI", "group", "rank"]
    assert [tr.find("td")[0].text() for tr in board.find("tr")[1:]] in (
        ["honest", "length-biased"],
        ["length-biased", "honest"],
    )
    assert [tr.find("td")[0].text() for tr in details.find("tr")[1:]] == [
        "honest",
        "length-biased",
    ]
    shown = shown_cells(board, subsets, details)
    conn = sqlite3.connect(pairs_db)
    rows = conn.execute(
        """select m.label, r.key, r.label, r.value, r.stderr, r.higher_is_better
           from metric_results r
           join run_reward_models m on m.rm_key = r.rm_key and m.run_id = r.run_id"""
    ).fetchall()
    conn.close()
    assert len(rows) > 8 * 2
    for rm, key, label, value, stderr, higher in rows:
        cell = f"{value:.4f}" + (f" ± {stderr:.4f}" if stderr is not None else "")
        arrow = "↑" if higher else "↓"
        where = (
            (f"{label} {arrow}", rm)
            if (f"{label} {arrow}", rm) in shown
            else (ResultKey.read(key).part, rm)  # a subset's accuracy: its subset's column
        )
        assert shown[where] == cell, (rm, key)


def shown_cells(*tables: Node) -> dict[tuple[str, str], str]:
    """(column header, row's first cell) → cell text, over tables with a row per RM."""
    shown: dict[tuple[str, str], str] = {}
    for table in tables:
        names = [th.text() for th in table.find("th")]
        for tr in table.find("tr")[1:]:
            cells = [td.text() for td in tr.find("td")]
            shown.update({(name, cells[0]): cell for name, cell in zip(names, cells, strict=True)})
    return shown


def test_every_other_number_shows_each_rm_when_their_labels_shorten_alike(
    rmaudit, alike_db, tmp_path
):
    """Two RMs whose labels cut to the same 60 characters keep a row each in the folded
    table, each with its own stored numbers (it once keyed a column by the shortened label,
    so one RM's numbers hid the other's)."""
    page = report(rmaudit, alike_db, tmp_path)
    (details,) = [
        d.find("table")[0]
        for d in page.find("details")
        if d.find("summary")[0].text().startswith("every other number")
    ]
    assert [tr.find("td")[0].text() for tr in details.find("tr")[1:]] == ALIKE_LABELS
    shown = shown_cells(details)
    conn = sqlite3.connect(alike_db)
    rows = conn.execute(
        """select m.label, r.label, r.value, r.stderr, r.higher_is_better
           from metric_results r
           join run_reward_models m on m.rm_key = r.rm_key and m.run_id = r.run_id"""
    ).fetchall()
    conn.close()
    found = 0
    for rm, label, value, stderr, higher in rows:
        where = (f"{label} {'↑' if higher else '↓'}", rm)
        if where in shown:
            found += 1
            cell = f"{value:.4f}" + (f" ± {stderr:.4f}" if stderr is not None else "")
            assert shown[where] == cell, (rm, label)
    assert found >= 2 * (len(details.find("th")) - 1)


#: the leaderboard's header of each metric key of the small recipe
LABELS = {"reta@0.25": "RETA(1/4)", "bon@4": "BoN@4", "pairwise_accuracy": "pairwise acc"}


def test_each_rms_worst_prompts_come_first_with_its_favourites_and_the_oracles_best(
    rmaudit, small_db, tmp_path
):
    page = report(rmaudit, small_db, tmp_path)
    conn = sqlite3.connect(small_db)
    rows = conn.execute(
        """select m.label, p.text, s.score, l.score, r.text
           from rm_scores s join responses r on r.id = s.response_id
           join oracle_labels l on l.response_id = r.id join prompts p on p.id = r.prompt_id
           join run_reward_models m on m.rm_key = s.rm_key"""
    ).fetchall()
    conn.close()
    by_prompt: dict[tuple[str, str], list[tuple]] = {}
    for label, prompt, rm_score, oracle, text in rows:
        by_prompt.setdefault((label, prompt), []).append((rm_score, oracle, text))
    worst = worst_by_rm(page)
    assert set(worst) == {"honest", "length"}
    for label, items in worst.items():
        # the oracle gap of each prompt: the oracle's best minus the oracle score of the RM's pick
        gaps = {
            prompt: max(o for _, o, _ in rs) - max(rs)[1]
            for (rm, prompt), rs in by_prompt.items()
            if rm == label
        }
        expected = sorted((g for g in gaps.values() if g > 0), reverse=True)[:10]
        prompts = [i.find("pre", "prompt")[0].text() for i in items]
        assert [round(gaps[p], 9) for p in prompts] == [round(g, 9) for g in expected]
        badges = [i.find("span", "badge")[0].text() for i in items]
        assert badges == [f"gap {g:.3f}" for g in expected]
        first = items[0]
        responses = sorted(by_prompt[(label, prompts[0])], reverse=True)  # the RM's order
        shown = [r.find("pre")[0].text() for r in first.find("div", "response")]
        # the RM's top 3, then the oracle's best where it is not among them, then how many
        # more the page leaves out
        top = max(o for _, o, _ in responses)
        expected = responses[:3]
        if all(o < top for _, o, _ in expected):
            expected.append(next(r for r in responses if r[1] == top))
        assert shown[:-1] == [text for *_, text in expected]
        assert shown[-1] == "rmaudit tui DB shows every response of this prompt"
        captions = [r.find("p", "caption")[0].text() for r in first.find("div", "response")]
        assert captions[-1] == f"{len(responses) - len(expected)} more responses not shown"


def test_a_pair_run_shows_the_pairs_each_rm_gets_most_wrong(rmaudit, pairs_db, tmp_path):
    page = report(rmaudit, pairs_db, tmp_path)
    conn = sqlite3.connect(pairs_db)
    rows = conn.execute(
        """select m.label, c.score - r.score, pr.text from pairs p
           join pair_sets ps on ps.pair_id = p.id
           join rm_scores c on c.response_id = p.chosen_id
           join rm_scores r on r.response_id = p.rejected_id and r.rm_key = c.rm_key
           join run_reward_models m on m.rm_key = c.rm_key
           join prompts pr on pr.id = p.prompt_id where p.shift_level is null"""
    ).fetchall()
    conn.close()
    worst = worst_by_rm(page)
    assert set(worst) == {"honest", "length-biased"}
    for label, items in worst.items():
        margins = sorted(m for rm, m, _ in rows if rm == label and m <= 0)
        badges = [i.find("span", "badge")[0].text() for i in items]
        assert badges == [f"margin {m:.3f}" for m in margins[:10]]
        captions = [c.text() for c in items[0].find("p", "caption")]
        assert captions[0].startswith("chosen") and captions[1].startswith("rejected")


def test_hostile_text_is_shown_escaped_and_never_runs(rmaudit, hostile_db, tmp_path):
    out = tmp_path / "report"
    page = report(rmaudit, hostile_db, out)
    raw = (out / HTML_NAME).read_text(encoding="utf-8")
    assert len(page.find("script")) == 1  # ours: "<script>alert(1)" from data is text
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b\u202e\ufeff]", raw)
    text = page.text()
    assert SHOWN_CONTROL in text and MARKDOWN in text and MARKUP[1] in text
    prompts = [p.text() for p in page.find("pre", "prompt")]
    assert prompts and all(p.startswith(ALL.split("\x1b")[0]) for p in prompts)
    # a 100 KB response is cut, saying so
    assert "… (80,003 more characters)" in text
    # the 100 KB title heads the page cut to one line, and is whole in the recipe
    (heading,) = page.find("h1")
    assert len(heading.text()) <= 200 and heading.text().endswith("…")
    assert page.find("pre", "recipe")[0].text().count("x" * 1000) and "END" in raw


@pytest.mark.parametrize("db", ["small_db", "pairs_db", "hostile_db"])
def test_the_html_page_keeps_to_the_width_and_its_search_works_in_chromium(
    rmaudit, request, db, tmp_path
):
    """At 1280 px and at a phone's 390 px nothing reaches past the edge (the pair run's
    leaderboard has a column per subset; the hostile run has 100 KB lines and long labels),
    and the page's own search (allowed by the page's CSP) hides the entries without the
    query."""
    from _chromium import chromium, cut_off, shown_after_search

    browser = chromium()
    out = tmp_path / "page"
    page = report(rmaudit, request.getfixturevalue(db), out)
    for width in (1280, 390):
        assert cut_off(browser, out / HTML_NAME, width) == 0, width
    items = [item.text().lower() for item in page.find("details", "item")]
    query = page.find("pre", "prompt")[0].text()[:12]
    expected = sum(query.lower() in text for text in items)
    assert 0 < expected <= len(items)
    assert shown_after_search(browser, out / HTML_NAME, query) == expected
    assert shown_after_search(browser, out / HTML_NAME, "no such text anywhere") == 0


def test_a_wide_table_keeps_its_rows_and_columns_on_a_wide_screen_and_is_cards_on_a_phone():
    """Cards only at a phone's width: outside that media query no rule lays a table out as
    blocks, whatever its column count (the stylesheet read without a browser)."""
    from rmaudit.report.html_style import PAGE_STYLE, PHONE_WIDTH_PX

    top_level, phone = [], []
    depth, media, start = 0, "", 0
    for i, char in enumerate(PAGE_STYLE):
        if char == "{":
            head = PAGE_STYLE[start:i].strip()
            if head.startswith("@media"):
                media = head
            else:
                (phone if media else top_level).append(head)
            depth, start = depth + 1, i + 1
        elif char == "}":
            depth, start = depth - 1, i + 1
            media = media if depth else ""
    assert not [rule for rule in top_level if "thead" in rule or " tr" in rule]
    assert phone and media == ""
    assert f"@media (max-width: {PHONE_WIDTH_PX}px)" in PAGE_STYLE
    assert any(rule.startswith("table.cards thead") for rule in phone)


def test_a_table_with_many_columns_is_a_table_at_1280_px_and_cards_at_400_px(
    rmaudit, pairs_db, tmp_path
):
    """The pair run's leaderboard has more than 8 columns: at 1280 px every table shows rows
    and columns (a wider one would scroll inside its own box, nothing else past the edge); at a
    phone's width every table is cards and nothing scrolls sideways."""
    from _chromium import chromium, table_layout

    browser = chromium()
    out = tmp_path / "page"
    report(rmaudit, pairs_db, out)
    wide = table_layout(browser, out / HTML_NAME, 1280)
    assert max(columns for columns, _ in wide.tables) > 8
    assert {rows for _, rows in wide.tables} == {"table-row"} and wide.past == 0
    phone = table_layout(browser, out / HTML_NAME, PHONE_PX)
    assert {rows for _, rows in phone.tables} == {"block"}
    assert (phone.past, phone.scrolls) == (0, 0)
    assert wide.height < phone.height


@pytest.mark.parametrize("db", ["small_db", "pairs_db", "hostile_db"])
def test_every_figure_reads_on_a_400_px_wide_screen(rmaudit, request, db, tmp_path):
    """Laid out 400 px wide in Chromium, the text of every figure (ticks, labels, titles,
    legends, the style matrix's cells) is at least 9 px tall as rendered
    (``getBoundingClientRect``), and no figure, nor any text in it, reaches past the page's
    edge or its figure's box. Before the figures were set inline one a row at 4.8 inches,
    a 12-inch figure's text measured about 4 px there."""
    from _chromium import chromium, figure_text

    browser = chromium()
    out = tmp_path / "page"
    report(rmaudit, request.getfixturevalue(db), out)
    pngs = [p for p in out.iterdir() if p.suffix == ".png"]
    for width in (PHONE_PX, 1280):
        found = figure_text(browser, out / HTML_NAME, width)
        assert found.figures == len(pngs) and found.texts > 10 * found.figures, found
        assert found.lowest >= READABLE_PX, found
        assert found.past <= 0.5, found


def test_an_inline_figure_refers_only_to_its_own_ids_whatever_its_page_heading():
    """An audit page's headings ("suite hh") prefix its figures' ids: every id the SVG keeps
    is a valid fragment, and every clip path or marker it uses is one of its own."""
    from matplotlib.figure import Figure

    from rmaudit.report.svg import inline_svg

    figure = Figure(figsize=(4, 3))
    ax = figure.add_subplot()
    ax.plot([1, 2, 3], [3, 1, 2], marker="o")
    ax.set_title("a & b <i>")
    text = inline_svg(figure, "shift-accuracy.png", "suite hh 2")
    ids = re.findall(r' id="([^"]*)"', text)
    used = re.findall(r'(?:url\(#|href="#)([^)"]*)', text)
    assert ids and used and set(used) <= set(ids)
    assert all(re.fullmatch(r"suite-hh-2-[A-Za-z0-9]+", i) for i in ids), ids
    assert text.startswith('<svg role="img" aria-label="shift-accuracy"') and "viewBox" in text
    assert "a &amp; b &lt;i&gt;" in text and "<i>" not in text  # text from data stays text
