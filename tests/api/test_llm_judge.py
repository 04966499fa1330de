"""The llm-judge oracle against a real HTTP server on 127.0.0.1 that injects 429s, 500s,
timeouts, non-JSON bodies and score-less replies on a deterministic schedule."""

from __future__ import annotations

import itertools
import json
import logging
import math
import sqlite3
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from _api_support import KEY_ENV, SECRET

from rmaudit.backends.judging import ORACLE_TEMPLATES, parse_score
from rmaudit.backends.openai_api import ApiClient, ApiError, ApiOptions
from rmaudit.components import Prompt, Response
from rmaudit.components.keys import prompt_id
from rmaudit.default_plugins.llm_judge_oracle import LlmJudgeOracle
from rmaudit.errors import BadInput
from rmaudit.recipe.validation import validate_options
from rmaudit.testing import check_oracle, check_reference_policy
from rmaudit.testing.fake_openai import judge_score

PROMPTS = [
    ("How do I keep basil alive on a windowsill?", "Six hours of sun; water when the soil is dry."),
    ("What is a hash table?", "A map from keys to buckets chosen by a hash function."),
    ("Name three prime numbers.", "2, 3 and 5."),
    ("How do I boil an egg?", "Simmer it for 9 minutes, then cool it in cold water."),
    ("Why is the sky blue?", "Rayleigh scattering favours short wavelengths."),
]
SAMPLES = 3


def faults():
    """A schedule: first attempts fail in turn with each kind of fault (three in eight pass),
    dealt as distinct requests arrive, so that every kind shows up whatever the request bodies
    hash to; retries succeed."""
    kinds = itertools.cycle(("429", "500", "503", "timeout", "not-json", "ok", "ok", "ok"))
    lock = threading.Lock()  # the server answers on several threads

    def schedule(key: str, attempt: int) -> str:
        if attempt > 0:
            return "ok"
        with lock:
            return next(kinds)

    return schedule


def always(outcome: str):
    return lambda key, attempt: outcome


def judge(server, **options) -> LlmJudgeOracle:
    raw = {
        "base_url": server.base_url,
        "model": "judge-1",
        "api_key_env": KEY_ENV,
        "samples": SAMPLES,
        "timeout_s": 0.5,
        **options,
    }
    return LlmJudgeOracle(
        validate_options(LlmJudgeOracle, raw, field="oracle", file=None, base_dir=None)
    )


def pairs(texts=("A fine answer.", "A short one.", "Another answer, longer and more detailed.")):
    prompt = Prompt(prompt_id("Q?"), "Q?", {"reference": "The reference."})
    return [(prompt, Response(f"r{i}", prompt.id, i, text)) for i, text in enumerate(texts)]


def expected_label(server, answer: str) -> tuple[float, list[float]]:
    """What the server's replies average to, garbage choices left out (computed from the server's
    rule)."""
    kept = [
        float(judge_score(answer, j)) for j in range(SAMPLES) if not server.is_garbage(answer, j)
    ]
    return (float(np.mean(kept)) if kept else math.nan), kept


RECIPE = """
title = "judge against a flaky server"
batch_size = 8

[prompts.source]
name = "jsonl"
path = "prompts.jsonl"

[responses]
per_prompt = 4

[responses.policy]
name = "openai-chat"
base_url = "{url}"
api_key_env = "{env}"
model = "policy-1"
timeout_s = 0.5

[oracle]
name = "llm-judge"
base_url = "{url}"
api_key_env = "{env}"
model = "judge-1"
samples = {samples}
timeout_s = 0.5
price = {{ prompt = 10.0, completion = 30.0 }}

[[reward_models]]
label = "length"
name = "simulated-rm"
bias = "length"

[[metrics]]
name = "reta"
eta = 0.5
n = 4

[[metrics]]
name = "pairwise-accuracy"
"""


def write_recipe(folder: Path, server) -> Path:
    (folder / "prompts.jsonl").write_text(
        "".join(json.dumps({"prompt": q, "reference": a}) + "\n" for q, a in PROMPTS)
    )
    recipe = folder / "judge.toml"
    recipe.write_text(
        textwrap.dedent(RECIPE.format(url=server.base_url, env=KEY_ENV, samples=SAMPLES))
    )
    return recipe


def test_a_run_against_a_flaky_server_labels_every_response_once_and_a_rerun_sends_nothing(
    tmp_path, fake_openai, rmaudit, caplog
):
    caplog.set_level(logging.DEBUG)  # httpx and friends log requests: the key must not be there
    server = fake_openai(faults(), stall_s=1.0, garbage_every=5)
    recipe, db = write_recipe(tmp_path, server), tmp_path / "audit.db"

    first = rmaudit("run", str(recipe), "--db", str(db))
    assert first.code == 0, first.err
    for fault in ("429", "500", "503", "timeout", "not-json"):
        assert server.count(outcome=fault) > 0, f"the schedule never injected {fault}"

    conn = sqlite3.connect(db)
    assert conn.execute("select status from runs").fetchone()[0] == "done"
    responses = conn.execute("select id, text from responses").fetchall()
    assert len(responses) == len(PROMPTS) * 4
    for rid, text in responses:
        # exactly one paid (delivered) judge request per response: retries only after faults
        delivered = [e for e in server.log if e.get("answer") == text and e["outcome"] == "ok"]
        assert len(delivered) == 1 and delivered[0]["n"] == SAMPLES, text
        score, samples, cost, prompt_tokens, completion_tokens = conn.execute(
            "select score, samples, cost_usd, prompt_tokens, completion_tokens from oracle_labels "
            "where response_id = ?",
            [rid],
        ).fetchone()
        want, kept = expected_label(server, text)
        assert json.loads(samples) == kept
        assert score == pytest.approx(want)
        assert completion_tokens == 5 * SAMPLES  # the server's usage, summed
        assert cost == pytest.approx((prompt_tokens * 10.0 + completion_tokens * 30.0) / 1e6)
    conn.close()

    garbage = sum(SAMPLES - len(expected_label(server, text)[1]) for _, text in responses)
    assert garbage > 0, (
        "no score-less reply was injected: the averages above proved nothing about them"
    )
    with sqlite3.connect(db) as conn:
        recorded = conn.execute("select count(*) from failures where stage = 'oracle labels'")
        assert recorded.fetchone()[0] == garbage, (
            "every unscored judge sample is in the failures table"
        )
    assert f"oracle: {garbage} failed judge samples" in first.err

    sent = len(server.log)
    again = rmaudit("run", str(recipe), "--db", str(db))
    assert again.code == 0, again.err
    assert len(server.log) == sent, "a rerun on the same DB sent requests"
    # a fresh DB: the policy and the judge replay their replies from the request cache
    fresh = rmaudit("run", str(recipe), "--db", str(tmp_path / "fresh.db"))
    assert fresh.code == 0, fresh.err
    assert len(server.log) == sent, "a rerun with the request cache sent requests"

    report = rmaudit("report", str(db), "--out", str(tmp_path / "report"))
    assert report.code == 0, report.err
    # the key went to the server, and nowhere else
    assert {e["authorization"] for e in server.log} == {f"Bearer {SECRET}"}
    leaks = [p for p in tmp_path.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaks == []
    outputs = first.out + first.err + again.out + again.err + fresh.out + report.out + report.err
    assert SECRET not in outputs and SECRET not in caplog.text


def test_failures_are_counted_and_a_label_without_any_score_fails(fake_openai):
    server = fake_openai(garbage_every=2)
    batch = pairs()
    labels = judge(server).label(batch)
    for (_, response), label in zip(batch, labels, strict=True):
        want, kept = expected_label(server, response.text)
        garbage = SAMPLES - len(kept)
        assert len(label.failures) == garbage
        assert all(
            "no score in 1-10" in f and "I would rather not say" in f for f in label.failures
        )
        assert label.samples == tuple(kept)
        assert label.failed == (garbage == SAMPLES)
        assert (math.isnan(label.score) and math.isnan(want)) or label.score == pytest.approx(want)

    all_garbage = fake_openai(always("garbage"))
    failed = judge(all_garbage).label(batch[:1])[0]
    assert failed.failed and math.isnan(failed.score) and len(failed.failures) == SAMPLES


def test_a_server_that_ignores_n_is_topped_up_one_request_per_missing_sample(fake_openai):
    server = fake_openai(supports_n=False)
    batch = pairs()
    labels = judge(server).label(batch)
    for (_, response), label in zip(batch, labels, strict=True):
        assert server.count(answer=response.text) == SAMPLES
        # the n request gave choice 0; the top-ups each gave their own choice 0
        assert label.samples == (float(judge_score(response.text, 0)),) * SAMPLES


def test_repeat_mode_sends_one_request_per_sample(fake_openai):
    server = fake_openai()
    oracle = judge(server, n_per_request=False)
    assert oracle.calls_per_label() == SAMPLES
    oracle.label(pairs())
    assert server.count(kind="judge") == 3 * SAMPLES and server.count(n=SAMPLES) == 0


def test_requests_stay_under_the_concurrency_limit(fake_openai):
    # replies wait until 3 requests are in flight: a client that sends 3 at once always gets
    # there, however busy the machine; a fourth would show as max_in_flight 4
    server = fake_openai(hold_until_in_flight=3)
    judge(server, concurrency=3, samples=1).label(pairs([f"answer {i}" for i in range(12)]))
    assert server.max_in_flight == 3


def test_a_server_that_keeps_failing_stops_the_run_after_the_retries(fake_openai):
    server = fake_openai(always("500"))
    with pytest.raises(ApiError, match=r"gave up after 3 attempts \(last: HTTP 500\)"):
        judge(server, max_retries=2).label(pairs()[:1])
    assert server.count() == 3


def test_timeouts_are_retried(fake_openai):
    server = fake_openai(lambda key, attempt: "timeout" if attempt < 2 else "ok", stall_s=1.0)
    label = judge(server, timeout_s=0.3).label(pairs()[:1])[0]
    assert server.count(outcome="timeout") == 2 and len(label.samples) == SAMPLES


def test_a_refused_key_is_bad_input_that_shows_no_key(fake_openai):
    server = fake_openai(always("401"))
    with pytest.raises(BadInput) as error:
        judge(server).label(pairs()[:1])
    assert "HTTP 401" in str(error.value) and KEY_ENV in str(error.value)
    assert SECRET not in str(error.value)
    assert server.count() == 1  # a refusal is not retried


def test_without_a_key_variable_no_authorization_header_is_sent(fake_openai):
    server = fake_openai()
    judge(server, api_key_env="").label(pairs()[:1])
    assert server.count() == 1 and server.log[0]["authorization"] is None


def test_a_wrong_route_is_bad_input_quoting_the_server_and_not_retried(fake_openai):
    server = fake_openai()
    client = ApiClient(ApiOptions(base_url=server.base_url, api_key_env=KEY_ENV))
    with pytest.raises(BadInput, match=r"/v1/nowhere: HTTP 404: 404 \(check base_url") as error:
        client.run(lambda session: session.post("/nowhere", {"model": "m"}, cache_key=None))
    assert SECRET not in str(error.value)
    assert server.count() == 1


def test_a_missing_key_variable_is_bad_input_naming_it(fake_openai, monkeypatch):
    server = fake_openai()
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(BadInput, match=f"environment variable {KEY_ENV} is not set"):
        judge(server).label(pairs()[:1])
    assert server.count() == 0


def test_a_key_pasted_into_api_key_env_is_rejected_without_echoing_it(fake_openai):
    with pytest.raises(BadInput) as error:
        judge(fake_openai(), api_key_env=SECRET)
    assert "NAME of an environment variable" in str(error.value) and SECRET not in str(error.value)


def test_the_rerun_of_a_label_call_is_served_from_the_cache(fake_openai):
    server = fake_openai()
    first = judge(server).label(pairs())
    sent = server.count()
    assert judge(server).label(pairs()) == first and server.count() == sent


def test_the_judge_and_the_chat_policy_pass_the_conformance_kit(fake_openai):
    server = fake_openai()
    check_oracle(judge(server, template="mt-bench-single"))
    from rmaudit.default_plugins.openai_compat import OpenAIChatPolicy

    policy = validate_options(
        OpenAIChatPolicy,
        {"base_url": server.base_url, "model": "p", "api_key_env": KEY_ENV},
        field="policy",
        file=None,
        base_dir=None,
    )
    check_reference_policy(OpenAIChatPolicy(policy))


# -- templates, parsing, cost estimates ------------------------------------------------------


@pytest.mark.parametrize(
    "reply, score",
    [
        ("Rating: [[7]]", 7.0),
        ("The 3 steps are right. Rating: [[8]]", 8.0),
        ("7/10", 7.0),
        ("I give it 4 out of 10", 4.0),
        ("Score: 6.5", 6.5),
        ("9", 9.0),
        (" **5**.", 5.0),
        ("I would rather not say.", None),
        ("Score: 15", None),
        ("[[0]]", None),
        ("", None),
    ],
)
def test_scores_are_read_from_the_usual_reply_shapes(reply, score):
    assert parse_score(reply) == score


def test_the_reta_template_shows_question_reference_and_answer():
    prompt, response = pairs()[0]
    [message] = ORACLE_TEMPLATES["reta-single"].messages(prompt, response)
    assert message["role"] == "user"
    assert "<|The Start of Question|>\nQ?\n<|The End of Question|>" in message["content"]
    assert "<|The Start of Reference Answer|>\nThe reference.\n" in message["content"]
    assert "<|The Start of Assistant A's Answer|>\nA fine answer.\n" in message["content"]


def test_a_reference_template_without_a_reference_is_bad_input():
    prompt = Prompt("p", "Q?", {})
    with pytest.raises(BadInput, match="shows a reference answer, but prompt p has none"):
        ORACLE_TEMPLATES["reta-single"].messages(prompt, Response("r", "p", 0, "A."))


def test_mt_bench_templates_judge_both_turns_and_pick_the_reference_version():
    turns = ["Write a haiku.", "Now make it rhyme."]
    response = Response("r", "p", 0, "second", {"turns": ["first", "second"]})
    plain = ORACLE_TEMPLATES["mt-bench-multi"].messages(
        Prompt("p", "x", {"turns": turns}), response
    )
    assert (
        "### Assistant A:\nfirst" in plain[1]["content"] and "Reference" not in plain[1]["content"]
    )
    with_ref = ORACLE_TEMPLATES["mt-bench-multi"].messages(
        Prompt("p", "x", {"turns": turns, "reference": ["r1", "r2"]}), response
    )
    assert "### Reference answer:\nr2" in with_ref[1]["content"]
    with pytest.raises(BadInput, match="use a multi-turn template"):
        ORACLE_TEMPLATES["reta-single"].messages(Prompt("p", "x", {"turns": turns}), response)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("Judge {question}: {answr}", "unknown placeholder {answr}"),
        ("Judge {question}", "has no {answer} placeholder"),
        ("Judge {question} {answer_1}", "mixes single-turn placeholders"),
        ("Judge {answer} {", "malformed placeholder"),
    ],
)
def test_a_bad_user_template_is_a_one_line_bad_input(tmp_path, rmaudit, text, problem):
    (tmp_path / "judge.txt").write_text(text)
    (tmp_path / "prompts.jsonl").write_text('{"prompt": "Q?"}\n')
    recipe = tmp_path / "r.toml"
    recipe.write_text(
        textwrap.dedent("""
        [prompts.source]
        name = "jsonl"
        path = "prompts.jsonl"
        [responses]
        per_prompt = 2
        [responses.policy]
        name = "simulated-policy"
        [oracle]
        name = "llm-judge"
        base_url = "http://127.0.0.1:9/v1"
        model = "m"
        template_file = "judge.txt"
        [[reward_models]]
        name = "simulated-rm"
        [[metrics]]
        name = "pairwise-accuracy"
    """)
    )
    result = rmaudit("run", str(recipe), "--db", str(tmp_path / "x.db"), "--dry-run")
    assert result.code == 2
    assert (
        problem in result.err
        and "judge.txt" in result.err
        and len(result.err.strip().splitlines()) == 1
    )
    assert not (tmp_path / "x.db").exists()


def test_the_cost_estimate_is_table_1s_tokens_times_prices(tmp_path, fake_openai):
    (tmp_path / "t.txt").write_text("Q: {question}\nA: {answer}")
    oracle = judge(
        fake_openai(),
        template_file=str(tmp_path / "t.txt"),
        max_tokens=4,
        expected_answer_tokens=100,
        price={"prompt": 10.0, "completion": 30.0},
    )
    prompts = [Prompt("a", "x" * 40), Prompt("b", "y" * 80)]
    shown = [len("Q: \nA: ") + 40, len("Q: \nA: ") + 80]  # characters the template shows
    per_label = [((c / 4 + 100) * 10.0 + SAMPLES * 4 * 30.0) / 1e6 for c in shown]
    assert oracle.estimate_cost(prompts, 1000) == pytest.approx(1000 * np.mean(per_label))
    assert judge(fake_openai()).estimate_cost(prompts, 1000) is None  # no price: unknown


def test_the_new_work_line_counts_the_labels_stored_and_says_how_many_failed(
    tmp_path, fake_openai, rmaudit
):
    """One judge sample per label: a score-less reply leaves its response unlabelled."""
    server = fake_openai(garbage_every=3)
    recipe = write_recipe(tmp_path, server)
    recipe.write_text(recipe.read_text().replace(f"samples = {SAMPLES}", "samples = 1"))
    db = tmp_path / "audit.db"

    first = rmaudit("run", str(recipe), "--db", str(db))

    with sqlite3.connect(db) as conn:
        texts = [row[0] for row in conn.execute("select text from responses")]
        stored = conn.execute("select count(*) from oracle_labels").fetchone()[0]
    failed = sum(server.is_garbage(text, 0) for text in texts)
    assert failed > 0 and stored == len(texts) - failed, "the server's rule left none unlabelled"
    (line,) = [line for line in first.err.splitlines() if line.startswith("new work:")]
    assert f"{stored} oracle labels ({failed} failed, not stored: a rerun retries them)" in line
