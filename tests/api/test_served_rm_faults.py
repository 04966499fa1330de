"""A served reward model meets a server that fails (issue 49, "Bad input and faults"), on real
sockets (tests/_served_rm.py serving :class:`Digest`, no torch): nothing listening, another
protocol's server (a 404), a reply with too few scores, a NaN or a string score, a server that
never answers — each exit code 2 with one line and no DB written; HTML instead of JSON, 429,
5xx and a connection dropped mid-body — each retried, and every score stored once, as the
server scores it; and a NaN that stopped a run is asked again, not read from the cache."""

from __future__ import annotations

import socket
import sqlite3

import pytest
from _served_rm import Digest, score_of
from test_audit import write_llmbar

from rmaudit.default_plugins.served import SERVED_RMS
from rmaudit.testing import check_component

#: the request flags of a local server: a short wait, the judges' retries
FLAGS = ("--rm-protocol", "vllm-pooling", "--rm-dtype", "float32")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def data(tmp_path):
    root = tmp_path / "data"
    return root, write_llmbar(root)


def audit(rmaudit, url: str, data, db, *extra: str):
    return rmaudit(
        "audit", url, *FLAGS, *extra, "--suite", "llmbar", "--data-dir", str(data), "--db", str(db)
    )


def expected_scores(pairs) -> dict[tuple[str, str], float]:
    """Each (prompt, response)'s score as Digest computes it from the chat request's messages."""
    served = Digest()
    return {
        (prompt, text): score_of(
            served.tokens(
                served.render(
                    [{"role": "user", "content": prompt}, {"role": "assistant", "content": text}]
                )
            )
        )
        for prompt, *both in pairs
        for text in both
    }


def stored(db) -> dict[tuple[str, str], list[float]]:
    """(prompt, response) → every score the served RM stored for it."""
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "select p.text, r.text, s.score from rm_scores s "
            "join run_reward_models m on m.rm_key = s.rm_key "
            "join responses r on r.id = s.response_id join prompts p on p.id = r.prompt_id "
            "where m.label like 'vllm-pooling:%'"
        ).fetchall()
    found: dict[tuple[str, str], list[float]] = {}
    for prompt, text, score in rows:
        found.setdefault((prompt, text), []).append(score)
    return found


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("protocol", ["vllm-pooling", "vllm-classify"])
def test_a_served_rm_conforms_to_the_kit(fake_served, protocol):
    cls = SERVED_RMS[protocol]
    check_component(cls(cls.Options(base_url=fake_served(protocol).url)))


def test_nothing_listening_is_exit_2_and_writes_nothing(rmaudit, data, tmp_path):
    with socket.socket() as probe:  # a port that was free, closed again: nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    db = tmp_path / "audit.db"
    done = audit(rmaudit, f"http://127.0.0.1:{port}", data[0], db)
    assert done.code == 2
    assert "nothing answers at this URL" in one_line(done.err)
    assert not db.exists()


def test_another_protocols_server_is_a_404_exit_2_and_writes_nothing(
    rmaudit, data, tmp_path, fake_served
):
    server = fake_served("vllm-classify")  # FLAGS say vllm-pooling: POST /pooling is a 404
    db = tmp_path / "audit.db"
    done = audit(rmaudit, server.url, data[0], db)
    assert done.code == 2
    assert "HTTP 404" in one_line(done.err) and "/pooling" in done.err
    assert not db.exists()


@pytest.mark.parametrize(
    ("fate", "said"),
    [
        ("short", "expected 1 score, one per text sent, got 0"),
        ("nan", "data[0].data[0]: expected a finite number (got nan)"),
        ("string", "data[0].data: expected a number (got 'high')"),
    ],
)
def test_a_reply_that_is_no_score_is_exit_2_and_writes_nothing(
    rmaudit, data, tmp_path, fake_served, fate, said
):
    server = fake_served("vllm-pooling", schedule=lambda path, body, attempt: fate)
    db = tmp_path / "audit.db"
    done = audit(rmaudit, server.url, data[0], db)
    assert done.code == 2
    line = one_line(done.err)
    assert said in line and f"{server.url}/pooling" in line
    assert not db.exists()
    assert server.count(fate=fate) == 1  # no retry: a reply the protocol refuses is no timing


def test_a_server_that_never_answers_is_stopped_by_the_request_timeout(
    rmaudit, data, tmp_path, fake_served
):
    server = fake_served("vllm-pooling", schedule=lambda path, body, attempt: "stall")
    db = tmp_path / "audit.db"
    done = audit(rmaudit, server.url, data[0], db, "--request-timeout", "1")
    assert done.code == 2
    assert "no reply within 1 s" in one_line(done.err)
    assert not db.exists()
    assert server.count(fate="stall") == 1  # the ready call is not tried again


@pytest.mark.parametrize("fate", ["html", "429", "500", "503", "drop"])
def test_a_failed_request_is_retried_and_each_score_stored_once(
    rmaudit, data, tmp_path, fake_served, fate
):
    root, pairs = data

    def first_attempt_fails(path, body, attempt):
        return fate if attempt == 0 else "ok"

    server = fake_served("vllm-pooling", schedule=first_attempt_fails)
    db = tmp_path / "audit.db"
    done = audit(rmaudit, server.url, root, db)
    assert done.code == 0, done.err
    assert server.count(fate=fate) >= len(expected_scores(pairs))  # every request met it once
    assert stored(db) == {item: [score] for item, score in expected_scores(pairs).items()}


def test_a_nan_that_stopped_a_run_is_asked_again_by_the_rerun(rmaudit, data, tmp_path, fake_served):
    root, pairs = data
    broken = {"now": True}
    spoiled = "Natural question 1?"

    def nan_for_one_prompt(path, body, attempt):
        text = body.get("messages", [{}])[0].get("content")
        return "nan" if broken["now"] and text == spoiled else "ok"

    server = fake_served("vllm-pooling", schedule=nan_for_one_prompt)
    db = tmp_path / "audit.db"
    first = audit(rmaudit, server.url, root, db, "--no-scoring-checks")
    assert first.code == 2, first.err
    assert "expected a finite number (got nan)" in first.err
    assert server.count(fate="nan") >= 1  # the first NaN stops the run
    broken["now"] = False
    before = len(server.log)
    again = audit(rmaudit, server.url, root, db, "--no-scoring-checks")
    assert again.code == 0, again.err
    assert stored(db) == {item: [score] for item, score in expected_scores(pairs).items()}
    asked = [e for e in server.log[before:] if spoiled in e.get("texts", [""])[0]]
    assert asked, "the NaN reply was served from the cache"


def test_other_weights_behind_the_same_url_and_name_are_refused_before_the_cache_mixes_them(
    rmaudit, data, tmp_path, fake_served
):
    root, _ = data
    server = fake_served("vllm-pooling")
    first = audit(rmaudit, server.url, root, tmp_path / "first.db")
    assert first.code == 0, first.err
    before = len(server.log)
    same = audit(rmaudit, server.url, root, tmp_path / "same.db")  # the same weights
    assert same.code == 0, same.err
    assert stored(tmp_path / "same.db") == stored(tmp_path / "first.db")
    assert any("2 + 2 = 4." in str(entry) for entry in server.log[before:])  # asked again
    server.perturb = lambda batch_size, position: 0.5  # restarted with other weights
    moved = audit(rmaudit, server.url, root, tmp_path / "moved.db")
    assert moved.code == 2
    line = one_line(moved.err)
    assert "serves other weights under the same URL" in line and server.url in line, line
    assert not (tmp_path / "moved.db").exists()
    server.perturb = lambda batch_size, position: 0.005  # the same weights, other kernels
    nudged = audit(rmaudit, server.url, root, tmp_path / "nudged.db")
    assert nudged.code == 0, nudged.err


def test_a_dry_run_prices_the_requests_and_sends_none(rmaudit, data, tmp_path, fake_served):
    root, pairs = data
    server = fake_served("vllm-pooling")
    db = tmp_path / "audit.db"
    done = audit(rmaudit, server.url, root, db, "--rm-price", "0.002", "--dry-run")
    assert done.code == 0, done.err
    responses = len(expected_scores(pairs))  # one chat request each
    sample = 16  # the scoring checks' smallest sample
    # the checks: the run's requests twice, the sample alone, 4 items twice more (noise and
    # the template), 2 probed at both ends; then the ready call
    checks = 2 * sample + sample + 2 * 4 + 2 * 2
    calls = responses + checks + 1
    printed = " ".join(done.out.split())
    assert f"{calls:,}" in printed and f"{calls * 0.002:,.2f}" in printed, done.out
    assert server.log == [] and not db.exists()


def test_the_key_comes_from_the_environment_only_and_is_never_stored(
    rmaudit, data, tmp_path, fake_served
):
    from _api_support import KEY_ENV, SECRET

    root, _ = data
    server = fake_served("vllm-pooling")
    db = tmp_path / "audit.db"
    done = audit(rmaudit, server.url, root, db, "--api-key-env", KEY_ENV)
    assert done.code == 0, done.err
    assert {entry["authorization"] for entry in server.log} == {f"Bearer {SECRET}"}
    for written in [db, *(tmp_path / "cache").iterdir()]:
        assert SECRET.encode() not in written.read_bytes(), written
    keyless = fake_served("vllm-pooling")
    plain = audit(rmaudit, keyless.url, root, tmp_path / "plain.db")
    assert plain.code == 0, plain.err
    assert {entry["authorization"] for entry in keyless.log} == {None}  # none by default
    unset = audit(rmaudit, keyless.url, root, tmp_path / "unset.db", "--api-key-env", "NO_SUCH_VAR")
    assert unset.code == 2 and "NO_SUCH_VAR is not set" in one_line(unset.err)
    assert not (tmp_path / "unset.db").exists()
