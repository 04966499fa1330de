"""Reading a process reward model's failures in the TUI: enter on a PRM opens its solutions
worst first, enter on one shows each step with the PRM's score, the data's erroneous marks
and the PRM's first flagged step; hostile questions and steps are shown as written."""

from __future__ import annotations

import asyncio

import pytest
from _hostile import MARKUP, SHOWN_CONTROL
from _prm_data import write_prmbench
from test_tui_hostile import RAW, screen_contents

from rmaudit.cli import main
from rmaudit.results.solutions import solution_views
from rmaudit.store import Store
from rmaudit.tui.app import AuditApp
from rmaudit.tui.screens.solutions import SolutionScreen, SolutionsScreen


@pytest.fixture(scope="module")
def prm_db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("prm")
    data = write_prmbench(folder / "data", per_file=2, hostile=True)
    db = folder / "prm.db"
    with pytest.raises(SystemExit) as done:
        main(
            [
                "audit",
                "random",
                "step-length",
                "--suite",
                "prmbench",
                "--data-dir",
                str(data),
                "--db",
                str(db),
                "--results",
                str(folder / "r.json"),
            ]
        )
    assert done.value.code == 0
    return db


async def _walk(db, keys):
    app = AuditApp(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause()
        text, styles = screen_contents(app)
        views = getattr(app.screen, "views", None) or [getattr(app.screen, "view", None)]
        return app.screen, text, styles, views, app.is_running


def test_enter_opens_the_solutions_worst_first(prm_db):
    screen, text, styles, views, running = asyncio.run(_walk(prm_db, ["enter"]))
    assert running and isinstance(screen, SolutionsScreen)
    misses = [view.miss for view in views]
    assert misses == sorted(misses, reverse=True) and misses[0] > 0
    assert "worst first" in text and "first flagged" in text
    assert MARKUP[1][:24] in text  # a hostile question, as written (cut to the width)
    assert not RAW.search(text)


def test_a_solution_shows_each_step_score_and_marks_literally(prm_db):
    screen, text, styles, views, running = asyncio.run(_walk(prm_db, ["enter", "enter"]))
    assert running, "a key from data (an @click action) quit the app"
    assert isinstance(screen, SolutionScreen)
    (view,) = views
    assert f"step 1 · score {view.steps[0].score:.3f}" in text
    if view.first_error >= 0:
        assert "marked erroneous (the first)" in text
    assert MARKUP[2] in text and SHOWN_CONTROL.split(" ")[0] in text
    assert not RAW.search(text)
    assert not [s.link for s in styles if s.link]
    assert not [s.meta["@click"] for s in styles if s.meta and "@click" in s.meta]


def test_the_views_hold_the_steps_as_the_data_does(prm_db):
    store = Store.open_readonly(prm_db)
    try:
        run_id = store.read.runs()[0].id
        (label, rm_key), *_ = store.read.reward_models(run_id)
        views = solution_views(store, run_id, rm_key)
    finally:
        store.close()
    assert any(MARKUP[1] in step.text for view in views for step in view.steps)
    assert all(len(view.steps) >= 2 for view in views)
