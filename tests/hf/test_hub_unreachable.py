"""A model id while the hub cannot be reached: a cached model loads from the cache at once, any
other id is one line with the way out (exit code 2) in the plan before the run — not minutes of
retries, and nothing stored.  And while it can: a model id or revision the hub does not have is
one line too, before ``rmaudit run`` or ``rmaudit audit`` touches its DB.

The hub is "unreachable" because HF_ENDPOINT names a local port nothing listens on, and
"reachable" because it names a local HTTP server that answers the hub's model-info API as the
hub does (``X-Error-Code: RepoNotFound`` / ``RevisionNotFound``); each run is a subprocess,
since huggingface_hub reads its environment once, at import.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from _support import HANG_S
from test_audit import write_llmbar

from rmaudit.testing.fake_openai import serve_in_background

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


def audit(
    tmp_path: Path, model: str, cache: Path, *command: str, **variables: str
) -> subprocess.CompletedProcess:
    """``rmaudit run`` of RECIPE with ``model`` (or ``command``: another rmaudit command)."""
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(RECIPE.format(model=model))
    env = {key: value for key, value in os.environ.items() if not key.startswith("HF_")}
    env.update(
        {
            "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}",
            "HF_HUB_CACHE": str(cache),
            "HF_HOME": str(tmp_path / "hf-home"),
            **variables,
        }
    )
    command = command or ("run", str(recipe), "--db", str(tmp_path / "audit.db"))
    return subprocess.run(
        [sys.executable, "-m", "rmaudit", *command],
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )  # a hang (hub retries) fails the test instead of stalling it


def audit_llmbar(tmp_path: Path, model: str, *options: str, **variables: str):
    """``rmaudit audit MODEL --suite llmbar`` on a tiny LLMBar; (the result, its DB path)."""
    write_llmbar(tmp_path / "data")
    db = tmp_path / "audit.db"
    result = audit(
        tmp_path,
        "",
        tmp_path / "empty-cache",
        *("audit", model, "--suite", "llmbar", "--data-dir", str(tmp_path / "data")),
        *("--db", str(db), *options),
        **variables,
    )
    return result, db


def test_an_uncached_model_id_is_one_line_naming_it_and_the_way_out(tmp_path):
    result = audit(tmp_path, "someone/unknown-rm", tmp_path / "empty-cache")
    assert result.returncode == 2, result.stderr
    (error,) = result.stderr.splitlines()  # in the plan, before any stage ran
    assert error.startswith("Error: ") and "Traceback" not in result.stderr
    assert "reward_models[0].model" in error and "someone/unknown-rm" in error
    assert "cannot reach 127.0.0.1" in error and "HF_HUB_OFFLINE=1" in error
    assert not (tmp_path / "audit.db").exists()


def test_an_uncached_model_id_offline_is_one_line_naming_it(tmp_path):
    result = audit(tmp_path, "someone/unknown-rm", tmp_path / "empty-cache", HF_HUB_OFFLINE="1")
    assert result.returncode == 2, result.stderr
    error = result.stderr.splitlines()[-1]
    assert "reward_models[0].model" in error and "someone/unknown-rm" in error
    assert "HF_HUB_OFFLINE is set and the model is not in the Hugging Face cache" in error


@pytest.mark.parametrize("offline", ["", "1"])
def test_audit_refuses_an_uncached_model_id_before_the_db_is_touched(tmp_path, offline):
    """The audit checks every MODEL before it opens the DB: nothing is written."""
    result, db = audit_llmbar(
        tmp_path, "someone/unknown-rm", **({"HF_HUB_OFFLINE": offline} if offline else {})
    )
    assert result.returncode == 2, result.stderr
    (error,) = result.stderr.splitlines()
    assert error.startswith("Error: MODEL: ") and error.endswith("(got 'someone/unknown-rm')")
    assert not db.exists()


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


KNOWN_MODEL = "someone/real-rm"


class FakeHub(BaseHTTPRequestHandler):
    """The hub's model-info API for one model, ``KNOWN_MODEL`` at revision ``main``."""

    def do_GET(self):  # noqa: N802 - the http.server hook
        path = self.path.split("?")[0].removeprefix("/api/models/")
        model, _, revision = path.partition("/revision/")
        if model != KNOWN_MODEL:
            self._answer(404, {"error": "Repository not found"}, "RepoNotFound")
        elif revision not in ("", "main"):
            self._answer(404, {"error": "Invalid rev id"}, "RevisionNotFound")
        else:
            self._answer(200, {"id": model, "sha": COMMIT, "siblings": []})

    def _answer(self, status: int, body: dict, error_code: str | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if error_code:
            self.send_header("X-Error-Code", error_code)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def hub():
    server = serve_in_background(FakeHub)
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_model_id_the_hub_does_not_have_is_refused_before_the_db(tmp_path, hub):
    result, db = audit_llmbar(tmp_path, "someone/reall-rm", HF_ENDPOINT=hub)
    assert result.returncode == 2, result.stderr
    (error,) = result.stderr.splitlines()
    assert error == (
        "Error: MODEL: no such model on the Hugging Face hub (a private one needs HF_TOKEN "
        "set) (got 'someone/reall-rm')"
    )
    assert not db.exists()


def test_a_recipes_model_id_the_hub_does_not_have_is_refused_before_the_db(tmp_path, hub):
    result = audit(tmp_path, "someone/reall-rm", tmp_path / "empty-cache", HF_ENDPOINT=hub)
    assert result.returncode == 2, result.stderr
    (error,) = result.stderr.splitlines()
    assert "reward_models[0].model" in error and "no such model on the Hugging Face hub" in error
    assert not (tmp_path / "audit.db").exists()


def test_a_revision_the_hub_does_not_have_is_refused_before_the_db(tmp_path, hub):
    result, db = audit_llmbar(tmp_path, KNOWN_MODEL, "--revision", "mian", HF_ENDPOINT=hub)
    assert result.returncode == 2, result.stderr
    (error,) = result.stderr.splitlines()
    assert "no revision 'mian'" in error and KNOWN_MODEL in error
    assert not db.exists()


def test_a_model_the_hub_has_passes_the_check(tmp_path, hub):
    """The fake hub serves no files, so loading fails later: but not as an unknown model."""
    result, _ = audit_llmbar(tmp_path, KNOWN_MODEL, HF_ENDPOINT=hub)
    assert result.returncode != 0
    assert "no such model" not in result.stderr and "no revision" not in result.stderr


def test_a_judges_hub_id_is_refused_before_the_db_when_uncached_and_offline(tmp_path):
    """judge:NAMESPACE/NAME is a causal LM on the hub, under the same rules as MODEL."""
    result, db = audit_llmbar(tmp_path, "judge:someone/unknown-judge")
    assert result.returncode == 2, result.stderr
    (error,) = result.stderr.splitlines()
    assert error.startswith("Error: MODEL: ") and "cannot reach 127.0.0.1" in error
    assert error.endswith("(got 'someone/unknown-judge')")
    assert not db.exists()


def test_a_judges_hub_id_the_hub_does_not_have_is_refused_before_the_db(tmp_path, hub):
    result, db = audit_llmbar(tmp_path, "judge:someone/reall-rm", HF_ENDPOINT=hub)
    assert result.returncode == 2, result.stderr
    (error,) = result.stderr.splitlines()
    assert "no such model on the Hugging Face hub" in error and "someone/reall-rm" in error
    assert not db.exists()


def test_a_cached_judge_hub_id_judges_from_the_cache_without_the_hub(tmp_path, tiny_models):
    cache = tmp_path / "hub"
    repo = cache / "models--someone--tiny-judge"
    shutil.copytree(tiny_models["llama-lm"], repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    write_llmbar(tmp_path / "data")
    db = tmp_path / "audit.db"
    result = audit(
        tmp_path,
        "",
        cache,
        *("audit", "judge:someone/tiny-judge", "--suite", "llmbar"),
        *("--data-dir", str(tmp_path / "data"), "--db", str(db)),
    )
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(db) as conn:
        pairs = conn.execute("select count(*) from pairs").fetchone()[0]
        verdicts = conn.execute("select count(*) from judge_verdicts").fetchone()[0]
        (label,) = conn.execute(
            "select label from run_reward_models where label like 'judge:%'"
        ).fetchone()
    assert pairs and verdicts == 2 * pairs and label == "judge:someone/tiny-judge"
