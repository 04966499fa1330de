"""``rmaudit plan`` prices an LLM judge before anything is spent: its calls are the requests a
real run then sends to a real OpenAI-compatible server on 127.0.0.1 (counted by the server),
for a pairwise judge on LLMBar-shaped pairs and for an API rating judge serving as a label
budget's cheap judge (priced as cheap-judge calls, not as free RM scorings)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from _api_support import KEY_ENV
from test_judge_rm import prefers_longer, write_llmbar

from rmaudit.backends.openai_api import estimate_tokens

SIMULATED = """\
title = "an API rating judge beside a simulated benchmark"

[prompts.source]
name = "simulated-helpful"

[prompts.sampler]
name = "random"
k = {k}
seed = 3

[responses]
per_prompt = 8

[responses.policy]
name = "simulated-policy"

[oracle]
name = "simulated-judge"
samples = 2
{budget}
[[reward_models]]
label = "honest"
name = "simulated-rm"
seed = 1

[[reward_models]]
label = "api judge"
name = "llm-judge-rm"
model = "test-judge"
mode = "rating"
base_url = "{url}"
api_key_env = "{key}"
samples = 2
{price}
[[metrics]]
name = "reta"
eta = 0.25
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the DB and its results file land here


def plan_json(rmaudit, *args: str) -> dict:
    planned = rmaudit("plan", *args, "--json")
    assert planned.code == 0, planned.err
    return json.loads(planned.out)


def test_a_pairwise_judges_planned_calls_are_the_requests_its_run_sends(
    rmaudit, fake_openai, tmp_path
):
    pairs = write_llmbar(tmp_path / "data")
    server = fake_openai(pair_judge=prefers_longer)
    printed = rmaudit(
        *("audit", "judge:test-judge", "--base-url", server.base_url, "--api-key-env", KEY_ENV),
        *("--suite", "llmbar", "--data-dir", str(tmp_path / "data"), "--print-recipe"),
    )
    assert printed.code == 0, printed.err
    recipe = tmp_path / "llmbar.toml"
    # two replies a call: asked for in one request (n = 2), so the calls stay 2 per pair
    recipe.write_text(printed.out.replace('mode = "pairwise"', 'mode = "pairwise"\nsamples = 2'))
    db = tmp_path / "judge.db"

    planned = plan_json(rmaudit, str(recipe), "--db", str(db), "--judge-price", "2.5,10")
    (judge,) = planned["judge_calls"]
    assert not db.exists()  # planning wrote nothing
    assert (judge["calls"], judge["ready"], judge["replies"]) == (
        2 * len(pairs) + 1,
        1,
        2 * (2 * len(pairs) + 1),
    )
    # the tokens: each call shows the template and one pair's texts, once
    shown = sum(estimate_tokens(q) + estimate_tokens(a) + estimate_tokens(b) for q, a, b in pairs)
    assert judge["prompt_tokens"] > judge["calls"] * shown / len(pairs)
    assert judge["usd"] == pytest.approx(
        (judge["prompt_tokens"] * 2.5 + judge["completion_tokens"] * 10) / 1e6, rel=1e-3
    )

    ran = rmaudit("run", str(recipe), "--db", str(db))
    assert ran.code == 0, ran.err
    assert server.count() == judge["calls"]  # every planned call sent, and no other

    replanned = plan_json(rmaudit, str(recipe), "--db", str(db))
    assert replanned["judge_calls"][0]["calls"] == 0 and replanned["judge_calls"][0]["usd"] is None
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    assert server.count() == judge["calls"]  # the rerun sent nothing, as planned


def test_an_unpriced_judge_is_said_plainly(rmaudit, fake_openai, tmp_path):
    write_llmbar(tmp_path / "data")
    server = fake_openai()
    printed = rmaudit(
        *("audit", "judge:test-judge", "--base-url", server.base_url, "--api-key-env", KEY_ENV),
        *("--suite", "llmbar", "--data-dir", str(tmp_path / "data"), "--print-recipe"),
    )
    recipe = tmp_path / "llmbar.toml"
    recipe.write_text(printed.out)
    shown = rmaudit("plan", str(recipe), "--db", str(tmp_path / "none.db"))
    assert shown.code == 0, shown.err
    assert "no price for the judge 'judge:test-judge', so no USD: give --judge-price" in shown.out
    assert server.count() == 0


def test_an_api_cheap_judges_ratings_are_planned_as_the_cheap_calls_its_run_sends(
    rmaudit, fake_openai, tmp_path, monkeypatch
):
    server = fake_openai()
    fill = {"url": server.base_url, "key": KEY_ENV, "price": "", "budget": ""}
    pilot = tmp_path / "pilot.toml"
    pilot.write_text(SIMULATED.format(k=4, **fill))
    db = tmp_path / "pilot.db"
    assert rmaudit("run", str(pilot), "--db", str(db)).code == 0
    assert server.count() == 4 * 8 + 1  # the pilot's ratings and the ready call

    budgeted = tmp_path / "budgeted.toml"
    budgeted.write_text(
        SIMULATED.format(k=6, **{**fill, "budget": "budget = 0.5\n"})
        + '\n[cheap_oracle]\nreward_model = "api judge"\n'
    )
    planned = plan_json(
        rmaudit, str(budgeted), "--db", str(db), "--target", "reta@0.25", "--cheap-price", "0.01"
    )
    stands = planned["as_it_stands"]
    assert stands["cheap_judge"] and stands["prompts"] == 6
    assert stands["cheap_calls"] == 6 * 8  # the judge's ratings, priced as cheap calls
    assert stands["rm_scorings"] == 6 * 8  # the other RM's alone
    for option in planned["options"]:  # the judge rates every response of every option
        assert option["cheap_calls"] == option["prompts"] * 8
    assert planned["prices"]["cheap"] == 0.01

    before = server.count()
    monkeypatch.setenv("RMAUDIT_CACHE_DIR", str(tmp_path / "fresh-cache"))  # nothing cached
    ran = rmaudit("run", str(budgeted), "--db", str(tmp_path / "budgeted.db"))
    assert ran.code == 0, ran.err
    assert server.count() - before == stands["cheap_calls"] + 1  # and the ready call


@pytest.mark.parametrize("priced", [True, False])
def test_an_api_cheap_judges_price_comes_from_its_cost_model_or_is_said_missing(
    rmaudit, fake_openai, tmp_path, priced
):
    server = fake_openai()
    price = "price = { prompt = 1.0, completion = 4.0 }\n" if priced else ""
    fill = {"url": server.base_url, "key": KEY_ENV, "price": price, "budget": ""}
    pilot = tmp_path / "pilot.toml"
    pilot.write_text(SIMULATED.format(k=4, **fill))
    db = tmp_path / "pilot.db"
    assert rmaudit("run", str(pilot), "--db", str(db)).code == 0
    budgeted = tmp_path / "budgeted.toml"
    budgeted.write_text(
        SIMULATED.format(k=6, **{**fill, "budget": "budget = 0.5\n"})
        + '\n[cheap_oracle]\nreward_model = "api judge"\n'
    )
    planned = plan_json(rmaudit, str(budgeted), "--db", str(db), "--target", "reta@0.25")
    source = planned["prices"]["sources"]["cheap"]
    # the simulated oracle has no USD price, so a cheap call is priced as an oracle call
    assert planned["prices"]["cheap"] == 1.0
    if priced:
        (judge,) = planned["judge_calls"]
        assert judge["usd"] == pytest.approx(
            (judge["prompt_tokens"] * 1.0 + judge["completion_tokens"] * 4.0) / 1e6, rel=1e-3
        )
        assert source == "as an oracle call (no cost model)"
    else:
        assert "the cheap judge 'api judge' has no price" in source
    text = rmaudit("plan", str(budgeted), "--db", str(db), "--target", "reta@0.25")
    assert text.code == 0 and "the LLM judges' calls" in text.out


def test_tokens_come_from_the_texts_shown(rmaudit, fake_openai, tmp_path):
    """Answers 20 times longer cost exactly their extra characters / 4 more prompt tokens a
    call: the lengths are read from the pairs, not assumed."""
    server = fake_openai()
    found, extra = {}, 0.0
    for name, repeat in (("short", 1), ("long", 20)):
        data = tmp_path / name
        write_llmbar(data)
        records = []
        for path in sorted(Path(data).rglob("dataset.json")):
            these = json.loads(path.read_text())
            for record in these:
                extra += (repeat - 1) * len(record["output_1"]) / 4.0
                record["output_1"] *= repeat
            path.write_text(json.dumps(these))
            records += these
        printed = rmaudit(
            *("audit", "judge:t", "--base-url", server.base_url, "--suite", "llmbar"),
            *("--data-dir", str(data), "--print-recipe"),
        )
        recipe = tmp_path / f"{name}.toml"
        recipe.write_text(printed.out)
        (judge,) = plan_json(rmaudit, str(recipe), "--db", str(tmp_path / "x.db"))["judge_calls"]
        found[name] = judge
    calls = found["long"]["calls"]
    assert calls == 2 * len(records) + 1
    added = found["long"]["prompt_tokens"] - found["short"]["prompt_tokens"]
    assert added == pytest.approx(calls * extra / len(records), abs=1)


def test_a_rating_judge_asks_a_repeated_answer_once_as_planned(rmaudit, fake_openai, tmp_path):
    """On a best-of-n suite read from files (one prompt's two samples say the same), the
    rating judge's planned calls — one per distinct (question, answer), and the ready call —
    are the requests its run sends."""
    from test_audit_alpacaeval import reward_bench_layout

    reward_bench_layout(tmp_path / "data")
    server = fake_openai()
    printed = rmaudit(
        *("audit", "judge:test-judge", "--base-url", server.base_url, "--api-key-env", KEY_ENV),
        *("--suite", "alpacaeval-bon16", "--data-dir", str(tmp_path / "data"), "--print-recipe"),
    )
    assert printed.code == 0, printed.err
    recipe = tmp_path / "bon.toml"
    recipe.write_text(printed.out)
    db = tmp_path / "bon.db"
    (judge,) = plan_json(rmaudit, str(recipe), "--db", str(db))["judge_calls"]
    ran = rmaudit("run", str(recipe), "--db", str(db))
    assert ran.code == 0, ran.err
    with sqlite3.connect(db) as conn:
        responses, distinct = conn.execute(
            "select count(*), count(distinct prompt_id || char(0) || text) from responses"
        ).fetchone()
    assert responses > distinct  # the files hold a repeated answer
    assert judge["calls"] == distinct + 1 == server.count()
