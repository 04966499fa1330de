"""The ``verifiable`` oracle: references from prompt metadata, scores, options, conformance."""

from __future__ import annotations

import json

import pytest

from rmaudit.components import Prompt, Response
from rmaudit.components.keys import prompt_id
from rmaudit.errors import BadInput
from rmaudit.recipe import component_spec, validate_options
from rmaudit.testing import check_oracle
from rmaudit_verifiable.plugin import VerifiableAnswer


def build(**raw):
    return VerifiableAnswer(
        validate_options(VerifiableAnswer, raw, field="oracle", file=None, base_dir=None)
    )


def prompt(text, **meta):
    return Prompt(prompt_id(text), text, meta)


def response(p, text, i=0):
    return Response(f"{p.id}-{i}", p.id, i, text)


ARITHMETIC = prompt("What is 17 + 25?", reference="42")
CHOICE = prompt("Largest planet? (A) Mars (B) Jupiter", reference="B")
CAPITAL = prompt("Capital of France?", reference="Paris")
MT_BENCH = prompt("Solve 3x = 12.", reference=["x = 4", "second-turn reference"], category="math")


def scores(oracle, pairs):
    return [label.score for label in oracle.label(pairs)]


def test_scores_correct_and_wrong_answers_of_each_kind():
    oracle = VerifiableAnswer()
    pairs = [
        (ARITHMETIC, response(ARITHMETIC, "17 + 25 = 42")),
        (ARITHMETIC, response(ARITHMETIC, "The answer is 41.")),
        (CHOICE, response(CHOICE, "It is (B), Jupiter.")),
        (CHOICE, response(CHOICE, "Answer: A")),
        (CAPITAL, response(CAPITAL, "The answer is Paris.")),
        (CAPITAL, response(CAPITAL, "I think it might be Lyon or Paris")),
        (MT_BENCH, response(MT_BENCH, "Dividing by 3: \\boxed{4}")),
        (MT_BENCH, response(MT_BENCH, "")),
    ]
    assert scores(oracle, pairs) == [10.0, 1.0, 10.0, 1.0, 10.0, 1.0, 10.0, 1.0]
    assert oracle.label(pairs[:1])[0].samples == (10.0,)


def test_score_values_and_kind_are_options():
    oracle = build(correct=1.0, wrong=0.0, kind="exact")
    # "exact" compares the whole normalised answer, so "17 + 25 = 42" no longer matches "42"
    assert scores(
        oracle,
        [
            (ARITHMETIC, response(ARITHMETIC, "17 + 25 = 42")),
            (ARITHMETIC, response(ARITHMETIC, "Answer: 42")),
        ],
    ) == [0.0, 1.0]


def test_reference_field_and_index_are_options():
    p = prompt("Half of 3?", gold=[["unused"], "1.5"])
    oracle = build(reference_field="gold", reference_index=1, abs_tol=0.01)
    assert scores(oracle, [(p, response(p, "about 1.499")), (p, response(p, "2"))]) == [10.0, 1.0]


@pytest.mark.parametrize(
    "meta, field, message",
    [
        ({}, "reference_field", "expected a reference answer"),
        ({"reference": ""}, "reference_field", "expected a reference answer"),
        ({"reference": None}, "reference_field", "expected a reference answer"),
        ({"reference": []}, "reference_index", "expected at least 1 reference answers"),
    ],
)
def test_a_prompt_without_a_reference_is_bad_input(meta, field, message):
    p = prompt("What is 2 + 2?", **meta)
    with pytest.raises(BadInput, match=message) as error:
        VerifiableAnswer().label([(p, response(p, "4"))])
    assert error.value.field == field and "What is 2 + 2?" in str(error.value)


@pytest.mark.parametrize(
    "raw, field",
    [
        ({"correct": 1.0, "wrong": 1.0}, "oracle"),
        ({"correct": float("inf")}, "oracle"),
        ({"kind": "regex"}, "oracle.kind"),
        ({"abs_tol": -1}, "oracle.abs_tol"),
        ({"referense_field": "x"}, "oracle.referense_field"),
    ],
)
def test_bad_options_are_located_bad_input(raw, field):
    with pytest.raises(BadInput) as error:
        build(**raw)
    assert error.value.field == field


def test_passes_the_conformance_kit():
    pairs = [
        (p, response(p, text, i))
        for i, (p, text) in enumerate(
            [
                (ARITHMETIC, "42"),
                (ARITHMETIC, "The answer is 41."),
                (CHOICE, "(B)"),
                (CAPITAL, "answer: paris"),
                (MT_BENCH, "x = 4"),
            ]
        )
    ]
    check_oracle(VerifiableAnswer, pairs)
    check_oracle(build(correct=1.0, wrong=0.0), pairs)


def test_reads_meta_fields_of_the_builtin_jsonl_source(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text(json.dumps({"prompt": "What is 6 * 7?", "reference": 42}) + "\n")
    source = component_spec(
        "prompt_source",
        {"name": "jsonl", "path": str(path)},
        field="source",
        file=None,
        base_dir=tmp_path,
    ).build()
    ((text, meta),) = source.load()
    p = Prompt(prompt_id(text), text, meta)
    assert scores(VerifiableAnswer(), [(p, response(p, "It is 42."))]) == [10.0]
