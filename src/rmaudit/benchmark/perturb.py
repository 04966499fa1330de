"""Text perturbations that induce a controlled distribution shift (RMs Under Distribution Shift,
arXiv 2311.14743, Sec. 4.2).

RMs Under Distribution Shift (arXiv 2311.14743) perturbs "words with some probability (where the
perturbation is either an insertion, deletion, or replacement with a random word)"; a higher
probability p is a larger shift.  Here:

- :func:`insert_words`, :func:`delete_words`, :func:`replace_words`: each word, independently
  with probability p, gets a random word inserted after it / is deleted / is replaced by a
  different random word;
- :func:`perturb_words`: the paper's mix — each word, with probability p, gets one of those
  three edits, chosen uniformly;
- :func:`char_noise`: each letter or digit, with probability p, is swapped with a neighbour,
  dropped, or followed by a random letter (chosen uniformly; see there for the exact rate);
- :func:`selected`: whether a whole-text rewrite (translation, LLM paraphrase) applies to a
  text at level p — each text, independently, with probability p.

A word is a run of letters, digits or underscores, possibly joined by an apostrophe or a
hyphen (``don't``, ``well-known``); everything between words (spaces, newlines, punctuation)
is kept as it is, except that deleting a word also removes one of the two whitespace runs
that would otherwise meet.  Random words are the ``vocabulary_size`` most frequent English
words of the ``wordfreq`` package (bundled data, no network), alphabetic ones only.

Every function is deterministic: its random generator is seeded from ``seed`` and a hash of
the edit kind and the text, so the result of one text never depends on which texts were
perturbed before it.

>>> replace_words("the cat sat on the mat", 0.0, seed=1)
'the cat sat on the mat'
>>> delete_words("the cat sat on the mat", 1.0, seed=1)
''
>>> replace_words("the cat sat on the mat", 0.5, seed=1) == replace_words(
...     "the cat sat on the mat", 0.5, seed=1)
True
"""

from __future__ import annotations

import hashlib
import numbers
import re
import string
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from rmaudit.errors import BadInput

WORD = re.compile(r"\w+(?:['’-]\w+)*")

DEFAULT_VOCABULARY_SIZE = 30_000

_KEEP, _INSERT, _DELETE, _REPLACE = 0, 1, 2, 3
_SWAP, _DROP, _ADD = 0, 1, 2
_LETTERS = string.ascii_lowercase

Seed = int | Sequence[int]


@lru_cache(maxsize=4)
def vocabulary(size: int = DEFAULT_VOCABULARY_SIZE) -> tuple[str, ...]:
    """The alphabetic words among wordfreq's ``size`` most frequent English words.

    >>> words = vocabulary(1000)
    >>> words[:3], all(w.isalpha() for w in words)
    (('the', 'to', 'and'), True)
    """
    from wordfreq import top_n_list  # imported here: loading wordfreq costs ~0.1 s

    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
        raise BadInput("expected a vocabulary size >= 1", field="vocabulary_size", value=size)
    return tuple(word for word in top_n_list("en", int(size)) if word.isalpha())


def _check_p(p: Any) -> float:
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= float(p) <= 1.0:
        raise BadInput("expected a probability in [0, 1]", field="p", value=p)
    return float(p)


def _rng(kind: str, text: str, seed: Seed) -> np.random.Generator:
    # int as well: numbers.Integral (numpy's integers too) does not narrow the type
    seeds = [seed] if isinstance(seed, (int, numbers.Integral)) else list(seed)
    for value in seeds:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise BadInput("expected a seed of integers >= 0", field="seed", value=seed)
    digest = hashlib.blake2b(
        f"{kind}\0{text}".encode("utf-8", "surrogatepass"), digest_size=8
    ).digest()
    return np.random.default_rng([*map(int, seeds), int.from_bytes(digest, "little")])


def _random_word(rng: np.random.Generator, words: Sequence[str], unlike: str | None) -> str:
    """A uniformly random vocabulary word, redrawn while it equals ``unlike`` (ignoring case)."""
    while True:
        word = words[int(rng.integers(len(words)))]
        if unlike is None or word.lower() != unlike.lower():
            return word


def _edit_words(
    kind: str, text: str, p: float, seed: Seed, edits: Sequence[int], vocabulary_size: int
) -> str:
    """Apply one of ``edits`` (drawn uniformly) to each word with probability p."""
    p = _check_p(p)
    matches = list(WORD.finditer(text))
    rng = _rng(kind, text, seed)
    chosen = rng.random(len(matches)) < p
    edit_of = np.asarray(edits)[rng.integers(len(edits), size=len(matches))]
    if not chosen.any():
        return text
    words = vocabulary(vocabulary_size) if {_INSERT, _REPLACE} & set(edits) else ()
    out: list[str] = []
    nonblank = False  # whether anything but whitespace has been emitted yet
    end_of_previous = 0
    deleted_before = False
    for match, selected, edit in zip(matches, chosen, edit_of, strict=True):
        separator = text[end_of_previous : match.start()]
        if deleted_before:
            separator = _join_after_deletion(out, separator, nonblank)
        out.append(separator)
        nonblank = nonblank or not separator.isspace() and separator != ""
        word = match.group()
        edit = edit if selected else _KEEP
        deleted_before = edit == _DELETE
        if edit == _KEEP:
            out.append(word)
        elif edit == _INSERT:
            out.append(f"{word} {_random_word(rng, words, None)}")
        elif edit == _REPLACE:
            out.append(_random_word(rng, words, word))
        nonblank = nonblank or not deleted_before
        end_of_previous = match.end()
    tail = text[end_of_previous:]
    out.append(_join_after_deletion(out, tail, nonblank, at_end=True) if deleted_before else tail)
    return "".join(out)


def _join_after_deletion(
    out: list[str], separator: str, nonblank: bool, *, at_end: bool = False
) -> str:
    """Keep one whitespace run where a deleted word's two neighbouring runs would meet.

    Of the run before the word (the end of ``out``) and the run after it (the start of
    ``separator``), the one with more line breaks survives, the one after on a tie; at the
    start of the text (nothing but whitespace emitted yet) the run after it is dropped.
    """
    if not separator[:1].isspace() and not (at_end and separator == ""):
        return separator
    after = separator[: len(separator) - len(separator.lstrip())]
    if not nonblank:
        return separator[len(after) :]
    while out[-1] == "":
        out.pop()
    trimmed = out[-1].rstrip()
    before = out[-1][len(trimmed) :]
    if not before:
        return separator
    out[-1] = trimmed
    keep = before if before.count("\n") > after.count("\n") else after
    return keep + separator[len(after) :]


def insert_words(
    text: str, p: float, *, seed: Seed = 0, vocabulary_size: int = DEFAULT_VOCABULARY_SIZE
) -> str:
    """After each word, with probability p, insert a random English word (RMs Under Distribution
    Shift, arXiv 2311.14743, Sec. 4.2).

    >>> insert_words("one two", 0.0, seed=0)
    'one two'
    >>> len(insert_words("one two", 1.0, seed=0).split())
    4
    """
    return _edit_words("insert", text, p, seed, (_INSERT,), vocabulary_size)


def delete_words(text: str, p: float, *, seed: Seed = 0) -> str:
    """Delete each word with probability p (RMs Under Distribution Shift, arXiv 2311.14743, Sec.
    4.2); punctuation is kept.

    >>> delete_words("Hello, world. Bye", 1.0, seed=0)
    ', .'
    >>> delete_words("one two", 1.0, seed=0), delete_words("a b", 0.5, seed=3)
    ('', 'a')
    """
    return _edit_words("delete", text, p, seed, (_DELETE,), DEFAULT_VOCABULARY_SIZE)


def replace_words(
    text: str, p: float, *, seed: Seed = 0, vocabulary_size: int = DEFAULT_VOCABULARY_SIZE
) -> str:
    """Replace each word, with probability p, by a different random English word (RMs Under
    Distribution Shift, arXiv 2311.14743, Sec. 4.2).

    >>> out = replace_words("one two three", 1.0, seed=0)
    >>> len(out.split()), any(w in out.split() for w in ("one", "two", "three"))
    (3, False)
    """
    return _edit_words("replace", text, p, seed, (_REPLACE,), vocabulary_size)


def perturb_words(
    text: str, p: float, *, seed: Seed = 0, vocabulary_size: int = DEFAULT_VOCABULARY_SIZE
) -> str:
    """The word perturbation of RMs Under Distribution Shift: each word, with probability p, is
    followed by an inserted random word, deleted, or replaced by a random word — one of the three,
    uniformly.

    >>> perturb_words("I am looking forward to hearing your thoughts", 0.0, seed=3)
    'I am looking forward to hearing your thoughts'
    """
    return _edit_words("words", text, p, seed, (_INSERT, _DELETE, _REPLACE), vocabulary_size)


def char_noise(text: str, p: float, *, seed: Seed = 0) -> str:
    """Typo-like noise: each letter or digit, with probability p, gets one edit, uniformly of:

    - swap: exchanged with the next character if that is a letter or digit, else with the
      previous one if that is (a one-character word is left as it is);
    - drop: removed;
    - add: followed by a random lowercase ASCII letter.

    Whitespace and punctuation are never edited.  A character moved by its neighbour's swap is
    not drawn again, so a letter is edited at rate p / (1 + p/3) (0.275 for p = 0.3).

    >>> char_noise("keep this", 0.0, seed=0)
    'keep this'
    >>> char_noise("  ", 1.0, seed=0)
    '  '
    """
    p = _check_p(p)
    rng = _rng("chars", text, seed)
    selected = np.flatnonzero(rng.random(len(text)) < p)
    edits = rng.integers(3, size=len(text))
    letters = rng.integers(len(_LETTERS), size=len(text))
    out: list[str] = []
    cursor = 0  # text[:cursor] has been emitted, edited or not
    for position in selected.tolist():
        char = text[position]
        if position < cursor or not char.isalnum():
            continue
        out.append(text[cursor:position])
        edit = edits[position]
        cursor = position + 1
        if edit == _DROP:
            continue
        if edit == _ADD:
            out.append(char + _LETTERS[letters[position]])
        elif position + 1 < len(text) and text[position + 1].isalnum():
            out.append(text[position + 1] + char)
            cursor = position + 2
        elif out[-1][-1:].isalnum():
            # out[-1] is text[old cursor:position], so this is text[position - 1], unedited
            out[-1] = out[-1][:-1] + char + out[-1][-1]
        else:
            out.append(char)
    out.append(text[cursor:])
    return "".join(out)


def selected(kind: str, text: str, p: float, *, seed: Seed = 0) -> bool:
    """Whether a whole-text rewrite of kind ``kind`` applies to ``text`` at level p: each text
    independently with probability p, seeded by ``seed`` and a hash of the text.

    The draw is one uniform u per (kind, seed, text), and the text is rewritten when u < p:
    so a text rewritten at level p is rewritten at every higher level too, and a sweep's
    levels share their rewrites (one model call or API request per text, not per level).

    >>> selected("translate", "hello", 0.0), selected("translate", "hello", 1.0)
    (False, True)
    """
    p = _check_p(p)
    return bool(_rng(kind, text, seed).random() < p)
