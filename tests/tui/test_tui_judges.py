"""A pairwise judge in ``rmaudit tui``: its pair failures (from its stored verdicts: the pairs
whose P(chosen preferred), both orders averaged, is at most ½) and, on a pair, its verdict and
reply in each order, shown literally."""

from __future__ import annotations

import asyncio
import math
import sqlite3
from pathlib import Path

import pytest

from rmaudit.components import shown_key
from rmaudit.tui.app import AuditApp
from rmaudit.tui.screens.pair import PairScreen
from rmaudit.tui.screens.pair_failures import PairFailuresScreen

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "judges.toml"


@pytest.fixture(scope="module")
def judge_db(tmp_path_factory):
    from rmaudit.cli import main

    folder = tmp_path_factory.mktemp("tui-judges")
    recipe = folder / "judges.toml"
    recipe.write_text(RECIPE.read_text().replace("k = 48", "k = 8"))
    db = folder / "judges.db"
    with pytest.raises(SystemExit) as done:
        main(["run", str(recipe), "--db", str(db)])
    assert done.value.code == 0
    return db


def wrong_pairs(db: Path) -> set[str]:
    """Pairs whose P(chosen) averaged over both orders is at most ½, by plain SQL + Python."""
    with sqlite3.connect(db) as conn:
        rm_key = conn.execute(
            "select rm_key from run_reward_models where label = 'fair judge'"
        ).fetchone()[0]
        verdicts = dict(
            conn.execute("select shown_key, p_first from judge_verdicts where rm_key = ?", [rm_key])
        )
        pairs = conn.execute(
            "select id, prompt_id, chosen_id, rejected_id from pairs where perturber_key is null"
        ).fetchall()
    wrong = set()
    for pid, prompt, chosen, rejected in pairs:
        p = (
            verdicts[shown_key(prompt, chosen, rejected)]
            + 1
            - verdicts[shown_key(prompt, rejected, chosen)]
        ) / 2
        if not math.log(p / (1 - p)) > 0:
            wrong.add(pid)
    return wrong


def test_a_judges_pair_failures_and_its_verdicts_in_both_orders(judge_db):
    async def run():
        app = AuditApp(str(judge_db))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press("p")  # on the first RM, the fair judge: the pairs it gets wrong
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
            failures = pilot.app.screen
            assert isinstance(failures, PairFailuresScreen)
            shown = {p.pair_id for p in failures.shown}
            await pilot.press("enter")
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
            assert isinstance(pilot.app.screen, PairScreen)
            return shown, str(pilot.app.screen.query_one("#pair-info").render())

    shown, info = asyncio.run(run())
    assert shown == wrong_pairs(judge_db) and shown
    assert "chosen shown first: [[" in info and "rejected shown first: [[" in info
    assert "reply: [[" in info
