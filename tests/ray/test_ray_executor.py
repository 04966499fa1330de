"""The ray executor: same stored items and metrics as local, a killed worker's batch retried,
one concurrency limit for the judge across workers, component errors located in the recipe.

Every test joins the session's local Ray (conftest.py: two CPUs); recipes ask for pools of
two one-CPU workers.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import textwrap
import threading
import time
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("ray")

from _support import SMALL_RECIPE, metric_rows, table_counts  # noqa: E402

from rmaudit.errors import BadInput  # noqa: E402
from rmaudit.recipe import load_recipe  # noqa: E402
from rmaudit.run import Runner, RunResult  # noqa: E402
from rmaudit.store import Store  # noqa: E402

RAY_EXECUTOR = '\n[executor]\nname = "ray"\nnum_workers = 2\nnum_cpus = 1\n'
TOTAL = 8 * 16  # responses of the small recipe


def write(
    folder: Path, name: str, extra_rms: str = "", executor: str = "", batch_size: int = 32
) -> Path:
    path = folder / f"{name}.toml"
    text = textwrap.dedent(SMALL_RECIPE.replace("{extra_rms}", extra_rms)) + executor
    path.write_text(text.replace("batch_size = 32", f"batch_size = {batch_size}"), encoding="utf-8")
    return path


def run(recipe: Path, db: Path) -> RunResult:
    store = Store.open(db)
    try:
        return Runner(load_recipe(recipe), store).run()
    finally:
        store.close()


def stored_items(db: Path) -> dict[str, list[tuple]]:
    """Everything the item stages stored, in a canonical order."""
    conn = sqlite3.connect(db)
    try:
        return {
            "responses": conn.execute(
                "select id, prompt_id, policy_key, sample_index, text, meta "
                "from responses order by id"
            ).fetchall(),
            "oracle_labels": conn.execute(
                "select response_id, oracle_key, score, samples "
                "from oracle_labels order by response_id"
            ).fetchall(),
            "rm_scores": conn.execute(
                "select response_id, rm_key, score from rm_scores order by rm_key, response_id"
            ).fetchall(),
        }
    finally:
        conn.close()


def assert_same_metrics(a: Path, b: Path) -> None:
    rows_a, rows_b = metric_rows(a), metric_rows(b)
    assert [r[:3] for r in rows_a] == [r[:3] for r in rows_b] and rows_a
    for ra, rb in zip(rows_a, rows_b, strict=True):
        for x, y in zip(ra[3:], rb[3:], strict=True):
            assert x == pytest.approx(y, abs=1e-9, rel=0), (ra, rb)


def plugin(name: str, source: str) -> ModuleType:
    """A plugin module that exists only in this process, as a --plugins-dir file does: Ray
    ships its classes to the workers by value."""
    module = ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


def test_small_recipe_gives_the_same_items_and_metrics_under_local_and_ray(ray_instance, tmp_path):
    local_db, ray_db = tmp_path / "local.db", tmp_path / "ray.db"
    local = run(write(tmp_path, "local"), local_db)
    on_ray = run(write(tmp_path, "ray", executor=RAY_EXECUTOR), ray_db)

    assert on_ray.run_id == local.run_id  # where stages run is not part of the run's identity
    assert stored_items(ray_db) == stored_items(local_db)
    assert_same_metrics(local_db, ray_db)
    assert {c.stage: c.pending for c in on_ray.counts}["scores: honest"] == TOTAL

    again = run(write(tmp_path, "ray", executor=RAY_EXECUTOR), ray_db)
    assert all(c.pending == 0 for c in again.counts), again.counts
    assert table_counts(ray_db) == table_counts(local_db)


PID_RECORDING_RM = '''
import os
import time
from pathlib import Path

from rmaudit import hookimpl
from rmaudit.components import RewardModel
from rmaudit.backends.simulated import SimulatedRewardModel

PID_DIR = {pid_dir!r}


class SlowPidRM(RewardModel):
    """The honest simulated RM, slowed down, leaving the id of each process that scores."""

    name = "slow-pid-rm"

    def __init__(self, options=None):
        super().__init__(options)
        self.model = SimulatedRewardModel(seed=7)

    def score(self, batch):
        Path(PID_DIR, str(os.getpid())).touch()
        time.sleep(0.3)  # long enough for the test to kill the process mid-batch
        return [self.model.score(p.text, r.text) for p, r in batch]


@hookimpl
def register_reward_models(register):
    register(SlowPidRM)
'''


def test_a_worker_killed_mid_batch_is_restarted_and_its_batch_retried(
    ray_instance, tmp_path, register_plugin
):
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    extra = '\n[[reward_models]]\nlabel = "slow"\nname = "slow-pid-rm"\n'
    killed: list[int] = []
    scoring_done = threading.Event()

    def kill_first_scoring_worker() -> None:
        while not scoring_done.is_set():
            pids = [int(p.name) for p in pid_dir.iterdir()]
            if pids:
                assert pids[0] != os.getpid(), "the RM ran in the driver, not on a Ray worker"
                os.kill(pids[0], signal.SIGKILL)  # it is sleeping inside score(): mid-batch
                killed.append(pids[0])
                return
            time.sleep(0.01)

    with register_plugin(
        plugin("ray_kill_test_plugin", PID_RECORDING_RM.format(pid_dir=str(pid_dir)))
    ):
        killer = threading.Thread(target=kill_first_scoring_worker)
        killer.start()
        try:
            ray_db = tmp_path / "ray.db"
            run(write(tmp_path, "ray", extra, RAY_EXECUTOR, batch_size=16), ray_db)
        finally:
            scoring_done.set()
            killer.join()
        scorers = {int(p.name) for p in pid_dir.iterdir()}
        local_db = tmp_path / "local.db"
        run(write(tmp_path, "local", extra, batch_size=16), local_db)

    assert killed, "no scoring worker was seen"
    assert scorers - set(killed), "no other worker scored after the kill"
    counts = table_counts(ray_db)
    assert counts["rm_scores"] == 3 * TOTAL
    conn = sqlite3.connect(ray_db)
    distinct = conn.execute(
        "select count(*) from (select distinct response_id, rm_key from rm_scores)"
    )
    assert distinct.fetchone()[0] == counts["rm_scores"]
    conn.close()
    assert counts == table_counts(local_db)
    assert stored_items(ray_db) == stored_items(local_db)
    assert_same_metrics(local_db, ray_db)


JUDGE_RECIPE = """
title = "judge on ray"
batch_size = 8

[prompts.source]
name = "simulated-helpful"

[prompts.sampler]
name = "random"
k = 4

[responses]
per_prompt = 4

[responses.policy]
name = "simulated-policy"

[oracle]
name = "llm-judge"
base_url = "{url}"
api_key_env = ""
model = "judge-1"
template = "mt-bench-single"
samples = 1
concurrency = 4
timeout_s = 600
cache = "{cache}"

[[reward_models]]
name = "simulated-rm"

[[metrics]]
name = "pairwise-accuracy"

[executor]
name = "ray"
num_workers = 2
"""


def test_judge_requests_keep_one_concurrency_limit_across_workers(ray_instance, tmp_path):
    pytest.importorskip("openai")
    from rmaudit.testing.fake_openai import FakeOpenAI

    # 16 labels in two batches of 8, one per worker: each worker's share of the limit is 2,
    # so the server sees at most 4 requests at once; each worker alone would have sent 4.
    # The server holds its replies until 3 requests are in flight, more than one worker's
    # share: both workers are sending then, however late one of them started (the judge's
    # timeout_s outlasts the wait).
    with FakeOpenAI(hold_until_in_flight=3, hold_s=300) as server:
        recipe = tmp_path / "judge.toml"
        recipe.write_text(
            textwrap.dedent(
                JUDGE_RECIPE.format(url=server.base_url, cache=tmp_path / "requests.sqlite")
            ),
            encoding="utf-8",
        )
        run(recipe, tmp_path / "judge.db")

    assert server.count(kind="judge") == 16  # every response judged once
    assert 3 <= server.max_in_flight <= 4, server.max_in_flight  # both workers, one budget
    assert table_counts(tmp_path / "judge.db")["oracle_labels"] == 16


FAILING_RM = '''
from rmaudit import hookimpl
from rmaudit.components import RewardModel
from rmaudit.errors import BadInput


class RefusingRM(RewardModel):
    """Rejects every batch, as an RM does whose inputs break its contract."""

    name = "refusing-rm"

    def score(self, batch):
        raise BadInput("cannot score these inputs", field="max_length", value=len(batch))


@hookimpl
def register_reward_models(register):
    register(RefusingRM)
'''


def test_a_component_error_on_a_worker_is_located_in_the_recipe(
    ray_instance, tmp_path, register_plugin
):
    extra = '\n[[reward_models]]\nlabel = "refusing"\nname = "refusing-rm"\n'
    recipe = write(tmp_path, "ray", extra, RAY_EXECUTOR)
    with register_plugin(plugin("ray_error_test_plugin", FAILING_RM)):
        with pytest.raises(BadInput) as raised:
            run(recipe, tmp_path / "ray.db")
    assert raised.value.one_line() == (
        f"{recipe}: reward_models[2].max_length: cannot score these inputs (got 32)"
    )
