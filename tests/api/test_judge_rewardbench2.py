"""``rmaudit audit judge:MODEL --suite rewardbench-2`` over a real HTTP server on 127.0.0.1: the
judge rates each completion alone (Ties included), its integer ratings tie at the top of some
rows and share the credit, every number equals reward-bench's formulas on the stored ratings,
the pairs' order seed is stored with the run, and a rerun repeats the ratings exactly."""

from __future__ import annotations

import json
import sqlite3

import pytest
from _api_support import KEY_ENV
from _rb2_data import reference_scores, write_rb2

from rmaudit.testing.fake_openai import judge_score

JUDGE = "judge:test-judge"
#: the answer of the ready call: the one that checks the endpoint rates at all before a run
READY_CALL_ANSWER = "2 + 2 = 4."


def audit(rmaudit, server, data, db) -> dict:
    done = rmaudit(
        "audit", JUDGE, "--base-url", server.base_url, "--api-key-env", KEY_ENV,
        "--suite", "rewardbench-2", "--data-dir", str(data), "--db", str(db), "--json",
    )  # fmt: skip
    assert done.code == 0, done.err
    (suite,) = json.loads(done.out)["suites"]
    return suite


def judge_numbers(suite: dict) -> dict[str, float]:
    (judge,) = [m for m in suite["models"] if m["label"] == JUDGE]
    return {name: m["value"] for name, m in judge["metrics"].items()}


def test_a_judge_rates_every_completion_and_ties_share_the_credit(
    tmp_path, fake_openai, rmaudit, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data"
    rows = write_rb2(data)
    server = fake_openai()
    suite = audit(rmaudit, server, data, tmp_path / "a.db")
    rating = lambda _, completion: float(judge_score(completion, 0))  # noqa: E731
    completions = [[*r["chosen"], *r["rejected"]] for r in rows]
    # one call per completion, Ties included, each showing one completion (and the judge's
    # ready call)
    rated = [e["answer"] for e in server.log if e.get("kind") == "judge"]
    assert sorted(rated) == sorted([READY_CALL_ANSWER, *(c for row in completions for c in row)])
    tops = [[rating(None, c) for c in row] for row in completions if len(row) == 4]
    assert any(sum(v == max(r) for v in r) >= 2 and r[0] == max(r) for r in tops)
    expected = reference_scores(rows, rating)
    for name, value in judge_numbers(suite).items():
        assert value == pytest.approx(expected[name], abs=1e-12), name
    with sqlite3.connect(tmp_path / "a.db") as conn:
        (options,) = conn.execute(
            "select options from components where name = 'combined-pairs'"
        ).fetchone()
    (source,) = json.loads(options)["sources"]
    assert source["name"] == "rewardbench-2" and source["options"]["seed"] == 0
    # the same DB: nothing asked again; a new DB and an empty request cache: asked again,
    # the same ratings and numbers
    calls = len(server.log)
    assert judge_numbers(audit(rmaudit, server, data, tmp_path / "a.db")) == judge_numbers(suite)
    assert len(server.log) == calls
    monkeypatch.setenv("RMAUDIT_CACHE_DIR", str(tmp_path / "another-cache"))
    again = audit(rmaudit, server, data, tmp_path / "b.db")
    assert len(server.log) > calls
    assert judge_numbers(again) == judge_numbers(suite)
