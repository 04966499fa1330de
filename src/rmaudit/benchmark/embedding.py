"""The offline default prompt embedder: TF-IDF followed by latent semantic analysis (LSA).

The k-DPP prompt sampler (``rmaudit.benchmark.sampling.kdpp``, RETA paper (arXiv 2504.14838) Sec.
3.3) needs one embedding per prompt.  The paper uses OpenAI's text-embedding-3-large; this embedder
needs no network, no model download and no GPU, so it is what a recipe gets when it names no
embedder. It captures shared vocabulary, not paraphrase, so for a real audit prefer a neural
embedder.

>>> from rmaudit.benchmark.embedding import tfidf_lsa
>>> vectors = tfidf_lsa(["sort a list in python", "sort a python list", "bake sourdough bread"])
>>> vectors.shape
(3, 3)
>>> bool(vectors[0] @ vectors[1] > vectors[0] @ vectors[2])
True
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from rmaudit.errors import BadInput

__all__ = ["tfidf_lsa"]


def tfidf_lsa(texts: Sequence[str], *, dims: int = 64, seed: int = 0) -> np.ndarray:
    """Embed ``texts`` as L2-normalised LSA vectors of their TF-IDF representation.

    TF-IDF over unigrams and bigrams (sublinear term frequency ``1 + log tf``, English stop
    words removed, every term kept: ``min_df=1``), then a truncated SVD (randomised, seeded)
    onto the top singular directions, then each row scaled to unit length so that dot
    products are cosine similarities, which is what the k-DPP kernel ``E Eᵀ`` compares.

    The width is ``min(dims, len(texts), number of TF-IDF terms)``: an SVD has no more
    directions than that.  A text with no term left after stop-word removal (or whose
    projection is zero) stays a zero row, since it has no direction to normalise.

    Args:
        texts: the prompts, one string each (at least one).
        dims: the most dimensions to keep (≥ 1).
        seed: ``random_state`` of the randomised SVD; the same seed gives the same vectors.

    Returns:
        ``float64`` array of shape ``(len(texts), width)``.

    Raises:
        BadInput: ``texts`` not a non-empty sequence of strings, no text with a usable
            term, ``dims`` not an integer ≥ 1, ``seed`` not an integer ≥ 0.
    """
    texts = _check_texts(texts)
    dims = _check_int(dims, "dims", minimum=1)
    seed = _check_int(seed, "seed", minimum=0)
    # scikit-learn loads only when prompts are embedded, not on a rerun that reuses a selection
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.preprocessing import normalize

    vectorizer = TfidfVectorizer(
        sublinear_tf=True, stop_words="english", ngram_range=(1, 2), min_df=1
    )
    try:
        tfidf = vectorizer.fit_transform(texts)
    except ValueError:  # scikit-learn's "empty vocabulary"
        raise BadInput(
            "expected at least one text with a word that is not an English stop word, got none",
            field="texts",
        ) from None

    width = min(dims, tfidf.shape[0], tfidf.shape[1])
    if tfidf.shape[1] < 2:
        # TruncatedSVD needs two features; a one-term vocabulary is already one-dimensional.
        reduced = tfidf.toarray()
    else:
        # texts with one and the same terms have no variance: the SVD's explained-variance
        # ratio (unused here) divides 0 by 0 and numpy would warn on stderr
        with np.errstate(invalid="ignore", divide="ignore"):
            reduced = TruncatedSVD(n_components=width, random_state=seed).fit_transform(tfidf)
    return normalize(reduced).astype(np.float64, copy=False)


def _check_texts(texts: Any) -> list[str]:
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise BadInput(f"expected a sequence of strings, got {type(texts).__name__}", field="texts")
    if len(texts) == 0:
        raise BadInput("expected at least one text, got an empty sequence", field="texts")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise BadInput(f"expected a string, got {type(text).__name__}", field=f"texts[{index}]")
    return list(texts)


def _check_int(value: Any, field: str, *, minimum: int) -> int:
    try:
        number = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        number = None
    if number is None or number < minimum:
        raise BadInput(f"expected an integer ≥ {minimum}, got {value!r}", field=field)
    return number
