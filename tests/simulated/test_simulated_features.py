"""The analyzer: what it recognises, and how it degrades under word-level edits."""

from __future__ import annotations

import random
import statistics
from itertools import pairwise

import pytest

from rmaudit.backends.simulated import SimulatedPolicy, analyze_response
from rmaudit.backends.simulated import _library as lib

PROMPT = "How do I make a simple vinaigrette?"


def key_point_text(prompts, text):
    return next(p for p in prompts if p["text"] == text)["key_points"]


@pytest.mark.parametrize("sentence", lib.PADDING)
def test_every_filler_sentence_reads_as_padding(sentence):
    assert analyze_response(PROMPT, sentence).padding == 1


@pytest.mark.parametrize("sentence", lib.HEDGES)
def test_every_hedge_reads_as_a_hedge(sentence):
    assert analyze_response(PROMPT, sentence).hedges == 1


@pytest.mark.parametrize("sentence", lib.DRIFT)
def test_every_aside_reads_as_drift(sentence):
    assert analyze_response(PROMPT, sentence).drift == 1


@pytest.mark.parametrize("sentence", lib.FLATTERY_OPENERS + lib.FLATTERY_MID + lib.FLATTERY_CLOSERS)
def test_every_flattering_sentence_is_counted(sentence):
    assert analyze_response(PROMPT, sentence).flattery >= 1


@pytest.mark.parametrize("sentence", lib.REFUSALS)
def test_every_refusal_is_recognised(sentence):
    assert analyze_response(PROMPT, sentence).refusal


@pytest.mark.parametrize("sentence", lib.NEUTRAL_OPENERS + lib.NEUTRAL_CLOSERS)
def test_neutral_glue_is_neither_substance_nor_a_behaviour(sentence):
    f = analyze_response(PROMPT, sentence)
    assert (f.coverage, f.padding, f.hedges, f.drift, f.flattery, f.refusal) == (
        0.0,
        0,
        0,
        0,
        0,
        False,
    )


def test_stating_every_key_point_gives_full_coverage(prompts):
    points = key_point_text(prompts, PROMPT)
    f = analyze_response(PROMPT, " ".join(p[0].upper() + p[1:] + "." for p in points))
    assert f.coverage == 1.0
    assert f.key_points_covered == f.n_key_points == len(points)
    assert analyze_response(PROMPT, "Whisk it.").coverage < 0.2


def test_key_points_are_found_from_the_prompt_text_alone(prompts):
    points = key_point_text(prompts, PROMPT)
    text = " ".join(points[:2]) + "."
    # The same response to another prompt states none of that prompt's key points.
    assert analyze_response(PROMPT, text).key_points_covered == 2
    assert analyze_response("How do I fix a leaky faucet?", text).key_points_covered == 0


def _delete_words(text: str, p: float, rng: random.Random) -> str:
    return "\n".join(
        " ".join(w for w in line.split(" ") if rng.random() >= p) for line in text.split("\n")
    )


def test_deleting_words_lowers_substance_gradually(prompts):
    rng = random.Random(0)
    policy = SimulatedPolicy()
    pairs = [
        (p["text"], policy.generate(p["text"], p, i)[0]) for p in prompts[:60] for i in range(10)
    ]
    coverage = {
        p: statistics.mean(analyze_response(q, _delete_words(t, p, rng)).coverage for q, t in pairs)
        for p in (0.0, 0.05, 0.1, 0.2, 0.3)
    }
    levels = list(coverage.values())
    assert all(a > b for a, b in pairwise(levels)), coverage
    # Gradual, not catastrophic: a light edit costs a little, a heavy one more.
    assert coverage[0.0] - coverage[0.05] < 0.05
    assert coverage[0.0] - coverage[0.3] > 0.08
    assert coverage[0.3] > 0.5 * coverage[0.0]
