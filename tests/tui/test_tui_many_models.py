"""``rmaudit tui`` on an audit of 65 recorded judges and the two baselines (LLMBar's release
has as many), at 80 and 120 columns: what each screen must keep in view — the headline's
interval, group and rank; every footer key; the comparison's p (Holm), reached with the
arrows alone; run titles that tell the suites apart; a judge's pairs in a judge's words; the
other models' count on a pair; and a curves screen with nothing stored saying so first."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from _recorded import (
    PROCESSED_SUBSETS,
    llmbar_dataset,
    llmbar_winners,
    many_judges,
    write_evaluator,
)

from rmaudit.components import shown_key
from rmaudit.tui.app import AuditApp
from rmaudit.tui.screens.comparison import ComparisonScreen
from rmaudit.tui.screens.curves import CurvesScreen
from rmaudit.tui.screens.pair import PairScreen
from rmaudit.tui.screens.pair_failures import PairFailuresScreen
from rmaudit.tui.screens.runs import RunsScreen

NARROW, WIDE = (80, 24), (120, 40)


@pytest.fixture(scope="module")
def many_db(tmp_path_factory) -> Path:
    """The llmbar suite with 65 recorded judges, then llmbar-processed with one, in one DB."""
    from rmaudit.cli import main

    folder = tmp_path_factory.mktemp("tui-many")
    data = folder / "data"
    many_judges(data)
    records = llmbar_dataset(data, PROCESSED_SUBSETS, base="Processed")
    for seed, (name, _) in enumerate(PROCESSED_SUBSETS):
        winners = llmbar_winners(records[name], seed)
        write_evaluator(data, name, "Alpha/Strategy_0", records[name], winners, base="Processed")
    db = folder / "many.db"
    for suite in ("llmbar", "llmbar-processed"):
        args = ["audit", "--suite", suite, "--recorded-judges", "--data-dir", str(data)]
        with pytest.raises(SystemExit) as done:
            main([*args, "--db", str(db), "--json"])
        assert done.value.code == 0
    return db


def screen_text(app) -> list[str]:
    """The screen as drawn, a line per row."""
    return ["".join(s.text for s in strip) for strip in app.screen._compositor.render_strips()]


async def settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def open_llmbar(pilot) -> None:
    """From the runs screen, the llmbar run's leaderboard."""
    await settle(pilot)
    if not isinstance(pilot.app.screen, RunsScreen):
        await pilot.press("escape")
    runs = pilot.app.screen.query_one("#runs-table")
    titles = [row[1] for row in runs.row_values()]
    runs.move_cursor(row=next(i for i, t in enumerate(titles) if "llmbar:" in t))
    await pilot.press("enter")
    await settle(pilot)


def run(db: Path, size: tuple[int, int], steps):
    async def go():
        app = AuditApp(str(db))
        async with app.run_test(size=size) as pilot:
            await open_llmbar(pilot)
            return await steps(pilot)

    return asyncio.run(go())


def test_the_headline_s_interval_group_and_rank_are_in_view_at_120_columns(many_db):
    async def steps(pilot):
        return screen_text(pilot.app)

    lines = run(many_db, WIDE, steps)
    header = next(line for line in lines if "reward model" in line)
    for title in ("accuracy ↑", "95% CI", "group", "rank"):
        assert title in header, header
    assert header.index("accuracy ↑") < header.index("95% CI") < header.index("position bias")


def test_every_footer_keeps_back_and_help_in_view_at_80_columns(many_db):
    async def steps(pilot):
        footers = {}
        for keys, screen in (
            ((), "leaderboard"),
            (("p",), "pair failures"),
            (("enter",), "pair"),
            (("escape", "escape", "d"), "comparison"),
            (("escape", "c"), "curves"),
        ):
            for key in keys:
                await pilot.press(key)
                await settle(pilot)
            footers[screen] = screen_text(pilot.app)[-1].rstrip()
        return footers

    for screen, footer in run(many_db, NARROW, steps).items():
        assert "esc Back" in footer and "? Help" in footer, (screen, footer)


def test_the_comparison_scrolls_from_the_standings_to_the_pairs_with_the_arrows(many_db):
    async def steps(pilot):
        await pilot.press("d")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ComparisonScreen)
        standings = screen.query_one("#comparison-standings")
        for _ in range(standings.row_count):
            await pilot.press("down")
        focused = pilot.app.focused.id
        await pilot.press("down", "down")
        pairs = screen.query_one("#comparison-pairs")
        return focused, pairs.cursor_row, screen_text(pilot.app)

    focused, row, lines = run(many_db, NARROW, steps)
    assert focused == "comparison-pairs" and row == 2
    header = next(line for line in lines if line.lstrip().startswith("pair "))
    assert "p (Holm)" in header and "separable" in header


def test_run_titles_tell_llmbar_from_llmbar_processed(many_db):
    async def go():
        app = AuditApp(str(many_db))
        async with app.run_test(size=NARROW) as pilot:
            await settle(pilot)
            await pilot.press("escape")
            return pilot.app.screen.query_one("#runs-table").row_values()

    titles = sorted(row[1] for row in asyncio.run(go()))
    assert titles[0].startswith("…llmbar-processed: ") and titles[1].startswith("…llmbar: ")


def verdicts_of(db: Path, label: str) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        return dict(
            conn.execute(
                "select v.shown_key, v.verdict from judge_verdicts v join run_reward_models m"
                " on m.rm_key = v.rm_key where m.label = ?",
                [label],
            ).fetchall()
        )


def credit(verdicts: dict[str, str], prompt: str, chosen: str, rejected: str) -> float:
    """A judge's credit on a pair over both orders, from its verdicts (1 chosen, ½ tie)."""
    credits = {"first": 1.0, "second": 0.0, "tie": 0.5}
    orders = [
        credits.get(verdicts[shown_key(prompt, chosen, rejected)]),
        {"first": 0.0, "second": 1.0, "tie": 0.5}.get(
            verdicts[shown_key(prompt, rejected, chosen)]
        ),
    ]
    parsed = [c for c in orders if c is not None]
    return sum(parsed) / len(parsed) if parsed else float("nan")


def test_a_judge_s_pairs_are_in_judge_words_and_the_others_are_counted(many_db):
    judge = "Echo/Strategy_12"  # the least right: its worst pair is wrong in both orders

    async def steps(pilot):
        board = pilot.app.screen.table
        board.move_cursor(row=board.get_row_index(board_key(pilot.app, judge)))
        await pilot.press("p")
        await settle(pilot)
        assert isinstance(pilot.app.screen, PairFailuresScreen)
        failures = (screen_text(pilot.app), pilot.app.screen.shown[0])
        await pilot.press("enter")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, PairScreen)
        titles = [str(screen.query_one(f"#{box}").border_title) for box in ("chosen", "rejected")]
        return failures, titles, screen_text(pilot.app)

    (listed, first), titles, shown = run(many_db, NARROW, steps)
    table = "\n".join(listed)
    assert "credit" in table and "margin" not in table and "wrong in both orders first" in table
    assert titles == ["chosen", "rejected"]  # no "score" of a judge's response
    text = "\n".join(shown)
    assert f"verdicts of {judge}: wrong in both orders ✗" in text
    assert "+0.000" not in text and "margin" not in text
    # every other model on that pair, counted from the stored verdicts
    prompt, chosen, rejected, _ = first.ids
    with sqlite3.connect(many_db) as conn:
        labels = [
            row[0]
            for row in conn.execute(
                "select distinct label from run_reward_models where label != ?", [judge]
            )
        ]
    judges = [label for label in labels if label not in ("length", "random")]
    right = sum(credit(verdicts_of(many_db, j), prompt, chosen, rejected) > 0.5 for j in judges)
    # the baselines: by their stored scores
    with sqlite3.connect(many_db) as conn:
        for baseline in ("length", "random"):
            scores = dict(
                conn.execute(
                    "select s.response_id, s.score from rm_scores s join run_reward_models m"
                    " on m.rm_key = s.rm_key where m.label = ? and s.response_id in (?, ?)",
                    [baseline, chosen, rejected],
                ).fetchall()
            )
            right += scores[chosen] > scores[rejected]
    others = len(judges) + 2
    line = " ".join(text.split())
    assert f"other models ({others}): {right} right ✓ · {others - right} wrong ✗" in line


def board_key(app, label: str) -> str:
    run = app.screen.run_id
    return next(k for name, k in app.summary(run).reward_models if name == label)


def test_the_curves_screen_says_first_that_none_are_stored(many_db):
    async def steps(pilot):
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(pilot.app.screen, CurvesScreen)
        return screen_text(pilot.app)

    lines = run(many_db, NARROW, steps)
    assert lines[1].strip() == "no curves stored for this run"
    assert "Alpha/Strategy_0" not in "\n".join(lines)
