"""Judge templates (rmaudit's own, MT-bench's by name, a user's file), reading verdicts and
ratings from replies and from token log-probabilities, and the rating mode against a real
server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import math

import pytest
from _api_support import KEY_ENV

from rmaudit.backends.judging.verdicts import (
    named_template,
    parse_verdict,
    rating_token_expectation,
    template_file,
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
    pair = named_template("pair-test", prompts_file)
    assert pair.mode == "pairwise"
    messages = pair.messages(question="Q?", answer_a="yes", answer_b="no")
    assert messages[0] == {"role": "system", "content": PROMPTS[0]["system_prompt"]}
    assert "yes\n[The End of Assistant A's Answer]" in messages[1]["content"]
    assert named_template("single-test", prompts_file).mode == "rating"
    # a prompt showing a reference answer does not fit a pair suite: not offered
    with pytest.raises(BadInput, match="no such judge template file or name"):
        named_template("single-math-test", prompts_file)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("A: {answer_a}\nB: {answer_b}", r"missing the placeholder \{question\}"),
        ("{question} {answer_a}", r"missing the placeholder \{answer_b\}"),
        ("{question} {answer} {reference}", r"unknown placeholder \{reference\}"),
        ("{question} {answer} {answer_a}", r"shows both \{answer\} and \{answer_a\}/"),
        ("{question} alone", "shows no answer"),
    ],
)
def test_a_users_file_must_show_one_modes_placeholders(tmp_path, text, said):
    file = tmp_path / "mine.txt"
    file.write_text(text)
    with pytest.raises(BadInput, match=said) as refused:
        template_file(file)
    assert refused.value.file == str(file)


def test_a_users_file_is_read_once_into_its_mode_text_and_digest(tmp_path):
    file = tmp_path / "mine.txt"
    file.write_bytes(b"{question}\r\nA: {answer_a}\r\nB: {answer_b}\r\n[[A]]/[[B]]/[[C]]?")
    read = template_file(file)
    assert read.mode == "pairwise" and read.file == str(file.resolve())
    assert read.sha256 == hashlib.sha256(file.read_bytes()).hexdigest()
    assert read.user == file.read_text(encoding="utf-8")  # newlines as a text read gives them
    file.write_text("Rate it.\n{question}\n{answer}")
    assert template_file(file).mode == "rating"


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


#: a user's pairwise template
PAIR_TEXT = "Which is better?\n{question}\nA: {answer_a}\nB: {answer_b}\nSay [[A]], [[B]] or [[C]]."


def test_the_audits_judge_is_the_printed_recipes_and_reads_its_template_once(tmp_path):
    from test_audit import write_llmbar

    from rmaudit.recipe import load_recipe
    from rmaudit.suites import SUITES
    from rmaudit.suites.build import recipe_text, suite_recipe, suite_table
    from rmaudit.suites.data import locate
    from rmaudit.suites.judge_arguments import JudgeFlags, read_judge_template
    from rmaudit.suites.model_arguments import model_tables

    data = tmp_path / "data"
    write_llmbar(data)
    template = tmp_path / "mine.txt"
    template.write_text(PAIR_TEXT, encoding="utf-8")
    suite = SUITES["llmbar"]
    located = locate(suite, data, download=False)
    assert located is not None
    read = read_judge_template(str(template), str(data))
    flags = JudgeFlags("http://127.0.0.1:9/v1", read, data_dir=str(data))
    table = suite_table(
        suite, located, model_tables(["judge:j"], {}, None, judge=flags), sample=None
    )
    template.unlink()  # read once: the record travels, nothing reads the file again
    recipe = suite_recipe(suite, table)
    judge = recipe.reward_models[0].build()
    assert judge.template is read and judge.template.user == PAIR_TEXT

    def run_as_a_file(text: str):
        path = tmp_path / "printed.toml"
        path.write_text(text, encoding="utf-8")
        again = load_recipe(path)
        return again.run_key, again.reward_models[0].build().key

    # the printed recipe, run as a file: the same run and the same judge
    printed = recipe_text(suite, table)
    assert f'template_file = "{template.resolve()}"' in printed
    template.write_text(PAIR_TEXT, encoding="utf-8")
    assert run_as_a_file(printed) == (recipe.run_key, judge.key)
    # the same words at another path: the same judge; other words: another
    moved = tmp_path / "elsewhere" / "moved.txt"
    moved.parent.mkdir()
    moved.write_text(PAIR_TEXT, encoding="utf-8")
    assert run_as_a_file(printed.replace(str(template.resolve()), str(moved)))[1] == judge.key
    template.write_text(PAIR_TEXT.replace("better", "more helpful"), encoding="utf-8")
    assert run_as_a_file(printed)[1] != judge.key
