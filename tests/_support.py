"""Helpers shared by the top-level tests (conftest.py holds the fixtures)."""

from __future__ import annotations

import os
import runpy
import sqlite3
import sys
import textwrap
import traceback
from contextlib import asynccontextmanager
from pathlib import Path

from rmaudit.recipe import load_recipe
from rmaudit.run import Runner
from rmaudit.store import Store

#: How long a subprocess or a wait on a file may take before a test calls it hung: a guard
#: against a stall, never a speed check (a 2-core machine at load 15 runs a command ten times
#: slower than alone, so a guard near a command's own time fails tests that are right).
HANG_S = 1200

SMALL_RECIPE = """
title = "small simulated audit"
batch_size = 32

[prompts.source]
name = "simulated-helpful"

[prompts.sampler]
name = "random"
k = 8

[responses]
per_prompt = 16

[responses.policy]
name = "simulated-policy"

[oracle]
name = "simulated-judge"
samples = 3

[[reward_models]]
label = "honest"
name = "simulated-rm"
seed = 1

[[reward_models]]
label = "length"
name = "simulated-rm"
bias = "length"
seed = 2
{extra_rms}
[[metrics]]
name = "reta"
eta = 0.25

[[metrics]]
name = "reta-curve"

[[metrics]]
name = "best-of-n"
report = [4]

[[metrics]]
name = "pairwise-accuracy"
"""


#: examples/rewardbench-mini.jsonl (14 pairs, 10 subsets) with a small shift sweep on the
#: responses: pair failures, flips under shift and a leaderboard too wide for 80 columns
PAIR_RECIPE = """
title = "RewardBench-style pairs with a shift sweep"
[pairs.source]
name = "pairs-file"
path = "{path}"
subset = "subset"
[pairs.shift]
levels = [0, 0.3, 0.6]
targets = ["response"]
[pairs.shift.perturber]
name = "word-perturb"
[[reward_models]]
label = "honest"
name = "simulated-rm"
[[reward_models]]
label = "length-biased"
name = "simulated-rm"
bias = "length"
seed = 1
[[metrics]]
name = "pair-accuracy"
ties = "loss"
[[metrics]]
name = "section-score"
sections = "rewardbench"
[[metrics]]
name = "calibration"
[[metrics]]
name = "shift-curves"
"""


def table_counts(db_path: Path) -> dict[str, int]:
    """Row count of every table in an rmaudit DB."""
    conn = sqlite3.connect(db_path)
    try:
        names = [r[0] for r in conn.execute("select name from sqlite_master where type='table'")]
        return {n: conn.execute(f"select count(*) from [{n}]").fetchone()[0] for n in names}
    finally:
        conn.close()


def metric_rows(db_path: Path, run_id: str | None = None) -> list[tuple]:
    """(rm label, metric, key, value, stderr) for a run (the latest when run_id is None)."""
    conn = sqlite3.connect(db_path)
    try:
        if run_id is None:
            run_id = conn.execute(
                "select id from runs order by created_at desc, rowid desc"
            ).fetchone()[0]
        return conn.execute(
            """select m.label, r.metric, r.key, r.value, r.stderr from metric_results r
               join run_reward_models m on m.run_id = r.run_id and m.rm_key = r.rm_key
               where r.run_id = ? order by m.label, r.metric, r.key""",
            [run_id],
        ).fetchall()
    finally:
        conn.close()


def run_small_audit(folder: Path, db_name: str = "audit.db") -> Path:
    """Run SMALL_RECIPE (8 prompts × 16 responses, RMs 'honest' and 'length') into a new DB."""
    recipe = folder / "small.toml"
    recipe.write_text(textwrap.dedent(SMALL_RECIPE.replace("{extra_rms}", "")), encoding="utf-8")
    db = folder / db_name
    store = Store.open(db)
    try:
        Runner(load_recipe(recipe), store).run()
    finally:
        store.close()
    return db


@asynccontextmanager
async def curves_panel(db, tab_title: str | None = None, size: tuple[int, int] = (120, 40)):
    """Open ``rmaudit tui`` on ``db``, go to the Curves screen and select the tab titled
    ``tab_title`` (default: the last); yields (tab titles, the active panel, the pilot)."""
    from rmaudit.tui.app import AuditApp  # Textual only for the tests that browse

    app = AuditApp(db)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        screen = app.screen
        titles = [view.title for view in screen.views]
        index = len(titles) - 1 if tab_title is None else titles.index(tab_title)
        screen.query_one("TabbedContent").active = f"panel-{index}"
        await pilot.pause()
        yield titles, screen.active_panel(), pilot


def in_this_process(script: Path, monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """``python SCRIPT --smoke ARGS`` run here, its process state put back after it: exit code,
    stdout, stderr (a traceback on stderr where it raised)."""
    monkeypatch.setattr(sys, "argv", [str(script), "--smoke", *args])
    # python puts the script's folder first on the path; what the script adds goes with it
    monkeypatch.setattr(sys, "path", [str(script.parent), *sys.path])
    modules, environment = set(sys.modules), dict(os.environ)
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch else None
    code = 0
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except Exception:
        code = 1
        print(traceback.format_exc(), file=sys.stderr)
    finally:
        os.environ.clear()
        os.environ.update(environment)
        # the scripts' own modules (coverage.py, paired.py, …) would shadow packages later
        for name in set(sys.modules) - modules:
            if str(getattr(sys.modules[name], "__file__", "")).startswith(str(script.parent)):
                del sys.modules[name]
        if threads is not None:
            sys.modules["torch"].set_num_threads(threads)
    captured = capsys.readouterr()
    return code, captured.out, captured.err
