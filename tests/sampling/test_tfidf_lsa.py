"""rmaudit's own TF-IDF and truncated SVD give scikit-learn's embeddings bit for bit (issue 50).

Until rmaudit stopped importing scikit-learn to embed prompts, ``tfidf_lsa`` was
``TfidfVectorizer(sublinear_tf=True, stop_words="english", ngram_range=(1, 2), min_df=1)``,
then ``TruncatedSVD(n_components=width, random_state=seed)``, then ``normalize``; a stored
selection's k-DPP draw depends on those vectors, so the replacement must give the same ones.
Here that pipeline, written as it was, is the reference for corpora that take each path: more
terms than texts (the SVD of the transpose) and fewer, a single term, texts of stop words
only, repeated texts, non-ASCII words, and the built-in prompts the main job draws from.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from rmaudit.backends.simulated import builtin_prompts
from rmaudit.benchmark.embedding import tfidf_lsa
from rmaudit.benchmark.sampling import kdpp
from rmaudit.benchmark.stop_words import ENGLISH_STOP_WORDS

sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")
sklearn_svd = pytest.importorskip("sklearn.decomposition")
sklearn_preprocessing = pytest.importorskip("sklearn.preprocessing")


def scikit_learn_lsa(texts: list[str], dims: int, seed: int) -> np.ndarray:
    """rmaudit's embedder as it was (commit 0a925cb), on scikit-learn."""
    tfidf = sklearn_text.TfidfVectorizer(
        sublinear_tf=True, stop_words="english", ngram_range=(1, 2), min_df=1
    ).fit_transform(texts)
    width = min(dims, tfidf.shape[0], tfidf.shape[1])
    if tfidf.shape[1] < 2:
        reduced = tfidf.toarray()
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            svd = sklearn_svd.TruncatedSVD(n_components=width, random_state=seed)
            reduced = svd.fit_transform(tfidf)
    return sklearn_preprocessing.normalize(reduced).astype(np.float64, copy=False)


def random_corpus(seed: int, texts: int, vocabulary: int, longest: int) -> list[str]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocabulary)] + ["the", "and", "über", "café", "数据"]
    lengths = [rng.randint(1, longest) for _ in range(texts)]
    return [" ".join(rng.choice(words) for _ in range(n)) for n in lengths]


BUILT_IN = [p["text"] for p in builtin_prompts()]
CASES = {
    "built-in prompts, the main job's embedding": (BUILT_IN, 256, 0),
    "built-in prompts, 64 dims, another seed": (BUILT_IN, 64, 7),
    "a few built-in prompts, repeated": (BUILT_IN[:7] * 3, 12, 1),
    "fewer terms than texts": (random_corpus(1, 300, 9, 6), 16, 2),
    "more terms than texts": (random_corpus(2, 40, 400, 30), 30, 3),
    "one term": (["hello", "Hello!", "hello hello"], 8, 0),
    "a text of stop words only": (["sort a list in python", "the and of", "bake bread"], 8, 0),
}


@pytest.mark.parametrize(("texts", "dims", "seed"), CASES.values(), ids=CASES.keys())
def test_the_same_vectors_as_scikit_learn(texts, dims, seed):
    ours, theirs = tfidf_lsa(texts, dims=dims, seed=seed), scikit_learn_lsa(texts, dims, seed)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert np.array_equal(ours, theirs)  # bit for bit, not to a tolerance


def test_the_same_k_dpp_draw_on_the_main_jobs_pool():
    ours, theirs = tfidf_lsa(BUILT_IN, dims=256), scikit_learn_lsa(BUILT_IN, 256, 0)
    assert kdpp(ours, 100, seed=0).tolist() == kdpp(theirs, 100, seed=0).tolist()


def test_the_stop_words_are_scikit_learns():
    assert sklearn_text.ENGLISH_STOP_WORDS == ENGLISH_STOP_WORDS
