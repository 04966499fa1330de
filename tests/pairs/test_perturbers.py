"""Shift perturbers (RMs Under Distribution Shift, arXiv 2311.14743, Sec. 4.2): identity at p = 0,
edit rates, determinism, layout."""

from __future__ import annotations

import doctest
import re

import numpy as np
import pytest
from pydantic import ValidationError
from scipy.stats import binom

from rmaudit.benchmark import perturb
from rmaudit.benchmark.perturb import (
    WORD,
    char_noise,
    delete_words,
    insert_words,
    perturb_words,
    replace_words,
    vocabulary,
)
from rmaudit.errors import BadInput
from rmaudit.plugins import registered

ALL = [insert_words, delete_words, replace_words, perturb_words, char_noise]
TEXTS = [
    "I am looking forward to hearing your thoughts about whether this relationship can be fixed.",
    "Hello, world!  Two  spaces,\ttabs\nand newlines — don't drop well-known punctuation...",
    "  leading and trailing whitespace \n",
    "Ünïcödé wörds, 数字 123 and snake_case_names.",
    "!!! ??? ...",
]


def words(text):
    return WORD.findall(text)


def long_text(n_words=20_000, seed=0):
    rng = np.random.default_rng(seed)
    vocab = vocabulary()
    return " ".join(vocab[i] for i in rng.integers(len(vocab), size=n_words))


def within_binomial_99(changed, n, p):
    low, high = binom.interval(0.99, n, p)
    return low <= changed <= high


@pytest.mark.parametrize("edit", ALL)
@pytest.mark.parametrize("text", TEXTS)
def test_p_zero_is_identity(edit, text):
    assert edit(text, 0.0, seed=5) == text


@pytest.mark.parametrize("edit", ALL)
def test_empty_text(edit):
    assert edit("", 1.0, seed=0) == ""


@pytest.mark.parametrize("p", [0.05, 0.3, 0.75])
def test_insert_rate_matches_p(p):
    text = long_text()
    out = insert_words(text, p, seed=1)
    n = len(words(text))
    assert within_binomial_99(len(words(out)) - n, n, p)
    assert words(out)[0] == words(text)[0]  # insertions go after words


@pytest.mark.parametrize("p", [0.05, 0.3, 0.75])
def test_delete_rate_matches_p(p):
    text = long_text()
    out = delete_words(text, p, seed=2)
    n = len(words(text))
    assert within_binomial_99(n - len(words(out)), n, p)


@pytest.mark.parametrize("p", [0.05, 0.3, 0.75])
def test_replace_rate_matches_p(p):
    text = long_text()
    before, after = words(text), words(replace_words(text, p, seed=3))
    assert len(after) == len(before)
    changed = sum(a != b for a, b in zip(before, after, strict=True))
    assert within_binomial_99(changed, len(before), p)


def test_mixed_perturbation_uses_all_three_edits():
    text = long_text(3000)
    out = words(perturb_words(text, 1.0, seed=4))
    original = set(words(text))
    # every word was edited: a third deleted, a third replaced, a third followed by a new word
    assert len(out) == pytest.approx(len(words(text)), rel=0.1)
    kept = sum(w in original for w in out)
    assert 0.2 < kept / len(words(text)) < 0.5


@pytest.mark.parametrize("edit", ALL)
def test_deterministic_for_a_seed_and_independent_of_call_order(edit):
    a, b = TEXTS[0], TEXTS[1]
    first = (edit(a, 0.5, seed=9), edit(b, 0.5, seed=9))
    second_b, second_a = edit(b, 0.5, seed=9), edit(a, 0.5, seed=9)
    assert first == (second_a, second_b)
    assert edit(a, 0.5, seed=9) != edit(a, 0.5, seed=10)


def test_composite_seeds_differ():
    text = long_text(200)
    assert replace_words(text, 0.5, seed=(0, 1)) != replace_words(text, 0.5, seed=(1, 0))


def test_punctuation_and_newlines_survive_word_edits():
    text = TEXTS[1]
    punctuation = re.sub(r"[\w\s]|['’-]", "", text)
    for edit in (insert_words, replace_words, delete_words):
        out = edit(text, 1.0, seed=0)
        assert re.sub(r"[\w\s]|['’-]", "", out) == punctuation
        assert out.count("\n") == text.count("\n")


@pytest.mark.parametrize("seed", range(20))
def test_deletion_leaves_no_doubled_or_dangling_spaces(seed):
    text = "one two three four five six seven eight\nnine ten"
    out = delete_words(text, 0.5, seed=seed)
    assert "  " not in out and out == out.strip(" ")
    assert " \n" not in out and "\n " not in out


def test_char_noise_keeps_whitespace_and_punctuation():
    text = TEXTS[1] * 20
    out = char_noise(text, 0.5, seed=0)
    assert out != text
    keep = lambda s: "".join(c for c in s if not c.isalnum())  # noqa: E731
    assert keep(out) == keep(text)


@pytest.mark.parametrize("p", [0.1, 0.3, 0.9])
def test_char_noise_edit_rate(p):
    # a swap consumes the next character, which is then not drawn, so a character is edited
    # at rate r = p / (1 + p/3); in a run of "x" an addition appends one of 26 letters, so
    # the letters other than "x" count the additions of 25 of them: rate r/3 · 25/26
    text = "x" * 30_000
    out = char_noise(text, p, seed=7)
    rate = p / (1 + p / 3)
    assert within_binomial_99(len(out) - out.count("x"), len(text), rate / 3 * 25 / 26)


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan"), True, "0.5"])
def test_bad_probability(p):
    with pytest.raises(BadInput, match="probability"):
        replace_words("some text", p, seed=0)


def test_bad_seed():
    with pytest.raises(BadInput, match="seed"):
        delete_words("some text", 0.5, seed=-1)


def test_vocabulary_is_english_words_from_wordfreq():
    words_ = vocabulary(5000)
    assert {"the", "house", "water"} <= set(words_)
    assert all(w.isalpha() for w in words_) and len(set(words_)) == len(words_)


def test_components_registered_with_options():
    by_name = {r.cls.name: r.cls for r in registered("shift_perturber")}
    assert {"word-insert", "word-delete", "word-replace", "word-perturb", "char-noise"} <= set(
        by_name
    )
    replace = by_name["word-replace"]
    component = replace(replace.Options(p=0.5, seed=1))
    text = TEXTS[0]
    assert component.perturb(text, seed=2) == replace_words(text, 0.5, seed=(1, 2))
    assert component.perturb(text, seed=2) != component.perturb(text, seed=3)
    assert (
        by_name["word-delete"](by_name["word-delete"].Options(p=0.0)).perturb(text, seed=0) == text
    )
    assert "wordfreq" in component.identity()
    assert replace(replace.Options(p=0.5, seed=2)).key != component.key
    with pytest.raises(ValidationError):
        replace.Options(p=1.5)
    with pytest.raises(ValidationError):
        by_name["char-noise"].Options(p=0.1, vocabulary_size=10)


def test_docstring_examples_run():
    assert doctest.testmod(perturb).failed == 0
