"""No cached reply poisons a rerun (docs/judges.md, "Replies a run cannot read"): a judge reply
holding a lone surrogate, absurd log-probabilities or rating tokens that are no ASCII digits
is read and stored safely, so the audit completes and a rerun from the request cache completes
the same way; a rating reply with no rating is not cached, so a rerun asks again.  Each case
against a real OpenAI-compatible server on 127.0.0.1 (rmaudit.testing.fake_openai)."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from _api_support import KEY_ENV
from test_audit_alpacaeval import reward_bench_layout
from test_judge_rm import always_first, write_llmbar

from rmaudit.testing.fake_openai import judge_score


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the DB and its results file land here


def audit(rmaudit, server, data: Path, db: Path, suite: str):
    return rmaudit(
        "audit",
        "judge:test-judge",
        "--base-url",
        server.base_url,
        "--api-key-env",
        KEY_ENV,
        "--suite",
        suite,
        "--data-dir",
        str(data),
        "--db",
        str(db),
        "--json",
    )


def verdict_rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return sorted(
            conn.execute(
                "select shown_key, verdict, p_first, from_logprobs, reply from judge_verdicts"
            )
        )


def judge_results(done) -> dict:
    (suite,) = json.loads(done.out)["suites"]
    (judge,) = [m for m in suite["models"] if m["label"] == "judge:test-judge"]
    return judge


def audited_twice(rmaudit, server, data: Path, tmp_path: Path, suite: str) -> tuple[Path, Path]:
    """The audit into a new DB, then again into another (every reply from the request cache:
    the server hears nothing more); both must complete."""
    first, again = tmp_path / "first.db", tmp_path / "again.db"
    done = audit(rmaudit, server, data, first, suite)
    assert done.code == 0, done.err
    heard = len(server.log)
    rerun = audit(rmaudit, server, data, again, suite)
    assert rerun.code == 0, rerun.err
    assert len(server.log) == heard  # the rerun read every reply from the cache
    assert judge_results(rerun)["metrics"] == judge_results(done)["metrics"]
    return first, again


def with_surrogate(body: dict) -> dict:
    for choice in body["choices"]:
        choice["message"]["content"] = "odd \ud800 text, then " + choice["message"]["content"]
    return body


def test_a_reply_with_a_lone_surrogate_is_stored_with_it_escaped(tmp_path, fake_openai, rmaudit):
    data = tmp_path / "data"
    write_llmbar(data)
    server = fake_openai(pair_judge=always_first, edit_reply=with_surrogate)
    first, again = audited_twice(rmaudit, server, data, tmp_path, "llmbar")
    rows = verdict_rows(first)
    assert rows and rows == verdict_rows(again)
    for _, verdict, _, _, reply in rows:
        assert verdict == "first"  # the verdict is read past the surrogate
        assert reply.startswith("odd \\ud800 text, then ")  # six characters, as written
        reply.encode("utf-8")  # storable


def with_huge_logprobs(body: dict) -> dict:
    """log-probabilities of 1000 at the verdict token (e^1000 overflows a float)."""
    for choice in body["choices"]:
        for item in choice["logprobs"]["content"]:
            for alternative in item["top_logprobs"]:
                alternative["logprob"] = 1000.0
    return body


def test_log_probabilities_above_0_are_set_aside_and_the_text_read(tmp_path, fake_openai, rmaudit):
    data = tmp_path / "data"
    write_llmbar(data)
    server = fake_openai(
        pair_judge=always_first,
        verdict_probabilities=lambda q, a, b: {"A": 0.7, "B": 0.2, "C": 0.1},
        edit_reply=with_huge_logprobs,
    )
    first, again = audited_twice(rmaudit, server, data, tmp_path, "llmbar")
    rows = verdict_rows(first)
    assert rows and rows == verdict_rows(again)
    # the verdict from the reply's text ([[A]]), as from an endpoint without log-probabilities
    assert {(verdict, p, logprobs) for _, verdict, p, logprobs, _ in rows} == {("first", 1.0, 0)}


def superscript_rating_tokens(body: dict) -> dict:
    """Each rating reply's log-probabilities, whose alternatives at the rating token are the
    superscripts ² and ³ ("²".isdigit() holds, int("²") fails)."""
    for choice in body["choices"]:
        text = choice["message"]["content"]
        found = re.fullmatch(r"(Rating: )\[\[(\d+)\]\]", text)
        if found is None:
            continue
        alternatives = [{"token": "²", "logprob": -0.1}, {"token": "³", "logprob": -2.4}]
        choice["logprobs"] = {
            "content": [
                {"token": found.group(1), "logprob": 0.0, "top_logprobs": []},
                {"token": "[[", "logprob": 0.0, "top_logprobs": []},
                {"token": found.group(2), "logprob": -0.1, "top_logprobs": alternatives},
                {"token": "]]", "logprob": 0.0, "top_logprobs": []},
            ]
        }
    return body


def stored_ratings(db: Path) -> dict[str, float]:
    """response text → the judge's stored rating."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "select r.text, s.score from responses r join rm_scores s on s.response_id = r.id"
            " join run_reward_models m on m.rm_key = s.rm_key and m.label = 'judge:test-judge'"
        ).fetchall()
    return dict(rows)


def test_rating_tokens_that_are_no_ascii_digits_are_no_rating(tmp_path, fake_openai, rmaudit):
    data = tmp_path / "data"
    reward_bench_layout(data)
    server = fake_openai(edit_reply=superscript_rating_tokens)
    first, again = audited_twice(rmaudit, server, data, tmp_path, "alpacaeval-bon16")
    ratings = stored_ratings(first)
    assert ratings and ratings == stored_ratings(again)
    # each rating read from the reply's text, as the fake judge wrote it
    judged = {entry["answer"] for entry in server.log if entry.get("kind") == "judge"}
    for text, rating in ratings.items():
        (answer,) = [a for a in judged if a.strip() == text.strip()]
        assert rating == judge_score(answer, 0)


def test_a_rating_reply_with_no_rating_is_not_cached_and_a_rerun_asks_again(
    tmp_path, fake_openai, rmaudit
):
    data = tmp_path / "data"
    reward_bench_layout(data)
    # the ratings of one value are refused (not the ready call's: that one must pass)
    refused_rating = judge_score("2 + 2 = 4.", 0) % 10 + 1
    refusing = {"on": True}

    def refuse_one(body: dict) -> dict:
        for choice in body["choices"]:
            if refusing["on"] and choice["message"]["content"] == f"Rating: [[{refused_rating}]]":
                choice["message"]["content"] = "I would rather not rate this."
        return body

    server = fake_openai(edit_reply=refuse_one)
    db = tmp_path / "audit.db"
    refused = audit(rmaudit, server, data, db, "alpacaeval-bon16")
    assert refused.code == 2 and "hold no rating" in refused.err, refused.err
    # the requests whose reply held a refused rating (the audit awaited those in flight)
    refused_answers = {
        e["answer"]
        for e in server.log
        if e.get("kind") == "judge"
        and any(judge_score(e["answer"], j) == refused_rating for j in range(e["n"]))
    }
    assert refused_answers
    refusing["on"] = False
    done = audit(rmaudit, server, data, db, "alpacaeval-bon16")
    assert done.code == 0, done.err
    # the refused replies were not cached: the rerun asked for each again, and stored them
    asked_again = {e["answer"] for e in server.log if e.get("kind") == "judge" and e["attempt"]}
    assert refused_answers <= asked_again
    # and nothing else: a request answered while the audit stopped was cached all the same
    assert asked_again <= refused_answers
    assert len(stored_ratings(db)) > 0
