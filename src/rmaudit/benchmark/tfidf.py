"""TF-IDF of prompt texts over word uni- and bigrams, for the offline embedder
(``benchmark/embedding.py``).

The weighting is scikit-learn's ``TfidfVectorizer(sublinear_tf=True, stop_words="english",
ngram_range=(1, 2), min_df=1)``, which rmaudit used until it stopped importing scikit-learn:
tokens of two or more word characters, lower-cased, English stop words removed, then every
token and every pair of neighbours; a term's weight in a text is ``(1 + ln tf) ·
(1 + ln((1 + n) / (1 + df)))``, each text's row scaled to unit length.  The matrix is also
*stored* as that vectorizer stores it — terms numbered alphabetically, each row's entries in
the order the terms first occur in the corpus — because the truncated SVD that follows sums
each row's products in storage order, and equal embeddings need equal sums to the last bit
(tests/sampling/test_tfidf_lsa.py compares both with scikit-learn's).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from .stop_words import ENGLISH_STOP_WORDS

_TOKEN = re.compile(r"(?u)\b\w\w+\b")


def terms(text: str) -> list[str]:
    """A text's terms in order: its tokens that are not stop words, then each neighbouring
    pair of them joined by a space."""
    tokens = [t for t in _TOKEN.findall(text.lower()) if t not in ENGLISH_STOP_WORDS]
    return tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)]


def tfidf_matrix(texts: Sequence[str]):  # -> scipy.sparse.csr_array
    """The TF-IDF matrix of ``texts`` (one row each, one column per term), or None where no
    text has a term."""
    from scipy import sparse  # loaded when prompts are embedded, not on a rerun

    first_seen: dict[str, int] = {}  # term → its number in order of first occurrence
    columns: list[int] = []
    counts: list[int] = []
    indptr = [0]
    for text in texts:
        in_text: dict[int, int] = {}
        for term in terms(text):
            number = first_seen.setdefault(term, len(first_seen))
            in_text[number] = in_text.get(number, 0) + 1
        for number in sorted(in_text):
            columns.append(number)
            counts.append(in_text[number])
        indptr.append(len(columns))
    if not first_seen:
        return None
    alphabetical = np.empty(len(first_seen), dtype=np.int32)
    for rank, (_, number) in enumerate(sorted(first_seen.items())):
        alphabetical[number] = rank
    indices = alphabetical.take(np.asarray(columns, dtype=np.int32))
    data = np.asarray(counts, dtype=np.float64)
    n_texts = len(texts)
    document_frequency = np.bincount(indices, minlength=len(first_seen)).astype(np.float64)
    document_frequency += 1.0  # smoothed: as if one more text held every term once
    idf = np.full_like(document_frequency, fill_value=n_texts + 1, dtype=np.float64)
    idf /= document_frequency
    np.log(idf, out=idf)
    idf += 1.0
    np.log(data, data)
    data += 1.0
    data *= idf[indices]
    bounds = np.asarray(indptr, dtype=np.int32)
    _unit_rows(data, bounds)
    return sparse.csr_array((data, indices, bounds), shape=(n_texts, len(first_seen)))


def _unit_rows(data: np.ndarray, bounds: np.ndarray) -> None:
    """Scale each row's entries to unit length, in place, summing their squares one by one
    in storage order (as scikit-learn's ``inplace_csr_row_normalize_l2`` does)."""
    values = data.tolist()
    for start, end in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        total = 0.0
        for value in values[start:end]:
            total += value * value
        if total != 0.0:
            data[start:end] /= math.sqrt(total)
