"""The TUI on a RewardMATH audit: a problem opens on its ten solutions, and each solution shows
every recorded model's score and rank of it (checked against the result files)."""

from __future__ import annotations

import asyncio
import gzip
import json

from _rewardmath import CORRECT, classifier, folder, rating
from test_tui_pilot import SIZE, settle, text_of, to_failures

from rmaudit.tui.app import AuditApp
from rmaudit.tui.screens.prompt import PromptScreen


def test_a_problem_opens_on_its_ten_solutions_with_every_models_scores(rmaudit, tmp_path):
    data = tmp_path / "data"
    files = [classifier(data, "alpha", 1), classifier(data, "beta", 2), rating(data, "gamma", 3)]
    db = tmp_path / "audit.db"
    done = rmaudit(
        "audit", "--suite", "rewardmath", "--recorded-judges", "--data-dir", str(data),
        "--db", str(db),
    )  # fmt: skip
    assert done.code == 0, done.err
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
