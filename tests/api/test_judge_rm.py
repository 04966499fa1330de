"""``rmaudit audit judge:MODEL``: a pairwise LLM judge audited over a real HTTP server on
127.0.0.1 (rmaudit.testing.fake_openai), on LLMBar-shaped pairs written here.  Every judge
metric is checked against a recomputation from the verdicts stored in the DB."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from _api_support import KEY_ENV, SECRET
from _support import HANG_S

SUBSETS = (
    "Natural",
    "Adversarial/Neighbor",
    "Adversarial/GPTInst",
    "Adversarial/GPTOut",
    "Adversarial/Manual",
)


def write_llmbar(root: Path, per_subset: int = 4) -> list[tuple[str, str, str]]:
    """LLMBar's layout; two pairs per question in Natural (a shared prompt), lengths vary so
    the longer answer is chosen about half the time; returns (prompt, chosen, rejected)."""
    pairs = []
    for subset in SUBSETS:
        records = []
        for i in range(per_subset):
            question = f"{subset} question {i // 2 if subset == 'Natural' else i}?"
            short, long = f"no {i}", f"a much longer answer {i} " * (1 + i % 3)
            label = 1 + (i * 7 + len(subset)) % 2
            records.append({"input": question, "output_1": short, "output_2": long, "label": label})
            pairs.append((question, *((short, long) if label == 1 else (long, short))))
        path = root / "llmbar" / "LLMBar" / subset / "dataset.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(records), encoding="utf-8")
    return pairs


def always_first(question: str, a: str, b: str) -> str:
    return "Both are fine, but the first is better.\n[[A]]"


def prefers_longer(question: str, a: str, b: str) -> str:
    return "[[A]]" if len(a) > len(b) else "[[B]]" if len(b) > len(a) else "[[C]]"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the DB and its results file land here


def audit_args(server, data: Path, db: Path) -> list[str]:
    """``rmaudit audit``'s arguments for the fake server's judge on LLMBar-shaped ``data``."""
    return [
        "audit",
        "judge:test-judge",
        "--base-url",
        server.base_url,
        "--api-key-env",
        KEY_ENV,
        "--suite",
        "llmbar",
        "--data-dir",
        str(data),
        "--db",
        str(db),
    ]


def audit(rmaudit, server, data: Path, db: Path, *extra: str):
    return rmaudit(*audit_args(server, data, db), "--json", *extra)


def results(done) -> dict[str, dict]:
    """label → headline metrics and, for a judge, its judge-audit values, from the JSON."""
    suite = json.loads(done.out)["suites"][0]
    return {m["label"]: {**m["metrics"], "judge-audit": m.get("judge")} for m in suite["models"]}


def stored_verdicts(db: Path) -> dict[tuple[str, str, str], str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select prompt_id, first_id, second_id, verdict from judge_verdicts")
        return {(p, a, b): v for p, a, b, v in rows}


def recomputed(db: Path) -> dict[str, float]:
    """The judge metrics by brute force from the stored verdicts and pairs."""
    verdicts = stored_verdicts(db)
    with sqlite3.connect(db) as conn:
        pairs = conn.execute(
            "select prompt_id, chosen_id, rejected_id from pairs where shift_target is null"
        ).fetchall()
    credit, firsts, decisive, consistent, ties, shown = [], 0, 0, [], 0, 0
    for prompt, chosen, rejected in pairs:
        cf, rf = verdicts[(prompt, chosen, rejected)], verdicts[(prompt, rejected, chosen)]
        mine = [
            {"first": 1.0, "second": 0.0, "tie": 0.5}[cf],
            {"second": 1.0, "first": 0.0, "tie": 0.5}[rf],
        ]
        credit.append(sum(mine) / 2)
        consistent.append(mine[0] == mine[1])
        for v in (cf, rf):
            firsts += v == "first"
            decisive += v in ("first", "second")
            ties += v == "tie"
            shown += 1
    return {
        "judge_accuracy": float(np.mean(credit)),
        "position_bias": firsts / decisive - 0.5 if decisive else float("nan"),
        "consistency": float(np.mean(consistent)),
        "tie_rate": ties / shown,
        "parse_failure_rate": 0.0,
    }


def test_a_judge_always_answering_a_has_position_bias_half_and_consistency_0(
    tmp_path, fake_openai, rmaudit
):
    data = tmp_path / "data"
    write_llmbar(data)
    server = fake_openai(pair_judge=always_first)
    db = tmp_path / "audit.db"
    done = audit(rmaudit, server, data, db)
    assert done.code == 0, done.err
    judge = results(done)["judge:test-judge"]["judge-audit"]
    assert judge["position_bias"]["value"] == 0.5
    assert judge["consistency"]["value"] == 0.0
    assert judge["judge_accuracy"]["value"] == 0.5
    assert judge["accuracy_chosen_first"]["value"] == 1.0
    assert judge["accuracy_rejected_first"]["value"] == 0.0
    for key, want in recomputed(db).items():
        assert judge[key]["value"] == pytest.approx(want, abs=1e-12), key
    pairs = len(stored_verdicts(db)) // 2
    assert pairs == 20 and server.count(outcome="ok") == 2 * pairs + 1  # + the ready call

    sent = len(server.log)
    again = audit(rmaudit, server, data, db)
    assert again.code == 0, again.err
    assert len(server.log) == sent, "a rerun sent requests"
    leaks = [p for p in tmp_path.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaks == [] and SECRET not in done.out + done.err
    assert {e["authorization"] for e in server.log} == {f"Bearer {SECRET}"}


def test_a_judge_preferring_the_longer_answer_is_the_length_baseline(
    tmp_path, fake_openai, rmaudit
):
    data = tmp_path / "data"
    pairs = write_llmbar(data)
    server = fake_openai(pair_judge=prefers_longer)
    db = tmp_path / "audit.db"
    done = audit(rmaudit, server, data, db)
    assert done.code == 0, done.err
    found = results(done)
    judge, length = found["judge:test-judge"], found["length"]
    assert judge["accuracy"]["value"] == length["accuracy"]["value"]
    brute = sum(len(c) > len(r) for _, c, r in pairs) / len(pairs)
    assert judge["accuracy"]["value"] == pytest.approx(brute)
    audit_values = judge["judge-audit"]
    assert audit_values["position_bias"]["value"] == 0.0
    assert audit_values["consistency"]["value"] == 1.0
    for key, want in recomputed(db).items():
        assert audit_values[key]["value"] == pytest.approx(want, abs=1e-12), key


def test_server_faults_lose_nothing_and_pay_nothing_twice(tmp_path, fake_openai, rmaudit):
    def faults(key: str, attempt: int) -> str:
        # about one request in five fails on its first attempt, whatever the arrival order
        kind = int(key[:8], 16) % 10
        return ("500", "429", "not-json", "ok", "ok")[kind // 2] if attempt == 0 else "ok"

    data = tmp_path / "data"
    write_llmbar(data)
    clean = fake_openai(pair_judge=prefers_longer)
    flaky = fake_openai(faults, pair_judge=prefers_longer)
    want = audit(rmaudit, clean, data, tmp_path / "clean.db")
    got = audit(rmaudit, flaky, data, tmp_path / "flaky.db", "--judge-template", "rmaudit-pair")
    assert want.code == 0 and got.code == 0, got.err
    assert any(flaky.count(outcome=f) for f in ("500", "429", "not-json"))
    assert stored_verdicts(tmp_path / "clean.db") == stored_verdicts(tmp_path / "flaky.db")
    bodies = [e["pair"] for e in flaky.log if e.get("outcome") == "ok" and "pair" in e]
    assert len(bodies) == len(set(bodies)), "a showing was paid for twice"


def test_kill_9_mid_audit_then_resume_stores_every_verdict_once(tmp_path, fake_openai, rmaudit):
    data = tmp_path / "data"
    write_llmbar(data, per_subset=40)
    # 50 ms a reply: the run lasts several of the store's 1 s commit groups, so the kill
    # finds some verdicts committed and others not
    server = fake_openai(pair_judge=prefers_longer, latency_s=0.05)
    db = tmp_path / "audit.db"
    env = {**os.environ, "RMAUDIT_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "rmaudit", *audit_args(server, data, db)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + HANG_S  # a hang guard, not a timing assumption
    while time.monotonic() < deadline:
        stored = _count(db)
        if 0 < stored < 300:
            break
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    killed_at = _count(db)
    assert 0 < killed_at < 400
    os.environ["RMAUDIT_CACHE_DIR"] = env["RMAUDIT_CACHE_DIR"]
    done = audit(rmaudit, server, data, db)
    assert done.code == 0, done.err
    assert _count(db) == 400
    bodies = [e["pair"] for e in server.log if e.get("outcome") == "ok" and "pair" in e]
    twice = len(bodies) - len(set(bodies))
    # only a request in flight at the kill (sent, its reply never read) can be paid again
    assert twice <= 16, twice


def _count(db: Path) -> int:
    if not db.exists():  # connecting would create it
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute("select count(*) from judge_verdicts").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_verdict_token_logprobs_give_the_probabilities_and_an_ece(tmp_path, fake_openai, rmaudit):
    data = tmp_path / "data"
    write_llmbar(data)
    server = fake_openai(
        pair_judge=prefers_longer,
        verdict_probabilities=lambda q, a, b: (
            {"A": 0.7, "B": 0.2, "C": 0.1} if len(a) > len(b) else {"A": 0.2, "B": 0.7, "C": 0.1}
        ),
    )
    db = tmp_path / "audit.db"
    done = audit(rmaudit, server, data, db)
    assert done.code == 0, done.err
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select p_first, from_logprobs from judge_verdicts").fetchall()
    assert {round(p, 9) for p, _ in rows} == {0.75, 0.25} and all(f for _, f in rows)
    assert "judge_ece" in results(done)["judge:test-judge"]["judge-audit"]


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ("missing.txt", "missing the placeholder {answer_b}"),
        ("no-such-template", "no such judge template file or name"),
    ],
)
def test_a_bad_template_is_one_line_exit_2_and_nothing_stored(
    template, said, tmp_path, fake_openai, rmaudit
):
    data = tmp_path / "data"
    write_llmbar(data)
    (tmp_path / "missing.txt").write_text("Q: {question}\nA: {answer_a}\n[[A]] or [[B]]?")
    server = fake_openai(pair_judge=always_first)
    db = tmp_path / "audit.db"
    done = audit(rmaudit, server, data, db, "--judge-template", template)
    assert done.code == 2 and said in done.err and len(done.err.strip().splitlines()) == 1
    assert not db.exists() and server.log == []


def test_an_endpoint_answering_no_verdict_is_refused_by_its_ready_call(
    tmp_path, fake_openai, rmaudit
):
    data = tmp_path / "data"
    write_llmbar(data)
    server = fake_openai()  # answers the judge prompt as a chat policy: no verdict
    db = tmp_path / "audit.db"
    done = audit(rmaudit, server, data, db)
    assert done.code == 2, done.err
    assert "holds no [[A]], [[B]] or [[C]] verdict" in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert not db.exists() and len(server.log) == 1


def test_replies_without_a_verdict_are_counted_apart_never_scored(tmp_path, fake_openai, rmaudit):
    def shy(question: str, a: str, b: str) -> str:
        return "I cannot tell." if "question 1?" in question else prefers_longer(question, a, b)

    data = tmp_path / "data"
    write_llmbar(data)
    server = fake_openai(pair_judge=shy)
    db = tmp_path / "audit.db"
    done = audit(rmaudit, server, data, db)
    assert done.code == 0, done.err
    stored = stored_verdicts(db)
    unparsed = sum(v == "unparsed" for v in stored.values())
    assert unparsed > 0
    judge = results(done)["judge:test-judge"]["judge-audit"]
    assert judge["parse_failure_rate"]["value"] == pytest.approx(unparsed / len(stored))
    assert judge["judge_accuracy"]["skipped"] == unparsed // 2  # both orders unparsed
    assert f"{unparsed // 2} of 20 pairs have no verdict in either order" in done.err
