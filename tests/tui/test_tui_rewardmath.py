"""The TUI on a RewardMATH audit: a problem opens on its ten solutions, and each solution shows
every recorded model's score and rank of it (checked against the result files)."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path

import numpy as np
from _rewardmath import CORRECT, classifier, folder, rating
from test_tui_pilot import SIZE, settle, stored, text_of, to_failures

from rmaudit.display.formatting import eta_label, sparkline
from rmaudit.tui.app import AuditApp
from rmaudit.tui.screens.prompt import PromptScreen


def audit(rmaudit, data: Path, db: Path):
    done = rmaudit(
        "audit", "--suite", "rewardmath", "--recorded-judges", "--data-dir", str(data),
        "--db", str(db),
    )  # fmt: skip
    assert done.code == 0, done.err
    return done


def test_a_problem_opens_on_its_ten_solutions_with_every_models_scores(rmaudit, tmp_path):
    data = tmp_path / "data"
    files = [classifier(data, "alpha", 1), classifier(data, "beta", 2), rating(data, "gamma", 3)]
    db = tmp_path / "audit.db"
    audit(rmaudit, data, db)
    recorded = {
        path.name.removesuffix("_reward.json.gz"): json.loads(gzip.decompress(path.read_bytes()))
        for path in files
    }
    assert set(recorded) == {"alpha", "beta", "gamma"} and folder(data).is_dir()

    async def browse() -> None:
        app = AuditApp(db)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            failures = await to_failures(pilot, "alpha")
            problem = failures.shown[0]
            await pilot.press("enter")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, PromptScreen)
            record = next(r for r in recorded["alpha"] if r["problem"] in problem.text)
            assert len(screen.table.row_values()) == 10
            for _ in range(10):  # every solution, as the cursor walks down the table
                body = text_of(screen, "#response-body")
                shown = body.split("solution ")[-1].split(" of the recorded")[0]
                name, _, copy = shown.partition("#")  # a name the problem holds twice: #2
                names = record["solution_reference"]
                where = [i for i, n in enumerate(names) if n == name][int(copy or 1) - 1]
                for model, records in recorded.items():
                    same = next(r for r in records if r["problem"] == record["problem"])
                    assert f"{model} {float(same['score'][where]):.3f}" in body
                assert ("oracle 1.00" in body) == (name == CORRECT)
                await pilot.press("j")

    asyncio.run(browse())


def test_the_reta_sparkline_runs_from_the_largest_eta_whatever_order_it_was_stored_in(
    rmaudit, tmp_path
):
    """RewardMATH's RETA curve is stored from η = 1/10 up: each sparkline is still drawn from
    its largest η to its smallest, the header (the TUI's and the CLI's) says where it starts,
    and s sorts the models by RETA at the smallest η."""
    data = tmp_path / "data"
    for name, seed in (("alpha", 1), ("beta", 2), ("delta", 4)):
        classifier(data, name, seed)
    rating(data, "gamma", 3)
    db = tmp_path / "audit.db"
    done = audit(rmaudit, data, db)
    points: dict[str, list[tuple[float, float]]] = {}
    for label, x, value in stored(
        db,
        """select m.label, c.x, c.value from curves c join run_reward_models m
           on m.rm_key = c.rm_key and m.run_id = c.run_id
           where c.key = 'reta_curve' order by c.rowid""",
    ):
        points.setdefault(label, []).append((x, value))
    assert all(p[0][0] < p[-1][0] for p in points.values())  # stored from the smallest η up
    largest = max(x for p in points.values() for x, _ in p)
    drawn = {
        label: sparkline(np.array([v for _, v in sorted(p, reverse=True)]))
        for label, p in points.items()
    }
    at_smallest = {label: min(p)[1] for label, p in points.items()}
    assert f"η: {eta_label(largest)}→small" in done.out  # the CLI's board says it too

    async def browse() -> None:
        app = AuditApp(db)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            table = app.screen.table
            headers = [str(c.label) for c in table.columns.values()]
            assert headers[-1] == f"RETA curve {eta_label(largest)}→small η"
            shown = {row[1]: row[-1] for row in table.row_values()}
            assert {label: shown[label] for label in drawn} == drawn
            table.move_cursor(column=len(headers) - 1)
            await pilot.press("s")
            order = [row[1] for row in table.row_values() if row[1] in at_smallest]
            assert order == sorted(at_smallest, key=lambda label: -at_smallest[label])

    asyncio.run(browse())
