"""Headless Chromium for the HTML report's tests (skipped where it is not installed).

Chromium's window is at least 500 px wide, so a page is measured and photographed inside an
iframe of the width asked for: a harness page beside it opens every ``<details>``, then writes
how far the widest element reaches past the visible width into its title, which
``--dump-dom`` returns; it can
also type into the page's search box and count the entries left in view.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest
from _support import HANG_S

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files")

HARNESS = """<!DOCTYPE html><html><head><style>body {{ margin: 0; }}
iframe {{ border: 0; display: block; }}</style></head><body>
<iframe id=page width={width} height={height} src="{page}"></iframe><script>
const frame = document.getElementById("page");
frame.addEventListener("load", () => {{
  const doc = frame.contentDocument;
  for (const item of doc.querySelectorAll("details")) item.open = true;
  const edges = [...doc.querySelectorAll("body *")].map(e => e.getBoundingClientRect().right);
  const box = doc.getElementById("search");
  box.value = {query};
  box.dispatchEvent(new Event("input"));
  // what a scrolling box hides (a table wider than its box) counts as reaching past the edge
  // (an SVG figure's parts have no client box: what they reach is in edges)
  const hidden = [...doc.querySelectorAll("body *")].filter(e => e instanceof HTMLElement)
    .map(e => e.scrollWidth - e.clientWidth);
  const items = [...doc.querySelectorAll(".item")];
  const past = Math.max(...edges) + Math.max(0, ...hidden) - doc.documentElement.clientWidth;
  document.title = "past " + Math.max(0, Math.ceil(past)) + " shown " +
    items.filter(i => !i.hidden).length;
}});
</script></body></html>"""


FIGURES = """<!DOCTYPE html><html><head><style>body {{ margin: 0; }}
iframe {{ border: 0; display: block; }}</style></head><body>
<iframe id=page width={width} height=800 src="{page}"></iframe><script>
const frame = document.getElementById("page");
frame.addEventListener("load", () => {{
  const doc = frame.contentDocument;
  const edge = doc.documentElement.clientWidth;
  const texts = [], heights = [];
  let past = 0, widest = "";
  for (const svg of doc.querySelectorAll("figure svg")) {{
    const box = svg.getBoundingClientRect();
    past = Math.max(past, box.right - edge, -box.left);
    for (const text of svg.querySelectorAll("text")) {{
      if (!text.textContent.trim()) continue;
      const r = text.getBoundingClientRect();
      texts.push(text.textContent);
      heights.push(r.height);
      // a text the figure's box cuts off (the reader's font wider than matplotlib's)
      const out = Math.max(r.right - box.right, box.left - r.left);
      if (out > past) {{ past = out; widest = text.textContent; }}
    }}
  }}
  const low = Math.min(...heights);
  document.title = "figures " + doc.querySelectorAll("figure svg").length + " texts " +
    texts.length + " lowest " + low.toFixed(2) + " past " + Math.max(0, past).toFixed(2) +
    " of " + JSON.stringify(texts[heights.indexOf(low)]) + " by " + JSON.stringify(widest);
}});
</script></body></html>"""


TABLES = """<!DOCTYPE html><html><head><style>body {{ margin: 0; }}
iframe {{ border: 0; display: block; }}</style></head><body>
<iframe id=page width={width} height=800 src="{page}"></iframe><script>
const frame = document.getElementById("page");
frame.addEventListener("load", () => {{
  const doc = frame.contentDocument;
  const edge = doc.documentElement.clientWidth;
  const shown = t => frame.contentWindow.getComputedStyle(t.querySelector("tbody tr")).display;
  const tables = [...doc.querySelectorAll("table")].filter(t => t.querySelector("tbody tr"));
  // what reaches past the page's edge outside a sideways-scrolling box, and how far each
  // such box scrolls
  const outside = [...doc.querySelectorAll("body *")]
    .filter(e => !e.parentElement.closest(".scroll"));
  const past = Math.max(0, ...outside.map(e => e.getBoundingClientRect().right - edge));
  const scrolls = [...doc.querySelectorAll(".scroll")].map(e => e.scrollWidth - e.clientWidth);
  document.title = JSON.stringify({{
    height: doc.documentElement.scrollHeight, past: Math.ceil(past),
    scrolls: Math.max(0, ...scrolls),
    tables: tables.map(t => ({{columns: t.querySelectorAll("thead th").length, rows: shown(t)}})),
  }});
}});
</script></body></html>"""


class TableLayout(NamedTuple):
    """How Chromium laid a page's tables out ``width`` px wide: the page's height (px), how far
    (px) anything outside a sideways-scrolling box reaches past the edge, the most any such box
    scrolls (px), and each table's column count with how its body rows show (``table-row``:
    rows and columns; ``block``: cards)."""

    height: int
    past: int
    scrolls: int
    tables: list[tuple[int, str]]


def table_layout(browser: str, page: Path, width: int) -> TableLayout:
    """:class:`TableLayout` of ``page`` laid out ``width`` px wide."""
    harness = page.with_name(f"tables-{width}.html")
    harness.write_text(TABLES.format(width=width, page=page.name), encoding="utf-8")
    dom = _dump_dom(browser, harness)
    found = re.search(r"<title>(.*)</title>", dom, re.S)
    assert found, dom[:500]
    measured = json.loads(html.unescape(found[1]))
    return TableLayout(
        measured["height"],
        measured["past"],
        measured["scrolls"],
        [(t["columns"], t["rows"]) for t in measured["tables"]],
    )


class FigureText(NamedTuple):
    """What :func:`figure_text` measured: how many figures and texts, the lowest text's box
    height (px) and what it says, and how far (px) a figure or a text in it reaches past the
    page's edge or its figure's box, and the text that does."""

    figures: int
    texts: int
    lowest: float
    past: float
    lowest_text: str
    past_text: str


def _dump_dom(browser: str, harness: Path) -> str:
    """The DOM of ``harness`` after its scripts ran, as headless Chromium dumps it."""
    return subprocess.run(
        [
            browser,
            *FLAGS,
            "--window-size=1400,900",
            "--virtual-time-budget=5000",
            "--dump-dom",
            harness.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=HANG_S,
        check=True,
    ).stdout


def figure_text(browser: str, page: Path, width: int) -> FigureText:
    """Every text of every inline SVG figure of ``page`` laid out ``width`` px wide, measured
    by Chromium's layout (``getBoundingClientRect``)."""
    harness = page.with_name(f"figures-{width}.html")
    harness.write_text(FIGURES.format(width=width, page=page.name), encoding="utf-8")
    dom = _dump_dom(browser, harness)
    found = re.search(
        r"<title>figures (\d+) texts (\d+) lowest ([\d.]+|Infinity) past ([\d.]+) of (.*) by "
        r"(.*)</title>",
        dom,
        re.S,
    )
    assert found, dom[:500]
    return FigureText(
        int(found[1]),
        int(found[2]),
        float(found[3]),
        float(found[4]),
        html.unescape(found[5]),
        html.unescape(found[6]),
    )


def chromium() -> str:
    """The Chromium executable, or skip the test."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("headless Chromium is not installed")


def _harness(page: Path, width: int, height: int, query: str = "") -> Path:
    harness = page.with_name(f"harness-{width}.html")
    text = HARNESS.format(width=width, height=height, page=page.name, query=json.dumps(query))
    harness.write_text(text, encoding="utf-8")
    return harness


def _measure(browser: str, page: Path, width: int, query: str = "") -> re.Match:
    harness = _harness(page, width, 800, query)
    dom = _dump_dom(browser, harness)
    found = re.search(r"<title>past (\d+) shown (\d+)</title>", dom)
    assert found, dom[:500]
    return found


def cut_off(browser: str, page: Path, width: int) -> int:
    """How far (px) anything of ``page``, laid out ``width`` px wide with every ``<details>``
    open, reaches past the visible width (the scrollbar's excluded), counting what a box
    hides by scrolling sideways; 0 when nothing is cut off."""
    return int(_measure(browser, page, width).group(1))


def shown_after_search(browser: str, page: Path, query: str) -> int:
    """How many worst-prompt entries the page's own search leaves in view for ``query``."""
    return int(_measure(browser, page, 1280, query).group(2))


def screenshot(browser: str, page: Path, width: int, height: int, out: Path) -> Path:
    """A PNG of ``page`` laid out ``width`` px wide (the first ``height`` px)."""
    harness = _harness(page, width, height)
    subprocess.run(
        [
            browser,
            *FLAGS,
            f"--window-size={max(width, 500)},{height}",
            "--virtual-time-budget=5000",
            f"--screenshot={out}",
            harness.as_uri(),
        ],
        capture_output=True,
        timeout=HANG_S,
        check=True,
    )
    return out
