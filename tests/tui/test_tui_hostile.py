"""Text from data is never markup in the TUI: every screen — runs, leaderboard, failures, a
prompt (and a second RM beside it), the curves' tabs, help, the paired comparisons, pair
failures, flips under shift and a pair — opens on hostile titles, labels, prompts, responses
and subsets (tests/_hostile.py), shows them as written, sends no control character to the
terminal, and turns nothing into a link or an action."""

from __future__ import annotations

import asyncio
import re

import pytest
from _hostile import MARKUP, hostile_audit

from rmaudit.tui.app import AuditApp
from rmaudit.tui.screens.comparison import ComparisonScreen
from rmaudit.tui.screens.curves import CurvesScreen
from rmaudit.tui.screens.failures import FailuresScreen
from rmaudit.tui.screens.help import HelpScreen
from rmaudit.tui.screens.leaderboard import LeaderboardScreen
from rmaudit.tui.screens.pair import PairScreen
from rmaudit.tui.screens.pair_failures import PairFailuresScreen
from rmaudit.tui.screens.prompt import PromptScreen
from rmaudit.tui.screens.runs import RunsScreen

RAW = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff]"
)

#: the keys from the start (the leaderboard) to each screen, the screen's type, and a string
#: from data it must show as written
WALKS = {
    "runs": (("escape",), RunsScreen, "[link=file:///etc/passwd]"),
    "leaderboard": ((), LeaderboardScreen, MARKUP[1]),
    "failures": (("enter",), FailuresScreen, MARKUP[1]),
    "prompt": (("enter", "enter"), PromptScreen, "⟨U+001B⟩[31mred"),
    "prompt-compare": (("enter", "enter", "c"), PromptScreen, "[@click=app.quit]"),
    # the tabs: RETA curve, best-of-n, shift sweep (and its next quantity), reliability diagram;
    # each legend names the RMs
    "curves-reta": (("c",), CurvesScreen, MARKUP[1]),
    "curves-best-of-n": (("c", "l"), CurvesScreen, MARKUP[1]),
    "curves-shift": (("c", "l", "l", "v"), CurvesScreen, MARKUP[1]),
    "curves-reliability": (("c", "l", "l", "l"), CurvesScreen, MARKUP[1]),
    "help": (("question_mark",), HelpScreen, "Leaderboard"),
    "comparison": (("d",), ComparisonScreen, MARKUP[1]),
    "pair-failures": (("p",), PairFailuresScreen, MARKUP[1]),
    "pair": (("p", "a", "G", "enter"), PairScreen, "[/]"),
    "flips": (("p", "v"), PairFailuresScreen, "[/] subset"),
}


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory):
    return hostile_audit(tmp_path_factory.mktemp("hostile"))


def screen_contents(app) -> tuple[str, list]:
    """The screen as drawn: its text, and every style a segment carries."""
    strips = app.screen._compositor.render_strips()
    text = "\n".join("".join(segment.text for segment in strip) for strip in strips)
    styles = [segment.style for strip in strips for segment in strip if segment.style]
    return text, styles


async def walk(db, keys, size):
    app = AuditApp(db)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause()
        text, styles = screen_contents(app)
        return app.screen, text, styles, app.is_running


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize("name", WALKS)
def test_every_screen_shows_hostile_text_literally(hostile_db, name, size):
    keys, screen_type, expected = WALKS[name]
    screen, text, styles, running = asyncio.run(walk(hostile_db, keys, size))
    assert running, "a key from data (an @click action) quit the app"
    assert isinstance(screen, screen_type)
    assert expected in text
    assert not RAW.search(text), repr(RAW.search(text).group())
    assert not [s.link for s in styles if s.link], "text from data became a link"
    # Textual's own widgets carry "@mouse.down"; markup's [@click=…] would carry "@click"
    actions = [s.meta["@click"] for s in styles if s.meta and "@click" in s.meta]
    assert not actions, f"text from data became an action: {actions}"


def test_the_failures_and_pairs_keep_the_hostile_strings_whole(hostile_db):
    """What the tables hold (not only what fits on screen) is the data as written."""

    async def run():
        app = AuditApp(hostile_db)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press("p", "a")
            await app.workers.wait_for_complete()
            await pilot.pause()
            return [p.prompt for p in app.screen.shown], app.screen.table.row_values()

    prompts, rows = asyncio.run(run())
    assert any(p.startswith(MARKUP[0]) for p in prompts)
    assert any(row[-1].startswith("[/] [link=file:///etc/passwd]passwd[/link]") for row in rows)
