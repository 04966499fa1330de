"""A TUI opened on a run that is still running: it says what is stored so far (a run in its
prompts stage is not a run of pairs) and reads the run again until it ends."""

from __future__ import annotations

import asyncio
import sqlite3

from rmaudit.tui.app import AuditApp
from rmaudit.tui.screens.leaderboard import REFRESH_SECONDS, LeaderboardScreen
from rmaudit.tui.screens.runs import RunsScreen

SIZE = (120, 40)


def execute(db, sql: str, params=()) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        with conn:
            return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def text_of(screen, selector) -> str:
    return str(screen.query_one(selector).render())


def test_a_run_in_its_prompts_stage_is_shown_as_running_and_refreshed(db_copy):
    db = db_copy()
    ((benchmark_id, per_prompt, prompts),) = execute(
        db,
        """select r.benchmark_id, b.per_prompt, (select count(*) from selections s
           where s.selection_key = b.selection_key) from runs r
           join benchmarks b on b.id = r.benchmark_id""",
    )
    # as the run stands in its prompts stage: running, no benchmark, no pairs, no results
    execute(db, "update runs set status = 'running', benchmark_id = null, pair_set_key = null")
    execute(db, "delete from metric_results")

    async def walk() -> None:
        app = AuditApp(db)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, LeaderboardScreen)
            title = text_of(screen, "#leaderboard-title")
            assert "running" in title and "no benchmark or pairs stored yet" in title
            assert "preference pairs" not in title
            # the run stores its benchmark and its results, and ends
            execute(db, "update runs set status = 'done', benchmark_id = ?", [benchmark_id])
            await pilot.pause(REFRESH_SECONDS * 2.5)
            title = text_of(screen, "#leaderboard-title")
            assert "done" in title and f"{per_prompt} responses per prompt" in title
            await pilot.press("escape")
            await pilot.pause()
            runs = app.screen
            assert isinstance(runs, RunsScreen)
            (row,) = runs.query_one("#runs-table").row_values()
            assert row[3] == "done" and row[4] == f"{prompts} prompts × {per_prompt}"

    asyncio.run(walk())


def test_the_runs_list_says_a_pair_runs_size_in_pairs(pair_db):
    (pairs,) = execute(pair_db, "select count(*) from pair_sets")[0]

    async def walk() -> None:
        app = AuditApp(pair_db)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("escape")
            await pilot.pause()
            (row,) = app.screen.query_one("#runs-table").row_values()
            assert row[4] == f"{pairs:,} pairs"

    asyncio.run(walk())


def test_the_runs_list_reads_a_running_run_again(db_copy):
    db = db_copy()
    execute(db, "update runs set status = 'running'")

    async def walk() -> None:
        app = AuditApp(db)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("escape")
            await pilot.pause()
            table = app.screen.query_one("#runs-table")
            assert table.row_values()[0][3] == "running"
            execute(db, "update runs set status = 'done'")
            await pilot.pause(REFRESH_SECONDS * 2.5)
            assert table.row_values()[0][3] == "done"

    asyncio.run(walk())


def test_a_tui_opened_on_a_db_without_runs_shows_the_first_when_it_starts(db_copy):
    db = db_copy()
    conn = sqlite3.connect(db)
    columns = [c[1] for c in conn.execute("pragma table_info(runs)")]
    (run,) = conn.execute("select * from runs").fetchall()
    conn.close()
    execute(db, "delete from runs")

    async def walk() -> None:
        app = AuditApp(db)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, RunsScreen)
            assert text_of(app.screen, "#runs-title").startswith("0 runs")
            marks = ", ".join("?" * len(columns))
            execute(db, f"insert into runs ({', '.join(columns)}) values ({marks})", run)
            await pilot.pause(REFRESH_SECONDS * 2.5)
            assert text_of(app.screen, "#runs-title").startswith("1 run ")
            (row,) = app.screen.query_one("#runs-table").row_values()
            assert row[0] == run[columns.index("id")][:10]

    asyncio.run(walk())
