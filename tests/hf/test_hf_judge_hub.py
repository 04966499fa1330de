"""A recipe's ``hf-judge-rm`` naming a hub id is checked at run start under hf-classifier's
cache rules, offline (HF_HUB_OFFLINE=1): an id absent from the Hugging Face cache is one line
naming the recipe field, exit code 2, before the DB is created; one in the cache (a tiny causal
LM built offline, laid out as the hub's cache lays out a snapshot) loads and judges.  Each run is
a subprocess, since huggingface_hub reads its environment once, at import."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from _support import HANG_S

pytest.importorskip("torch")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rewardbench-mini.jsonl"
COMMIT = "89abcdef0123456789abcdef0123456789abcdef"

RECIPE = """\
title = "a judge named by its hub id"

[pairs.source]
name = "pairs-file"
path = "{pairs}"
subset = "subset"

[[reward_models]]
label = "hub judge"
name = "hf-judge-rm"
model = "{model}"
mode = "{mode}"

[[metrics]]
name = "pair-accuracy"
"""


def run_offline(tmp_path: Path, model: str, mode: str, cache: Path) -> subprocess.CompletedProcess:
    recipe = tmp_path / "judge.toml"
    recipe.write_text(RECIPE.format(pairs=EXAMPLES, model=model, mode=mode))
    env = {key: value for key, value in os.environ.items() if not key.startswith("HF_")}
    env.update(HF_HUB_OFFLINE="1", HF_HUB_CACHE=str(cache), HF_HOME=str(tmp_path / "hf-home"))
    return subprocess.run(
        [sys.executable, "-m", "rmaudit", "run", str(recipe), "--db", str(tmp_path / "j.db")],
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )  # a hang fails the test instead of stalling it


@pytest.mark.parametrize("mode", ["pairwise", "rating"])
def test_a_judge_hub_id_absent_from_the_cache_is_one_line_and_nothing_written(tmp_path, mode):
    cache = tmp_path / "empty-cache"
    cache.mkdir()
    result = run_offline(tmp_path, "someone/absent-judge", mode, cache)
    assert result.returncode == 2, result.stderr
    (error,) = result.stderr.splitlines()
    assert error.startswith("Error: ") and "Traceback" not in result.stderr
    assert "reward_models[0].model" in error and "someone/absent-judge" in error
    assert "HF_HUB_OFFLINE is set and the model is not in the Hugging Face cache" in error
    assert not (tmp_path / "j.db").exists()


@pytest.mark.parametrize("mode", ["pairwise", "rating"])
def test_a_cached_judge_hub_id_loads_from_the_cache(tmp_path, tiny_models, mode):
    cache = tmp_path / "hub"
    repo = cache / "models--someone--tiny-judge"
    shutil.copytree(tiny_models["llama-lm"], repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)

    result = run_offline(tmp_path, "someone/tiny-judge", mode, cache)
    assert result.returncode == 0, result.stderr
    pairs = sum(1 for line in EXAMPLES.open() if line.strip())
    with sqlite3.connect(tmp_path / "j.db") as conn:
        if mode == "pairwise":  # every pair shown in both orders
            (verdicts,) = conn.execute("select count(*) from judge_verdicts").fetchone()
            assert verdicts == 2 * pairs
        else:  # every response rated
            (scored,) = conn.execute("select count(*) from rm_scores").fetchone()
            (responses,) = conn.execute("select count(*) from responses").fetchone()
            assert scored == responses > 0
