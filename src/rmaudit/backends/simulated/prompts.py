"""The built-in prompt set and the key points every reader derives from a prompt's text.

Key points are what a good answer to a prompt contains.  For a built-in prompt they are
the hand-written ones in ``data/prompts.json``; for any other prompt (e.g. one from
Anthropic HH) they are *pseudo* key points built from the prompt's own content words.
Both the policy and the analyzer call :func:`key_points_for` with the prompt text alone,
so the judge and the reward models — which only ever see texts — agree with the policy
about what the substance of a response is.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass
from importlib import resources

from ._library import ASPECTS, NOT_TOPICAL
from ._random import Draws
from ._text import STOPWORDS, content_words, tokens


@dataclass(frozen=True)
class KeyPoint:
    """One thing a good answer says: its text, its content words and a keyword."""

    text: str
    words: frozenset[str]
    keyword: str  # the word elaborating sentences mention to refer back to this point


@functools.cache
def _records() -> tuple[dict, ...]:
    data = (
        resources.files("rmaudit.backends.simulated")
        .joinpath("data/prompts.json")
        .read_text("utf-8")
    )
    return tuple(json.loads(data))


@functools.cache
def _records_by_text() -> dict[str, dict]:
    return {record["text"]: record for record in _records()}


def builtin_prompts() -> list[dict]:
    """The built-in helpfulness prompts (simulated world), as fresh copies of the records.

    Each record has ``id``, ``text``, ``topic``, ``task_type`` and ``key_points``.
    """
    return [copy.deepcopy(record) for record in _records()]


def builtin_record(prompt_text: str) -> dict | None:
    """The built-in record whose text is exactly ``prompt_text`` (outer whitespace ignored)."""
    return _records_by_text().get(prompt_text.strip())


def _key_point(text: str, keyword: str | None = None) -> KeyPoint:
    words = frozenset(content_words(tokens(text)))
    if keyword is None:
        # The longest word is usually the most specific one of the point; adverbs and
        # numbers make poor handles for a follow-up sentence.
        ordered = [w for w in dict.fromkeys(tokens(text)) if w in words]
        handles = [w for w in ordered if w.isalpha() and not w.endswith("ly")] or ordered
        keyword = max(handles, key=len, default="point")
    return KeyPoint(text=text, words=words, keyword=keyword)


_FALLBACK_WORDS = ("goal", "timeline", "budget", "options")
_NOT_KEY_WORDS = STOPWORDS | NOT_TOPICAL


def _derived_key_points(prompt_text: str) -> tuple[KeyPoint, ...]:
    """Pseudo key points for a prompt without hand-written ones.

    The prompt's longest distinct content words (specific words carry the topic) are each
    paired with a generic aspect of a helpful answer; which aspects, and how many (4 to 6),
    is a deterministic function of the prompt text.
    """
    seen: dict[str, None] = {}
    for word in tokens(prompt_text):
        if word.isalpha() and len(word) > 2 and word not in _NOT_KEY_WORDS:
            seen.setdefault(word, None)
    words = sorted(seen, key=len, reverse=True)[:6]  # stable sort keeps first occurrence first
    words += [w for w in _FALLBACK_WORDS if w not in words][: max(0, 4 - len(words))]
    draws = Draws("derived-key-points", prompt_text)
    aspects = draws.sample(ASPECTS, draws.integer(4, 6))
    return tuple(
        _key_point(aspect.format(w=words[i % len(words)]), keyword=words[i % len(words)])
        for i, aspect in enumerate(aspects)
    )


@functools.lru_cache(maxsize=4096)
def key_points_for(prompt_text: str) -> tuple[KeyPoint, ...]:
    """The key points of ``prompt_text``: hand-written for built-ins, derived otherwise."""
    record = builtin_record(prompt_text)
    if record is not None:
        return tuple(_key_point(text) for text in record["key_points"])
    return _derived_key_points(prompt_text)


_TASK_RULES = (
    ("rewrite", re.compile(r"\b(rewrite|rephrase|reword|edit|proofread)\b")),
    (
        "code",
        re.compile(
            r"\bwrite an? (python |javascript |sql |bash )?"
            r"(function|script|query|program)\b"
        ),
    ),
    ("compare", re.compile(r"\b(vs\.?|versus|difference between|compare|or an?)\b")),
    ("brainstorm", re.compile(r"\b(ideas?|brainstorm|suggestions)\b")),
    ("plan", re.compile(r"\b(plan|schedule|itinerary|routine)\b")),
    ("how-to", re.compile(r"\b(how (do|can|should|would) (i|you|we)|how to|steps)\b")),
    ("recommend", re.compile(r"\b(recommend|should i|what should|best)\b")),
    ("explain", re.compile(r"\b(why|what is|what's|what are|explain|how does)\b")),
)


def task_type_for(prompt_text: str) -> str:
    """The task type: the built-in record's, else guessed from the wording."""
    record = builtin_record(prompt_text)
    if record is not None:
        return record["task_type"]
    lowered = prompt_text.lower()
    for task_type, pattern in _TASK_RULES:
        if pattern.search(lowered):
            return task_type
    return "general"
