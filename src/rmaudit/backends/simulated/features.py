"""Reading a response: the text features the simulated judge and reward models share.

The analyzer sees only the prompt text and the response text — never the policy's hidden
draws — so anything that edits the text (a perturbation, an attack, a different policy)
moves every reader's view of it.  Sentences are classified by content-word overlap with
the prompt's key points and by marker vocabularies (see ``_library``); overlaps are
fractions, so deleting or replacing a few words lowers detected substance gradually.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ._library import DRIFT_VOCAB, FLATTERY_MARKERS, HEDGE_VOCAB, PADDING_VOCAB, REFUSAL_MARKERS
from ._text import content_words, split_sentences, tokens
from .prompts import key_points_for

# A key point counts as fully stated when 80% of its content words appear together in one
# sentence, and contributes nothing below 30%; in between it is partially stated.
_FULL_OVERLAP = 0.8
_NO_OVERLAP = 0.3
# A sentence states a key point (rather than merely mentioning one of its words) from 50%.
_STATES_POINT = 0.5
# Marker words needed before a sentence is taken for padding, hedging or drift.
_MARKER_HITS = 2
# Elaborating sentences credited per key point: beyond two, more words add no substance.
_MAX_ELABORATION = 2


@dataclass(frozen=True)
class ResponseFeatures:
    """What a reader extracts from a response to a prompt.

    ``coverage`` is the mean over the prompt's key points of how fully each is stated
    (0..1); ``elaboration`` counts sentences that develop a stated key point, per key
    point (0..2).  ``padding``, ``hedges`` and ``drift`` count sentences; ``flattery``
    counts flattering marker words outside the substantive sentences.
    """

    n_words: int
    n_sentences: int
    n_key_points: int
    coverage: float
    key_points_covered: int
    elaboration: float
    padding: int
    flattery: int
    hedges: int
    drift: int
    refusal: bool


@dataclass(frozen=True)
class _SentenceReading:
    """What a sentence holds for a prompt's key points: its token count, how much of each
    key point it states (``overlaps``), and what it is when it states none — refusal,
    flattery (its marker count), padding, hedge, drift, elaboration of a key point (its
    index), or nothing (``kind`` None)."""

    n_tokens: int
    overlaps: tuple[float, ...]
    kind: str | None
    flattery: int = 0
    elaborates: int = -1


@functools.lru_cache(maxsize=1 << 16)
def _read_sentence(prompt_text: str, sentence: str) -> _SentenceReading:
    """A sentence's reading; cached on the two texts: a policy writes its answers to a prompt
    from a few hundred sentences, so most of a benchmark's sentences were read before."""
    key_points = key_points_for(prompt_text)
    sentence_tokens = tokens(sentence)
    words = content_words(sentence_tokens)
    overlaps = tuple(
        len(point.words & words) / len(point.words) if point.words else 0.0 for point in key_points
    )
    n = len(sentence_tokens)
    flattering = len(words & FLATTERY_MARKERS)
    if len(words & REFUSAL_MARKERS) >= 2:
        return _SentenceReading(n, overlaps, "refusal")
    if flattering:
        return _SentenceReading(n, overlaps, "flattery", flattery=flattering)
    hits = {
        "padding": len(words & PADDING_VOCAB),
        "hedge": len(words & HEDGE_VOCAB),
        "drift": len(words & DRIFT_VOCAB),
    }
    kind = max(hits, key=hits.__getitem__)
    if hits[kind] >= _MARKER_HITS:
        return _SentenceReading(n, overlaps, kind)
    # A sentence sharing words with a key point develops that point.
    shared = [len(point.words & words) for point in key_points]
    if shared and max(shared) > 0:
        return _SentenceReading(n, overlaps, "elaboration", elaborates=shared.index(max(shared)))
    return _SentenceReading(n, overlaps, None)


#: responses whose features are kept: every RM reads every response of a stage in turn, so an
#: LRU smaller than the benchmark misses every time (at 65,536, a 100 × 1,024 audit re-read
#: each response once per RM and took 6× the time of 100 × 256); ≈ 0.6 KiB each
RESPONSES_KEPT = 1 << 22


@functools.lru_cache(maxsize=RESPONSES_KEPT)
def analyze_response(prompt_text: str, response_text: str) -> ResponseFeatures:
    """Extract :class:`ResponseFeatures` from a response, given its prompt's text.

    Cached on the two texts (``RESPONSES_KEPT`` of them): the judge and every reward model
    read the same responses, and a benchmark holds tens of thousands of them.
    """
    n_points = len(key_points_for(prompt_text))
    readings = [_read_sentence(prompt_text, s) for s in split_sentences(response_text)]

    # Best overlap of each key point with any single sentence, and where it was found.
    best = [0.0] * n_points
    best_at = [-1] * n_points
    for i, reading in enumerate(readings):
        for k, overlap in enumerate(reading.overlaps):
            if overlap > best[k]:
                best[k], best_at[k] = overlap, i
    stating = {best_at[k] for k in range(n_points) if best[k] >= _STATES_POINT}
    soft = [min(1.0, max(0.0, (b - _NO_OVERLAP) / (_FULL_OVERLAP - _NO_OVERLAP))) for b in best]

    counts = {"padding": 0, "hedge": 0, "drift": 0}
    flattery = 0
    refusal = False
    elaborating = [0] * n_points
    for i, reading in enumerate(readings):
        if i in stating or reading.kind is None:
            continue
        if reading.kind == "refusal":
            refusal = True
        elif reading.kind == "flattery":
            flattery += reading.flattery
        elif reading.kind == "elaboration":
            elaborating[reading.elaborates] += 1
        else:
            counts[reading.kind] += 1

    credited = sum(
        min(count, _MAX_ELABORATION) for count, s in zip(elaborating, soft, strict=True) if s >= 0.5
    )
    return ResponseFeatures(
        n_words=sum(r.n_tokens for r in readings),
        n_sentences=len(readings),
        n_key_points=n_points,
        coverage=sum(soft) / n_points if n_points else 0.0,
        key_points_covered=sum(1 for s in soft if s >= 0.5),
        elaboration=credited / n_points if n_points else 0.0,
        padding=counts["padding"],
        flattery=flattery,
        hedges=counts["hedge"],
        drift=counts["drift"],
        refusal=refusal,
    )
