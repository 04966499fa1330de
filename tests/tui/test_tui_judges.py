"""A pairwise judge in ``rmaudit tui``: its pair failures (from its stored verdicts: the pairs
whose credit over both orders — 1 chosen, ½ tie, 0 rejected — is at most ½, wrong in both
orders first, then by P(chosen preferred)) and, on a pair, its verdict and reply in each order,
shown literally."""

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


def fair_judge(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "select rm_key from run_reward_models where label = 'fair judge'"
        ).fetchone()[0]


def wrong_pairs(db: Path) -> list[tuple[float, float, str]]:
    """(credit, logit P(chosen), pair id) of the pairs whose verdicts' credit averaged over both
    orders is at most ½, worst first, by plain SQL + Python."""
    rm_key = fair_judge(db)
    with sqlite3.connect(db) as conn:
        verdicts = {
            key: (verdict, p_first)
            for key, verdict, p_first in conn.execute(
                "select shown_key, verdict, p_first from judge_verdicts where rm_key = ?", [rm_key]
            )
        }
        pairs = conn.execute(
            "select id, prompt_id, chosen_id, rejected_id from pairs where perturber_key is null"
        ).fetchall()
    wrong = []
    for pid, prompt, chosen, rejected in pairs:
        (cf, p_cf), (rf, p_rf) = (
            verdicts[shown_key(prompt, chosen, rejected)],
            verdicts[shown_key(prompt, rejected, chosen)],
        )
        credits = [
            c
            for c in (
                {"first": 1, "second": 0, "tie": 0.5}.get(cf),
                {"second": 1, "first": 0, "tie": 0.5}.get(rf),
            )
            if c is not None
        ]
        credit = sum(credits) / len(credits)
        p = (p_cf + 1 - p_rf) / 2
        if credit <= 0.5:
            wrong.append((credit, math.log(p / (1 - p)), pid))
    return sorted(wrong)


def test_a_judges_pair_failures_and_its_verdicts_in_both_orders(judge_db):
    async def run():
        app = AuditApp(str(judge_db))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            board = pilot.app.screen.table
            board.move_cursor(row=board.get_row_index(fair_judge(judge_db)))
            await pilot.press("p")  # on the fair judge: the pairs it gets wrong
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
            failures = pilot.app.screen
            assert isinstance(failures, PairFailuresScreen)
            shown = [p.pair_id for p in failures.shown]
            await pilot.press("enter")
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
            assert isinstance(pilot.app.screen, PairScreen)
            return shown, str(pilot.app.screen.query_one("#pair-info").render())

    shown, info = asyncio.run(run())
    wrong = wrong_pairs(judge_db)
    assert set(shown) == {pid for _, _, pid in wrong} and shown
    order = {pid: (credit, margin) for credit, margin, pid in wrong}
    ranked = [order[pid] for pid in shown]
    assert ranked == sorted(ranked)  # worst first: credit, then margin
    assert wrong[0][0] == 0.0  # some pair is wrong in both orders: it comes first
    assert "chosen shown first: [[" in info and "rejected shown first: [[" in info
    assert "reply: [[" in info
