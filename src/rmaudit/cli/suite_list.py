"""``rmaudit audit --list-suites``: one line per suite (its name, whether its data is found,
its title cut at a word to the console's width), and with ``--suite NAME`` the details of
the suites named: what each measures, its size, its data's source and version, and where it
is found."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rmaudit.display.literal import literal
from rmaudit.suites import SUITES, Suite

#: the width of the suite-name column (the longest name, rewardbench-math, and a space)
NAME_WIDTH = max(len(name) for name in SUITES) + 1
#: the found column: "found", "hub", "no", or "earlier" (found under a folder an earlier
#: audit in the DB read)
FOUND_WIDTH = len("earlier") + 1


def print_suite_list(
    out: Console,
    names: Sequence[str],
    data_dir: str | None,
    locate: Callable,
    earlier: list[Path],
    db_path: str,
) -> None:
    """One line per suite, or with ``names`` each named suite's details."""
    wheres = {
        suite.name: _where(suite, data_dir, locate, earlier, db_path)
        for suite in SUITES.values()
        if not names or suite.name in names
    }
    if names:
        for name in names:
            _print_details(out, SUITES[name], wheres[name])
        return
    out.print("rmaudit audit suites (one suite's details: --list-suites --suite NAME)")
    room = max(out.width - NAME_WIDTH - FOUND_WIDTH - 2, 20)
    for suite in SUITES.values():
        found = wheres[suite.name][0]
        line = f"  {suite.name:<{NAME_WIDTH}}{found:<{FOUND_WIDTH}}{cut_at_word(suite.title, room)}"
        out.print(literal(line), no_wrap=True, overflow="ignore", crop=False)
    out.print("found: data here; hub: downloaded when named; no: its details say from where")


def cut_at_word(text: str, width: int) -> str:
    """``text`` whole where it fits ``width`` characters, else cut after its last whole word
    that leaves room for "…"."""
    if len(text) <= width:
        return text
    kept = text[: width - 1].rsplit(" ", 1)[0].rstrip(" ,;:—-")
    return kept + "…"


def _where(
    suite: Suite, data_dir: str | None, locate: Callable, earlier: list[Path], db_path: str
) -> tuple[str, str]:
    """(the found column's word, the details' line on where the data is)."""
    located = locate(suite, data_dir, download=False)
    if located:
        return "found", located.where
    used = next((root for root in earlier if locate(suite, root, download=False)), None)
    if used:
        return "earlier", f"under {used}, which an audit in {db_path} read: pass --data-dir {used}"
    if suite.hub:
        return "hub", "no: hub download when named with --suite"
    return "no", f"no: fetch {suite.fetch}"


def _print_details(out: Console, suite: Suite, where: tuple[str, str]) -> None:
    origin = suite.origin
    if suite.hub:
        origin += (
            f"; from the hub: hf.co/datasets/{suite.hub.repo} at revision "
            f"{suite.hub.revision!r}, not pinned yet: the commit it resolves to is recorded "
            "with each run"
        )
    out.print(Text.assemble((suite.name, "bold"), ": ", literal(suite.title)))
    parts = [("measures", suite.measures), ("size", suite.size), ("data", origin)]
    if suite.recorded:
        parts.append(("--recorded-judges", suite.recorded.where))
    parts.append(("found", where[1]))
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")  # a path or URL longer than a line is folded, not cut
    for label, value in parts:
        grid.add_row(f"  {label}:", literal(value))
    out.print(grid)
