"""A model id while the hub cannot be reached: a cached model loads from the cache at once, any
other id is one line with the way out (exit code 2) when the model is first needed — not
minutes of retries.  The stages before it keep their stored work, as after any failure.

The hub is "unreachable" because HF_ENDPOINT names a local port nothing listens on; each run is
a subprocess, since huggingface_hub reads its environment once, at import.
"""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

RECIPE = """
title = "a model id with the hub unreachable"

[prompts.source]
name = "simulated-helpful"

[prompts.sampler]
name = "random"
k = 2

[responses]
per_prompt = 3

[responses.policy]
name = "simulated-policy"

[oracle]
name = "simulated-judge"

[[reward_models]]
label = "tiny"
name = "hf-classifier"
model = "{model}"

[[metrics]]
name = "pairwise-accuracy"
"""
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again when the block ends: connections are refused


def audit(tmp_path: Path, model: str, cache: Path) -> subprocess.CompletedProcess:
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(RECIPE.format(model=model))
    env = {key: value for key, value in os.environ.items() if not key.startswith("HF_")}
    env.update(
        HF_ENDPOINT=f"http://127.0.0.1:{closed_port()}",
        HF_HUB_CACHE=str(cache),
        HF_HOME=str(tmp_path / "hf-home"),
    )
    return subprocess.run(
        [sys.executable, "-m", "rmaudit", "run", str(recipe), "--db", str(tmp_path / "audit.db")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )  # a hang (hub retries) fails the test instead of stalling it


def test_an_uncached_model_id_is_one_line_naming_it_and_the_way_out(tmp_path):
    result = audit(tmp_path, "someone/unknown-rm", tmp_path / "empty-cache")
    assert result.returncode == 2, result.stderr
    error = result.stderr.splitlines()[-1]  # after the progress of the stages before the RM's
    assert error.startswith("Error: ") and "Traceback" not in result.stderr
    assert "reward_models[0].model" in error and "someone/unknown-rm" in error
    assert "cannot reach 127.0.0.1" in error and "HF_HUB_OFFLINE=1" in error


def test_a_cached_model_id_loads_from_the_cache_without_the_hub(tmp_path, tiny_models):
    cache = tmp_path / "hub"
    repo = cache / "models--someone--tiny-rm"
    shutil.copytree(tiny_models["gpt2-rm"], repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)

    result = audit(tmp_path, "someone/tiny-rm", cache)
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(tmp_path / "audit.db") as conn:
        assert conn.execute("select count(*) from rm_scores").fetchone() == (6,)
