"""The pair failures of ``rmaudit tui``: the pairs an RM gets wrong (checked against the DB's
scores), filters, a pair's two responses side by side, and the pairs whose verdict flips
under shift (checked against the stored shifted pairs, and not mixed with another sweep's)."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest
from _support import PAIR_RECIPE

from rmaudit.recipe import load_recipe
from rmaudit.run import Runner
from rmaudit.store import Store
from rmaudit.tui.app import AuditApp
from rmaudit.tui.screens.leaderboard import LeaderboardScreen
from rmaudit.tui.screens.pair import PairScreen
from rmaudit.tui.screens.pair_failures import PairFailuresScreen

SIZE = (120, 40)


def stored(db, sql, params=()):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def margins(db, label, shifted: bool = False) -> dict:
    """pair id → (margin, subset[, original, level]) from the stored scores, by plain SQL."""
    rows = stored(
        db,
        f"""
        select p.id, c.score - r.score, p.subset, p.original_pair_id, p.shift_level, p.shift_target
        from pairs p
        join run_reward_models m on m.label = ?
        join rm_scores c on c.response_id = p.chosen_id and c.rm_key = m.rm_key
        join rm_scores r on r.response_id = p.rejected_id and r.rm_key = m.rm_key
        where p.perturber_key is {"not" if shifted else ""} null""",
        [label],
    )
    return {pid: rest for pid, *rest in rows}


async def settle(pilot):
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def open_pairs(pilot, keys=()):
    await pilot.pause()
    await pilot.press("enter")  # a run of pairs only: enter opens the pair failures
    await settle(pilot)
    for key in keys:
        await pilot.press(key)
        await settle(pilot)
    assert isinstance(pilot.app.screen, PairFailuresScreen)
    return pilot.app.screen


def test_pair_failures_list_the_wrong_pairs_worst_margin_first(pair_db):
    async def run():
        app = AuditApp(pair_db)
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_pairs(pilot)
            wrong = [(p.pair_id, p.margin) for p in screen.shown]
            rows = screen.table.row_values()
            title = str(screen.query_one("#pairs-title").render())
            await pilot.press("a")  # every pair
            everything = [p.margin for p in screen.shown]
            await pilot.press("a", "t")  # wrong pairs again, of one subset
            subset = screen.subset
            in_subset = [(p.pair_id, p.subset) for p in screen.shown]
            return wrong, rows, title, everything, subset, in_subset

    wrong, rows, title, everything, subset, in_subset = asyncio.run(run())
    expected = margins(pair_db, "honest")
    assert len(expected) == 14 and len(everything) == 14
    bad = sorted((m, pid) for pid, (m, *_) in expected.items() if m <= 0)  # a tie is wrong
    assert [pid for _, pid in bad] == [pid for pid, _ in wrong]
    assert [m for _, m in wrong] == pytest.approx([m for m, _ in bad])
    assert everything == sorted(everything)
    assert [row[1] for row in rows] == [f"{m:+.3f}" for m, _ in bad]
    assert f"{len(bad)} of 14 wrong" in title and "worst margin first" in title
    assert in_subset and all(s == subset for _, s in in_subset)
    assert {pid for pid, _ in in_subset} == {pid for m, pid in bad if expected[pid][1] == subset}


def test_search_then_enter_opens_the_pair_with_both_responses_and_every_verdict(pair_db):
    ((prompt, chosen, rejected),) = stored(
        pair_db,
        """
        select q.text, c.text, r.text from pairs p join prompts q on q.id = p.prompt_id
        join responses c on c.id = p.chosen_id join responses r on r.id = p.rejected_id
        where p.perturber_key is null and q.text like 'Tell me my neighbour%'""",
    )

    async def run():
        app = AuditApp(pair_db)
        async with app.run_test(size=SIZE) as pilot:
            await open_pairs(pilot)
            await pilot.press("slash", *"neighbour", "enter")
            await settle(pilot)
            screen = app.screen
            texts = [
                str(screen.query_one(f"#{w}").render())
                for w in ("pair-prompt-text", "chosen-text", "rejected-text")
            ]
            info = str(screen.query_one("#pair-info").render())
            return screen, texts, info

    screen, texts, info = asyncio.run(run())
    assert isinstance(screen, PairScreen)
    assert texts == [prompt, chosen, rejected]
    own = margins(pair_db, "honest")[screen.pair.pair_id][0]
    other = margins(pair_db, "length-biased")[screen.pair.pair_id][0]
    assert f"margin of honest: {own:+.3f}" in info
    assert f"length-biased {other:+.3f}" in info


def brute_force_flips(db, label, shifted_ids=None) -> dict:
    """(original pair id, target) → verdicts at p = 0, then each level, from the stored
    shifted pairs (only ``shifted_ids`` when given)."""
    base = margins(db, label)
    shifted = margins(db, label, shifted=True)
    by_pair: dict = {}
    for pid, (margin, _, original, level, target) in shifted.items():
        if shifted_ids is None or pid in shifted_ids:
            by_pair.setdefault((original, target), {})[level] = margin
    verdicts = {}
    for (original, target), by_level in by_pair.items():
        line = "".join(
            "✓" if m > 0 else "✗"
            for m in [base[original][0], *(by_level[p] for p in sorted(by_level))]
        )
        if len(set(line)) > 1:
            verdicts[(original, target)] = line
    return verdicts


async def flips_of(db, run_id=None):
    app = AuditApp(db, run_id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_pairs(pilot, ("v",))
        return {(f.pair.pair_id, f.target): f.marks for f in screen.shown}, [
            f.levels[f.first_flip] for f in screen.shown
        ]


def test_flips_under_shift_are_the_pairs_whose_verdict_changes(pair_db):
    shown, first_flips = asyncio.run(flips_of(pair_db))
    assert shown == brute_force_flips(pair_db, "honest") and shown
    assert first_flips == sorted(first_flips)  # earliest flip first


def test_flips_come_from_the_runs_own_sweep_only(pair_db, tmp_path):
    """A second sweep (another seed) in the same DB adds shifted copies of the same pairs;
    the first run's flips do not change."""
    db = tmp_path / "two-sweeps.db"
    source, target = sqlite3.connect(pair_db), sqlite3.connect(db)
    source.backup(target)
    source.close(), target.close()
    first = {pid for (pid,) in stored(db, "select id from pairs where perturber_key is not null")}
    recipe = tmp_path / "seed7.toml"
    path = stored(pair_db, "select recipe_text from runs")[0][0].split('path = "')[1].split('"')[0]
    recipe.write_text(
        PAIR_RECIPE.replace("{path}", path).replace(
            'targets = ["response"]', 'targets = ["response"]\nseed = 7'
        ),
        encoding="utf-8",
    )
    store = Store.open(db)
    try:
        Runner(load_recipe(recipe), store).run()
    finally:
        store.close()
    assert len(stored(db, "select id from pairs where perturber_key is not null")) == 2 * len(first)
    first_run = stored(db, "select id from runs order by created_at limit 1")[0][0]
    shown, _ = asyncio.run(flips_of(db, first_run))
    assert shown == brute_force_flips(db, "honest", first)


def test_the_pairs_key_is_offered_only_where_there_are_pairs(audit_db, pair_db):
    async def bindings(db):
        app = AuditApp(db)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, LeaderboardScreen)
            return {b.binding.action for b in app.screen.active_bindings.values()}

    assert "pair_failures" not in asyncio.run(bindings(audit_db))
    assert "pair_failures" in asyncio.run(bindings(pair_db))


@pytest.mark.parametrize("keys", [("a", "G"), ("v",)], ids=["pair", "flip"])
def test_the_pair_screens_footer_offers_tab_and_every_key_at_80_columns(pair_db, keys):
    async def footer():
        app = AuditApp(pair_db)
        async with app.run_test(size=(80, 24)) as pilot:
            await open_pairs(pilot, keys)
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, PairScreen)
            strips = app.screen._compositor.render_strips()
            shown = {b.binding.key for b in app.screen.active_bindings.values() if b.binding.show}
            return "".join(segment.text for segment in strips[-1]), shown

    line, shown = asyncio.run(footer())
    assert "tab Chosen/rejected" in line
    assert "esc Back" in line and "? Help" in line  # nothing pushed off the edge
    assert "tab" in shown


RM_BENCH_RECIPE = """
title = "rm-bench at 80 columns"
[pairs.source]
name = "rm-bench"
path = "{path}"
[[reward_models]]
label = "length-biased"
name = "simulated-rm"
bias = "length"
[[metrics]]
name = "rm-bench"
"""


@pytest.fixture(scope="module")
def rm_bench_db(tmp_path_factory):
    """RM-Bench pairs in the longest subset names of the real data."""
    folder = tmp_path_factory.mktemp("rm-bench")
    records = [
        {
            "id": i,
            "prompt": f"Describe lighthouse number {i} and the ships it guides.",
            "subset": ("xstest-should-respond", "bigcode/humanevalpack")[i % 2],
            "chosen": [
                f"Lighthouse {i} guides ships.",
                f"Lighthouse {i} guides ships with a bright lamp at night.",
                f"**Lighthouse {i}**\n- guides ships\n- lamp",
            ],
            "rejected": [
                f"Lighthouse {i} is a bakery.",
                f"Lighthouse {i} is a bakery that sells bread every day.",
                f"**Lighthouse {i}**\n- bakery\n- bread",
            ],
        }
        for i in range(4)
    ]
    data = folder / "rm-bench.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    recipe = folder / "recipe.toml"
    recipe.write_text(RM_BENCH_RECIPE.replace("{path}", str(data)), encoding="utf-8")
    db = folder / "rm-bench.db"
    store = Store.open(db)
    try:
        Runner(load_recipe(recipe), store).run()
    finally:
        store.close()
    return db


def test_rm_bench_pair_failures_keep_the_prompt_and_whole_styles_at_80_columns(rm_bench_db):
    async def shown():
        app = AuditApp(rm_bench_db)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_pairs(pilot, ("a",))  # every pair: each style combination
            strips = app.screen._compositor.render_strips()
            text = ["".join(segment.text for segment in strip) for strip in strips]
            table = screen.table
            widths = {str(c.label): c.get_render_width(table) for c in table.columns.values()}
            return screen.shown, text, widths

    pairs, lines, widths = asyncio.run(shown())
    styles = {p.styles for p in pairs}
    assert len(styles) == 9 and "markdown/markdown" in styles
    assert sum(widths.values()) + 2 <= 80  # every column in view, beside the scrollbar
    assert widths["styles c/r"] >= max(len(s) for s in styles) + 2  # (1 cell padding a side)
    assert widths["prompt"] >= 16
    rows = [line for line in lines if "Describe lighthouse" in line]
    assert rows and all(any(f" {s} " in line for s in styles) for line in rows)
