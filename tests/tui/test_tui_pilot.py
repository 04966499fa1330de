"""Walk every screen and key of ``rmaudit tui`` with Textual's pilot, checking what is shown."""

from __future__ import annotations

import asyncio
import functools
import math
import re
import sqlite3
import threading

import numpy as np
import pytest
import scipy.stats
from textual.binding import Binding

from rmaudit.tui.app import AuditApp
from rmaudit.tui.screens.comparison import ComparisonScreen
from rmaudit.tui.screens.curves import CurvesScreen
from rmaudit.tui.screens.failures import FailuresScreen
from rmaudit.tui.screens.help import HelpScreen
from rmaudit.tui.screens.leaderboard import LeaderboardScreen
from rmaudit.tui.screens.prompt import PromptScreen
from rmaudit.tui.screens.runs import RunsScreen
from rmaudit.tui.widgets.plots import BestOfNView, CurvePlot
from rmaudit.tui.widgets.table import NavTable

SIZE = (120, 40)
N = 16  # responses per prompt in the small recipe


def sync(test):
    """Run an async pilot test in its own event loop (no async pytest plugin needed)."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        asyncio.run(test(*args, **kwargs))

    return run


def stored(db, sql, params=()):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def text_of(screen, selector) -> str:
    return str(screen.query_one(selector).render())


async def settle(pilot) -> None:
    """Let workers (the failure table loads in a thread) and message queues finish."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def to_failures(pilot, rm_label="honest"):
    app = pilot.app
    rows = [r[1] for r in app.screen.table.row_values()]
    app.screen.table.move_cursor(row=rows.index(rm_label))
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(app.screen, FailuresScreen)
    return app.screen


# -- runs and leaderboard ---------------------------------------------------------------
@sync
async def test_opens_on_the_latest_runs_leaderboard_with_every_stored_metric(audit_db):
    app = AuditApp(audit_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LeaderboardScreen)
        assert "small simulated audit" in text_of(screen, "#leaderboard-title")
        assert "SIMULATED" in text_of(screen, "#leaderboard-title")
        headers = [str(c.label) for c in screen.table.columns.values()]
        assert headers[2:] == [
            "RETA(1/4) ↑",
            "95% CI",  # the headline's interval, letters and rank interval, as the CLI shows
            "group",
            "rank",
            "BoN@4 ↑",
            "pairwise acc ↑",
            "RETA curve ½→small η",
        ]
        shown = {row[1]: row for row in screen.table.row_values()}
        for label, key, value, stderr in stored(
            audit_db,
            """
                select m.label, r.key, r.value, r.stderr from metric_results r
                join run_reward_models m on m.rm_key = r.rm_key and m.run_id = r.run_id""",
        ):
            column = {"reta@0.25": 2, "bon@4": 6, "pairwise_accuracy": 7}[key]
            assert shown[label][column] == f"{value:.4f}±{stderr:.4f}"
        assert all(len(row[8]) == 15 for row in shown.values())  # a 15-η sparkline
        for row in shown.values():  # RETA(1/4)'s interval holds its value; letters; a rank
            low, high = (float(x) for x in row[3].strip("[]").split(", "))
            assert low <= float(row[2].split("±")[0]) <= high
            assert re.fullmatch(r"[a-z]+", row[4]) and row[5].startswith("#")


@sync
async def test_s_sorts_best_first_by_the_cursor_column_and_again_reverses(audit_db):
    app = AuditApp(audit_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.screen.table
        for column in (2, 6, 7):  # RETA(1/4), BoN@4, pairwise acc
            table.move_cursor(column=column)
            await pilot.press("s")
            values = [float(row[column].split("±")[0]) for row in table.row_values()]
            assert values == sorted(values, reverse=True)
            await pilot.press("s")
            values = [float(row[column].split("±")[0]) for row in table.row_values()]
            assert values == sorted(values)
        table.move_cursor(column=1)
        await pilot.press("s")
        assert [row[1] for row in table.row_values()] == ["honest", "length"]


@sync
async def test_a_lower_is_better_metric_sorts_smallest_first(db_copy):
    db = db_copy([("update metric_results set higher_is_better = 0 where key = 'bon@4'", [])])
    app = AuditApp(db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.screen.table
        assert "BoN@4 ↓" in [str(c.label) for c in table.columns.values()]
        table.move_cursor(column=6)  # BoN@4
        await pilot.press("s")
        values = [float(row[6].split("±")[0]) for row in table.row_values()]
        assert values == sorted(values) and values[0] != values[-1]


@sync
async def test_escape_goes_back_to_the_runs_and_enter_reopens_the_run(audit_db):
    app = AuditApp(audit_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)
        (row,) = app.screen.query_one(NavTable).row_values()
        run_id = stored(audit_db, "select id from runs")[0][0]
        assert row[:6] == [
            run_id[:10],
            "small simulated audit",
            "SIMULATED",
            "done",
            f"8 prompts × {N}",
            "2",
        ]
        await pilot.press("escape")  # the first screen stays
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("enter")
        assert isinstance(app.screen, LeaderboardScreen)


@sync
async def test_q_quits(audit_db):
    app = AuditApp(audit_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


# -- failures ---------------------------------------------------------------------------
def brute_force_gaps(db, rm_label):
    """Per prompt: oracle best − oracle score of the RM's top-scored response (no ties here)."""
    rows = stored(
        db,
        """
        select r.prompt_id, s.score, l.score from responses r
        join rm_scores s on s.response_id = r.id
        join run_reward_models m on m.rm_key = s.rm_key and m.label = ?
        join oracle_labels l on l.response_id = r.id""",
        [rm_label],
    )
    by_prompt = {}
    for prompt_id, y, j in rows:
        by_prompt.setdefault(prompt_id, []).append((y, j))
    return {p: max(j for _, j in v) - max(v)[1] for p, v in by_prompt.items()}


@sync
async def test_failures_rank_prompts_worst_first_with_the_oracle_gap(audit_db):
    app = AuditApp(audit_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = await to_failures(pilot, "length")
        assert "Failures of length" in text_of(screen, "#failures-title")
        rows = screen.table.row_values()
        assert len(rows) == 8
        reta = [float(r[1]) for r in rows]
        assert reta == sorted(reta)  # RETA: higher is better, so the worst comes first
        per_prompt = dict(
            stored(
                audit_db,
                """
            select p.prompt_id, p.value from per_prompt_results p
            join run_reward_models m on m.rm_key = p.rm_key and m.label = 'length'
            where p.key = 'reta@0.25'""",
            )
        )
        gaps = brute_force_gaps(audit_db, "length")
        for prompt_id, row in zip((r.prompt_id for r in screen.shown), rows, strict=True):
            assert row[1] == f"{per_prompt[prompt_id]:.3f}"
            assert row[2] == f"{gaps[prompt_id]:.2f}"
            assert math.isclose(float(row[4]) - float(row[3]), float(row[2]), abs_tol=0.011)


@sync
async def test_failure_keys_sort_metric_topic_search_and_next_rm(audit_db):
    app = AuditApp(audit_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = await to_failures(pilot)
        table = screen.table
        await pilot.press("s")  # by gap, largest first
        gaps = [float(r[2]) for r in table.row_values()]
        assert gaps == sorted(gaps, reverse=True)
        assert "oracle gap" in text_of(screen, "#failures-title")
        await pilot.press("s")  # benchmark order
        assert [r.position for r in screen.shown] == sorted(r.position for r in screen.shown)
        await pilot.press("s")  # back to the metric
        await pilot.press("m")
        assert str(list(table.columns.values())[1].label) == "BoN@4"
        await pilot.press("m", "m")
        assert str(list(table.columns.values())[1].label) == "RETA(1/4)"

        await pilot.press("t")
        topic = screen.topic
        assert topic and all(r.topic == topic for r in screen.shown)
        assert f"topic = {topic}" in text_of(screen, "#failures-title")
        while screen.topic is not None:
            await pilot.press("t")
        assert table.row_count == 8

        word = screen.shown[0].text.split()[0].lower()
        await pilot.press("slash")
        assert screen.query_one("#failures-search").has_focus
        await pilot.press(*word)
        assert 0 < table.row_count and all(
            word in r.text.lower() or word in r.topic.lower() for r in screen.shown
        )
        first = screen.shown[0]
        await pilot.press("enter")  # enter in the search opens the first match
        assert (
            isinstance(app.screen, PromptScreen) and app.screen.detail.prompt_id == first.prompt_id
        )
        await pilot.press("escape")  # back from the prompt
        assert app.screen is screen and table.has_focus and 0 < table.row_count < 8  # search kept
        await pilot.press("escape")  # escape clears the search first
        assert table.row_count == 8 and isinstance(app.screen, FailuresScreen)

        await pilot.press("r")
        await settle(pilot)
        assert "Failures of length" in text_of(screen, "#failures-title")
        await pilot.press("escape")
        assert isinstance(app.screen, LeaderboardScreen)


@sync
async def test_keys_pressed_while_the_failure_table_loads_never_reach_the_hidden_search(audit_db):
    app = AuditApp(audit_db)
    release = threading.Event()
    load = app.load_failures

    def slow_load(run_id, rm_key):
        release.wait(10)  # a big audit: the table is still loading when the user types
        return load(run_id, rm_key)

    app.load_failures = slow_load
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert "loading" in text_of(screen, "#failures-title")
        await pilot.press("G", "x", "enter")
        release.set()
        await settle(pilot)
        search = screen.query_one("#failures-search")
        assert search.value == "" and not search.display
        assert screen.table.row_count == 8 and screen.table.has_focus
        assert app.screen is screen


# -- prompt detail ----------------------------------------------------------------------
@sync
async def test_prompt_detail_sorts_by_rm_score_marks_the_top_set_and_shows_full_text(audit_db):
    app = AuditApp(audit_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        failures = await to_failures(pilot)
        first = failures.shown[0]
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, PromptScreen)
        assert first.text in text_of(screen, "#prompt-text Static")
        rows = screen.table.row_values()
        assert len(rows) == N
        assert [int(r[0]) for r in rows] == list(range(1, N + 1))
        scores = [float(r[2]) for r in rows]
        assert scores == sorted(scores, reverse=True)
        assert [r[1] for r in rows] == ["★"] * 4 + [""] * (N - 4)  # ⌊N/4⌋ for η = 1/4
        oracle = sorted((float(r[3]) for r in rows), reverse=True)
        assert all(oracle[int(r[4]) - 1] == float(r[3]) for r in rows)  # ranks match scores
        assert "η = 1/4: 4 of 16" in text_of(screen, "#prompt-info")
        texts = dict(
            stored(
                audit_db,
                "select sample_index, text from responses where prompt_id = ?",
                [first.prompt_id],
            )
        )

        def body() -> str:
            return text_of(screen, "#response-body")

        shown_index = int(body().split()[1])
        assert texts[shown_index] in body()
        await pilot.press("j")
        assert int(body().split()[1]) != shown_index
        await pilot.press("k")
        assert int(body().split()[1]) == shown_index

        await pilot.press("c")  # compare with the other RM
        headers = [str(c.label) for c in screen.table.columns.values()]
        assert headers[6:8] == ["length rank", "top"]
        assert sorted(int(r[6]) for r in screen.table.row_values()) == list(range(1, N + 1))
        assert "compared with length" in text_of(screen, "#prompt-info")
        await pilot.press("c")
        assert len(screen.table.columns) == 7

        await pilot.press("s")  # by oracle rank
        ranks = [int(r[4]) for r in screen.table.row_values()]
        assert ranks == sorted(ranks)
        await pilot.press("s")  # by sample index
        assert "sorted by sample" in text_of(screen, "#prompt-info")

        word = texts[0].split()[-1].lower()
        await pilot.press("slash", *word)
        assert 0 < screen.table.row_count <= N
        assert all(word in r.text.lower() for r in screen.visible_rows())
        await pilot.press("escape")
        assert screen.table.row_count == N

        await pilot.press("enter")  # read the text
        assert screen.query_one("#response-text").has_focus
        await pilot.press("escape")  # leaves the text, stays on the screen
        assert screen.table.has_focus and app.screen is screen
        await pilot.press("tab")
        assert screen.query_one("#response-text").has_focus
        await pilot.press("tab", "escape")
        assert isinstance(app.screen, FailuresScreen)


# -- curves -----------------------------------------------------------------------------
@sync
async def test_curves_show_the_marked_rms_and_x_switches_best_of_n_to_kl(audit_db):
    app = AuditApp(audit_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("space")  # mark 'honest' (the first row)
        assert app.screen.table.row_values()[0][0] == "✓"
        await pilot.press("c")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CurvesScreen)
        assert [v.title for v in screen.views] == ["RETA curve", "Best-of-n"]
        reta = screen.active_panel()
        assert isinstance(reta, CurvePlot)
        assert [s.label for s in reta.series] == ["honest"]
        assert reta.series[0].x[0] == pytest.approx(1.0)  # −log2(1/2)
        assert reta.x_label == "-log2 eta"
        await pilot.press("l")
        bon = screen.active_panel()
        assert isinstance(bon, BestOfNView)
        assert [p.title for p in bon.plots] == [
            "best-of-n vs n (band: ± stderr)"
        ]  # no 2nd-best-of-n stored
        assert list(bon.plots[0].series[0].x) == [0, 1, 2, 3, 4]  # log2 n for n = 1..16
        await pilot.press("x")
        assert bon.plots[0].title == "best-of-n vs KL (band: ± stderr)"
        assert bon.plots[0].series[0].x[0] == 0 and bon.plots[0].series[0].x[-1] == pytest.approx(
            math.log(16) - 15 / 16
        )
        await pilot.press("h")
        assert screen.active_panel() is reta
        await pilot.press("x")  # the RETA panel has one x axis: a notice, no change
        assert reta.x_label == "-log2 eta"
        await pilot.press("escape", "space", "c")
        await pilot.pause()
        assert [s.label for s in app.screen.active_panel().series] == ["honest", "length"]


@sync
async def test_the_mouse_selects_rows_and_tabs(audit_db):
    app = AuditApp(audit_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.screen.table
        await pilot.click(NavTable, offset=(5, 2))  # the header is row 0, 'length' is row 2
        assert table.cursor_row == 1
        await pilot.click(NavTable, offset=(5, 2))  # clicking the cursor's cell opens it
        await settle(pilot)
        assert isinstance(app.screen, FailuresScreen)
        assert "Failures of length" in text_of(app.screen, "#failures-title")
        await pilot.press("escape", "c")
        await pilot.pause()
        await pilot.click("#--content-tab-panel-1")
        await pilot.pause()
        assert isinstance(app.screen.active_panel(), BestOfNView)


# -- paired comparisons ---------------------------------------------------------------------
@sync
async def test_d_opens_the_paired_comparisons_with_differences_as_a_paired_t_test_gives(audit_db):
    """RETA(1/4) of honest and length on the same 8 prompts: the pair's difference, ± and
    p (Holm over one pair: the raw p) as scipy's paired t-test of the stored per-prompt
    values gives them; both models' letters and rank intervals; m steps through the rest."""
    per_prompt = {
        label: dict(rows)
        for label in ("honest", "length")
        for rows in [
            stored(
                audit_db,
                "select p.prompt_id, p.value from per_prompt_results p join run_reward_models "
                "r on r.rm_key = p.rm_key and r.run_id = p.run_id where r.label = ? and "
                "p.key = 'reta@0.25'",
                [label],
            )
        ]
    }
    prompts = sorted(per_prompt["honest"])
    first = np.array([per_prompt["honest"][p] for p in prompts])
    second = np.array([per_prompt["length"][p] for p in prompts])
    expected = scipy.stats.ttest_rel(first, second)
    difference = first - second
    app = AuditApp(audit_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("d")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ComparisonScreen)
        captions = []
        for _ in range(len(screen.results)):
            captions.append(text_of(screen, "#comparison-caption"))
            if captions[-1].startswith("RETA(1/4)"):
                break
            await pilot.press("m")
            await pilot.pause()
        assert f"paired over {len(prompts)} prompts" in captions[-1]
        standings = screen.query_one("#comparison-standings", NavTable).row_values()
        assert sorted(row[1] for row in standings) == ["honest", "length"]
        assert all(re.fullmatch(r"[a-z]+", row[0]) and row[3].startswith("#") for row in standings)
        [pair] = screen.query_one("#comparison-pairs", NavTable).row_values()
        sign = 1 if pair[0] == "honest − length" else -1
        assert pair[0] in ("honest − length", "length − honest")
        value, stderr = (float(x) for x in pair[1].split(" ± "))
        assert value == pytest.approx(sign * difference.mean(), abs=5e-5)
        assert stderr == pytest.approx(difference.std(ddof=1) / math.sqrt(len(prompts)), abs=5e-5)
        shown_p = pair[2]
        assert shown_p == "< 0.0001" or float(shown_p) == pytest.approx(expected.pvalue, abs=5e-5)
        assert pair[3] == ("yes" if expected.pvalue < 0.05 else "no")
        low, high = (float(x) for x in pair[4].strip("[]").split(", "))
        assert low <= value <= high
        seen = {text_of(screen, "#comparison-caption").split(" (")[0]}
        for _ in range(len(screen.results) - 1):
            await pilot.press("m")
            await pilot.pause()
            seen.add(text_of(screen, "#comparison-caption").split(" (")[0])
        assert {"RETA(1/4)", "BoN@4"} <= seen
        await pilot.press("escape")
        assert isinstance(app.screen, LeaderboardScreen)


# -- help -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "keys, screen_type",
    [
        ((), LeaderboardScreen),
        (("escape",), RunsScreen),
        (("enter",), FailuresScreen),
        (("enter", "enter"), PromptScreen),
        (("c",), CurvesScreen),
        (("d",), ComparisonScreen),
    ],
)
@sync
async def test_help_lists_every_binding_of_the_screen_its_own_keys_first(
    audit_db, keys, screen_type
):
    app = AuditApp(audit_db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        screen = app.screen
        assert isinstance(screen, screen_type)
        await pilot.press("question_mark")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        rows = help_screen.query_one(NavTable).row_values()
        listed_keys = [row[0] for row in rows]

        def display(binding, key):
            return app.get_key_display(
                Binding(key, binding.action, key_display=binding.key_display)
            )

        # a key the screen hides where it does not apply (p: pairs, in a run without pairs)
        own = [
            b
            for b in vars(type(screen)).get("BINDINGS", [])
            if screen.check_action(b.action, ()) is not False
        ]
        expected = [*own, *app.BINDINGS]
        if isinstance(screen.focused, NavTable):
            expected += NavTable.BINDINGS
        for binding in expected:
            for key in binding.key.split(","):
                assert display(binding, key) in listed_keys, key
        # the screen's own keys come first, before the keys that work everywhere and the
        # focused widget's (a key the focused widget binds too is the widget's: ← → on tabs)
        own_keys = {
            app.get_key_display(active.binding)
            for active in screen.active_bindings.values()
            if active.node is screen and active.binding.action in {b.action for b in own}
        }
        assert set(listed_keys[: len(own_keys)]) == own_keys
        assert rows[len(own_keys)][2] == "everywhere"
        assert not own_keys or rows[0][2] == "this screen"
        await pilot.press("escape")
        assert app.screen is screen
