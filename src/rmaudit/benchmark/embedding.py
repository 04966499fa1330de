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

from .tfidf import tfidf_matrix

__all__ = ["tfidf_lsa"]


def tfidf_lsa(texts: Sequence[str], *, dims: int = 64, seed: int = 0) -> np.ndarray:
    """Embed ``texts`` as L2-normalised LSA vectors of their TF-IDF representation.

    TF-IDF over unigrams and bigrams (sublinear term frequency ``1 + log tf``, English stop
    words removed, every term kept: ``benchmark/tfidf.py``), then a truncated SVD
    (randomised, seeded: :func:`_randomized_svd`) onto the top singular directions, then each
    row scaled to unit length so that dot products are cosine similarities, which is what the
    k-DPP kernel ``E Eᵀ`` compares.  The same vectors as scikit-learn's ``TfidfVectorizer``
    and ``TruncatedSVD(random_state=seed)``, which rmaudit used before, to the last bit.

    The width is ``min(dims, len(texts), number of TF-IDF terms)``: an SVD has no more
    directions than that.  A text with no term left after stop-word removal (or whose
    projection is zero) stays a zero row, since it has no direction to normalise.

    Args:
        texts: the prompts, one string each (at least one).
        dims: the most dimensions to keep (≥ 1).
        seed: seed of the randomised SVD's Gaussian start; the same seed gives the same
            vectors.

    Returns:
        ``float64`` array of shape ``(len(texts), width)``.

    Raises:
        BadInput: ``texts`` not a non-empty sequence of strings, no text with a usable
            term, ``dims`` not an integer ≥ 1, ``seed`` not an integer ≥ 0.
    """
    texts = _check_texts(texts)
    dims = _check_int(dims, "dims", minimum=1)
    seed = _check_int(seed, "seed", minimum=0)
    tfidf = tfidf_matrix(texts)
    if tfidf is None:
        raise BadInput(
            "expected at least one text with a word that is not an English stop word, got none",
            field="texts",
        )
    width = min(dims, tfidf.shape[0], tfidf.shape[1])
    if tfidf.shape[1] < 2:  # a one-term vocabulary is already one-dimensional
        reduced = tfidf.toarray()
    else:
        reduced = tfidf @ _randomized_svd(tfidf, width, np.random.RandomState(seed)).T
    norms = np.sqrt(np.einsum("ij,ij->i", reduced, reduced))
    norms[norms < 10 * np.finfo(np.float64).eps] = 1.0  # a zero row stays zero
    reduced /= norms[:, None]
    return reduced


def _randomized_svd(matrix: Any, width: int, random: np.random.RandomState) -> np.ndarray:
    """The ``width`` right singular vectors (rows) of the sparse ``matrix``, approximated as
    Halko, Martinsson and Tropp ("Finding structure with randomness", SIAM Review 2011,
    Alg. 4.4 with LU normalisation, as scikit-learn's ``randomized_svd``) with 10 extra
    directions and 5 power iterations; each sign chosen so that the row's largest entry is
    positive.  The same operations in the same order as scikit-learn's ``TruncatedSVD``, so
    the same vectors bit for bit."""
    import scipy.linalg

    transpose = matrix.shape[0] < matrix.shape[1]
    operand = matrix.T if transpose else matrix
    sketch = random.normal(size=(operand.shape[1], width + 10))
    for _ in range(5):
        sketch, _ = scipy.linalg.lu(operand @ sketch, permute_l=True, check_finite=False)
        sketch, _ = scipy.linalg.lu(operand.T @ sketch, permute_l=True, check_finite=False)
    sketch, _ = scipy.linalg.qr(operand @ sketch, mode="economic", check_finite=False)
    small_u, _, small_vt = scipy.linalg.svd(
        sketch.T @ operand, full_matrices=False, lapack_driver="gesdd"
    )
    if transpose:
        vectors = (sketch @ small_u)[:, :width].T
    else:
        vectors = small_vt[:width, :]
    largest = np.argmax(np.abs(vectors), axis=1)
    signs = np.sign(vectors[np.arange(vectors.shape[0]), largest])
    vectors *= signs[:, np.newaxis]
    return vectors


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
