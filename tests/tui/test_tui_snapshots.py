"""Screenshots of every screen at 80×24 and 120×40 (pytest-textual-snapshot).

The DB comes from a fixed recipe with fixed timestamps (conftest.py), so the pictures are the
same on every run.  After an intended change of the UI: ``pytest tests/tui --snapshot-update``
and look at the new SVGs before committing them.
"""

from __future__ import annotations

import pytest

from rmaudit.tui.app import AuditApp

SIZES = {"80x24": (80, 24), "120x40": (120, 40)}
#: the keys that lead from the start (the latest run's leaderboard) to each screen
SCREENS = {
    "runs": ("escape",),
    "leaderboard": (),
    "curves": ("c",),
    "curves-best-of-n": ("c", "l"),
    "failures": ("enter",),
    "prompt": ("enter", "enter"),
    "prompt-compare": ("enter", "enter", "c"),
    "help": ("question_mark",),
    "comparison": ("d",),
    # the RM column stays when the table scrolls right
    "leaderboard-scrolled": ("right",) * 4,
}
#: the same for a run of preference pairs with a shift sweep (tests/tui/conftest.py: pair_db)
PAIR_SCREENS = {
    "pairs-leaderboard-scrolled": ("right",) * 9,
    "pair-failures": ("enter",),
    "pair-failures-all-by-subset": ("enter", "a", "t"),
    "pair": ("enter", "enter"),
    "pair-flips": ("enter", "v"),
    "pair-flip": ("enter", "v", "enter"),
    "pair-help": ("enter", "question_mark"),
}


def pressing(keys):
    """A snapshot's ``run_before``: press ``keys`` in turn, each once its loading is done."""

    async def run_before(pilot) -> None:
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("screen", SCREENS)
def test_screen(snap_compare, audit_db, screen, size):
    assert snap_compare(
        AuditApp(audit_db), terminal_size=SIZES[size], run_before=pressing(SCREENS[screen])
    )


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("screen", PAIR_SCREENS)
def test_pair_screen(snap_compare, pair_db, screen, size):
    assert snap_compare(
        AuditApp(pair_db), terminal_size=SIZES[size], run_before=pressing(PAIR_SCREENS[screen])
    )
