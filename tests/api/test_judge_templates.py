"""Judge templates (rmaudit's own, MT-bench's by name, a user's file), reading verdicts and
ratings from replies and from token log-probabilities, and the rating mode against a real
server on 127.0.0.1."""

from __future__ import annotations

import json
import math

import pytest
from _api_support import KEY_ENV

from rmaudit.backends.judging.verdicts import (
    load_verdict_template,
    parse_verdict,
    rating_token_expectation,
    template_mode,
    verdict_token_probabilities,
)
from rmaudit.components import Prompt, Response
from rmaudit.default_plugins.judge_rm import JudgeRMOptions, LlmJudgeRM
from rmaudit.errors import BadInput
from rmaudit.testing.fake_openai import judge_score

#: judge prompts in the layout of FastChat's judge_prompts.jsonl (texts written here)
PROMPTS = [
    {
        "name": "pair-test",
        "type": "pairwise",
        "system_prompt": "Compare them; answer [[A]], [[B]] or [[C]].",
        "prompt_template": "[User Question]\n{question}\n\n[The Start of Assistant A's Answer]\n"
        "{answer_a}\n[The End of Assistant A's Answer]\n\n[The Start of Assistant B's Answer]\n"
        "{answer_b}\n[The End of Assistant B's Answer]",
        "description": "",
        "category": "general",
        "output_format": "[[A]]",
    },
    {
        "name": "single-test",
        "type": "single",
        "system_prompt": "You are a helpful assistant.",
        "prompt_template": "Rate it [[1-10]].\n[Question]\n{question}\n\n"
        "[The Start of Assistant's Answer]\n{answer}\n[The End of Assistant's Answer]",
        "description": "",
        "category": "general",
        "output_format": "[[rating]]",
    },
    {
        "name": "single-math-test",
        "type": "single",
        "system_prompt": "x",
        "prompt_template": "{question} {ref_answer_1} {answer}",
        "description": "",
        "category": "math",
        "output_format": "[[rating]]",
    },
]


@pytest.fixture
def prompts_file(tmp_path):
    path = tmp_path / "judge_prompts.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in PROMPTS), encoding="utf-8")
    return path


def test_mt_bench_prompts_are_read_by_name_and_mode(prompts_file):
    pair = load_verdict_template("pair-test", "pairwise", prompts_file)
    messages = pair.messages(question="Q?", answer_a="yes", answer_b="no")
    assert messages[0] == {"role": "system", "content": PROMPTS[0]["system_prompt"]}
    assert "yes\n[The End of Assistant A's Answer]" in messages[1]["content"]
    assert template_mode("single-test", prompts_file) == "rating"
    with pytest.raises(BadInput, match="is a rating template; mode is pairwise"):
        load_verdict_template("single-test", "pairwise", prompts_file)
    # a prompt showing a reference answer does not fit a pair suite: not offered
    with pytest.raises(BadInput, match="no such judge template file or name"):
        load_verdict_template("single-math-test", "rating", prompts_file)


def test_a_users_file_must_show_its_modes_placeholders(tmp_path):
    file = tmp_path / "mine.txt"
    file.write_text("{question}\nA: {answer_a}\nB: {answer_b}\n[[A]]/[[B]]/[[C]]?")
    assert template_mode(str(file)) == "pairwise"
    file.write_text("A: {answer_a}\nB: {answer_b}")
    with pytest.raises(BadInput, match=r"missing the placeholder \{question\}"):
        load_verdict_template(str(file), "pairwise")
    file.write_text("{question} {answer} {answer_a}")
    with pytest.raises(BadInput, match=r"unknown placeholder \{answer_a\}"):
        load_verdict_template(str(file), "rating")


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("Assistant A is clearer.\n[[A]]", "first"),
        ('Format: "[[A]]" if A... My verdict: [[B]]', "second"),
        ("[[C]]", "tie"),
        ("[[ B ]]", "second"),
        ("I cannot decide.", None),
        ("[[D]]", None),
    ],
)
def test_the_last_verdict_mark_is_the_verdict(reply, verdict):
    assert parse_verdict(reply) == verdict


def test_verdict_and_rating_tokens_are_read_after_the_last_brackets():
    def choice(tokens, top):
        content = [{"token": t, "logprob": 0.0, "top_logprobs": []} for t in tokens]
        content[tokens.index("X")]["top_logprobs"] = [
            {"token": t, "logprob": math.log(p)} for t, p in top
        ]
        return {"logprobs": {"content": content}}

    probs = verdict_token_probabilities(
        choice(["Say [[", "A", "]] or ", "[[", "X", "]]"], [("A", 0.6), (" B", 0.3), ("x", 0.1)])
    )
    assert probs == pytest.approx({"first": 0.6 / 0.9, "second": 0.3 / 0.9, "tie": 0.0})
    expected = rating_token_expectation(
        choice(["Rating: [[", "X", "]]"], [("8", 0.5), ("9", 0.25), ("10", 0.25)]), 1, 10
    )
    assert expected == pytest.approx(8 * 0.5 + 9 * 0.25 + 10 * 0.25)
    assert verdict_token_probabilities({"message": {"content": "[[A]]"}}) is None


@pytest.mark.parametrize("samples", [1, 3])
def test_a_rating_judge_scores_the_mean_of_its_parsed_ratings(samples, fake_openai):
    server = fake_openai()  # answers the rating prompt with "Rating: [[k]]"
    judge = LlmJudgeRM(
        JudgeRMOptions(
            base_url=server.base_url,
            api_key_env=KEY_ENV,
            model="m",
            mode="rating",
            samples=samples,
            logprobs=False,
        )
    )
    prompt = Prompt("p", "What is up?")
    answers = ["the sky", "not much, thanks"]
    scores = judge.score([(prompt, Response(f"r{i}", "p", None, a)) for i, a in enumerate(answers)])
    assert scores == [
        pytest.approx(sum(judge_score(a, j) for j in range(samples)) / samples) for a in answers
    ]
    assert not judge.judges_pairs()
