"""Headless Chromium for the HTML report's tests (skipped where it is not installed).

Chromium's window is at least 500 px wide, so a page is measured and photographed inside an
iframe of the width asked for: a harness page beside it opens every ``<details>``, then writes
how far the widest element reaches past the visible width into its title, which
``--dump-dom`` returns; it can
also type into the page's search box and count the entries left in view.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

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
  const hidden = [...doc.querySelectorAll("body *")].map(e => e.scrollWidth - e.clientWidth);
  const items = [...doc.querySelectorAll(".item")];
  const past = Math.max(...edges) + Math.max(0, ...hidden) - doc.documentElement.clientWidth;
  document.title = "past " + Math.max(0, Math.ceil(past)) + " shown " +
    items.filter(i => !i.hidden).length;
}});
</script></body></html>"""


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
    dom = subprocess.run(
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
