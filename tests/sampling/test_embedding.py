"""The offline TF-IDF/LSA embedder."""

from __future__ import annotations

import numpy as np
import pytest

from rmaudit.benchmark.embedding import tfidf_lsa
from rmaudit.benchmark.sampling import kdpp
from rmaudit.components import Prompt
from rmaudit.default_plugins.embedders import TfidfLsa
from rmaudit.errors import BadInput

TOPICS = {
    "cooking": [
        "How long should I bake sourdough bread at high temperature?",
        "What flour is best for a chewy sourdough loaf?",
        "Give me a recipe for tomato soup with roasted garlic.",
    ],
    "code": [
        "How do I sort a list of dictionaries by key in Python?",
        "Explain Python list comprehensions with an example.",
        "Why does my Rust program fail the borrow checker?",
    ],
    "travel": [
        "Plan a three day itinerary for Kyoto in autumn.",
        "Which train pass should I buy for travelling around Japan?",
        "What should I pack for a winter hiking trip in Norway?",
    ],
}
CORPUS = [text for texts in TOPICS.values() for text in texts]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_shape_is_capped_by_texts_and_vocabulary():
    assert tfidf_lsa(CORPUS, dims=4).shape == (9, 4)
    # Nine texts allow at most nine SVD directions.
    assert tfidf_lsa(CORPUS, dims=64).shape == (9, 9)
    # Three terms ("cats", "dogs", "dogs cats") allow three directions.
    assert tfidf_lsa(["cats", "dogs", "cats", "dogs cats"], dims=64).shape == (4, 3)


def test_single_term_vocabulary_gives_one_dimension():
    vectors = tfidf_lsa(["hello", "Hello!"])
    assert vectors.shape == (2, 1)
    np.testing.assert_allclose(np.abs(vectors), 1.0)


def test_rows_have_unit_norm_and_float64():
    vectors = tfidf_lsa(CORPUS, dims=5)
    assert vectors.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-12)


def test_text_of_stop_words_only_is_a_zero_row():
    vectors = tfidf_lsa([*CORPUS, "the and of it"], dims=5)
    assert np.linalg.norm(vectors[-1]) == 0.0
    np.testing.assert_allclose(np.linalg.norm(vectors[:-1], axis=1), 1.0, atol=1e-12)


def test_near_duplicates_are_closer_than_unrelated_texts():
    original = "How do I sort a list of dictionaries by key in Python?"
    near_duplicate = "how do i sort a list of dictionaries by a key in python"
    texts = [*CORPUS, near_duplicate]
    vectors = tfidf_lsa(texts, dims=8)
    anchor = vectors[texts.index(original)]
    duplicate_similarity = cosine(anchor, vectors[-1])
    unrelated = [cosine(anchor, vectors[texts.index(t)]) for t in TOPICS["travel"]]
    assert duplicate_similarity > 0.95
    assert duplicate_similarity > max(unrelated) + 0.5


def test_deterministic_for_a_seed():
    assert np.array_equal(tfidf_lsa(CORPUS, dims=5, seed=3), tfidf_lsa(CORPUS, dims=5, seed=3))


def test_embeddings_feed_kdpp():
    picked = kdpp(tfidf_lsa(CORPUS, dims=8), 3, seed=0)
    assert picked.size == 3 == len(set(picked.tolist()))
    assert 0 <= picked.min() and picked.max() < len(CORPUS)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"texts": "one string"}, "texts"),
        ({"texts": []}, "texts"),
        ({"texts": ["fine", 3]}, "texts[1]"),
        ({"texts": ["the", "and of"]}, "texts"),  # nothing but stop words
        ({"texts": CORPUS, "dims": 0}, "dims"),
        ({"texts": CORPUS, "dims": 2.5}, "dims"),
        ({"texts": CORPUS, "dims": True}, "dims"),
        ({"texts": CORPUS, "seed": -1}, "seed"),
    ],
)
def test_invalid_input_is_rejected(kwargs, field):
    texts = kwargs.pop("texts")
    with pytest.raises(BadInput, match="expected .*got") as info:
        tfidf_lsa(texts, **kwargs)
    assert info.value.field == field


@pytest.mark.parametrize("turns", [1, 2, 3])
@pytest.mark.parametrize("dims", [2, 4, 50])
def test_max_prompt_dims_bounds_the_embedding_before_embedding(turns, dims):
    """The plan's check needs an upper bound on what ``embed_prompts`` returns; with one text
    per prompt it is tight at the option, and multi-turn prompts concatenate one per turn."""
    embedder = TfidfLsa(TfidfLsa.Options(dims=dims))
    prompts = [
        Prompt(str(i), text, {"turns": [text, *CORPUS[i + 1 : i + turns]]} if turns > 1 else {})
        for i, text in enumerate(CORPUS[:6])
    ]
    bound = embedder.max_prompt_dims(prompts)
    assert bound == min(dims, len(prompts)) * turns
    assert embedder.embed_prompts(prompts).shape[1] <= bound
    if dims <= 4 and turns == 1:
        assert embedder.embed_prompts(prompts).shape[1] == bound
