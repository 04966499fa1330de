"""The compact letter display of a paired comparison (:mod:`.paired`): models that share a
letter are not separable (Piepho 2004), and a model's letters as printed, a run of groups
written first–last."""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Sequence


def letter_display(order: Sequence[str], separated: set[tuple[str, str]]) -> dict[str, str]:
    """Piepho's (2004) insert-and-absorb compact letter display: models share a letter
    exactly when no pair of ``separated`` (unordered) holds them; letters are assigned in
    ``order`` (best first), so ``a`` is the best model's group.

    >>> letter_display(["a", "b", "c"], {("a", "c")})
    {'a': 'a', 'b': 'ab', 'c': 'b'}
    """
    # each column a bit mask over the models' positions in ``order`` (a set's operations on
    # ints: a comparison of 67 models separates thousands of pairs)
    bit = {m: 1 << i for i, m in enumerate(order)}
    columns = [(1 << len(order)) - 1]
    for first, second in sorted(separated):
        both = bit[first] | bit[second]
        if not any(c & both == both for c in columns):
            continue  # told apart already: nothing to split
        kept = [c for c in columns if c & both != both]
        split = [c & ~one for c in columns if c & both == both for one in (bit[first], bit[second])]
        # absorb: a column inside another says nothing the larger one does not.  The columns
        # hold none of each other (each step keeps it so), so a kept one is inside no new one
        # (a new one is inside an old one that held both): only the new ones are checked
        split = [
            c for i, c in enumerate(split) if c and c not in split[:i] and not _inside(c, kept)
        ]
        columns = kept + [c for c in split if not _inside(c, [o for o in split if o != c])]
    members = [[i for i in range(len(order)) if c >> i & 1] for c in columns]
    members.sort()
    letters = {m: "" for m in order}
    for index, column in enumerate(members):
        for i in column:
            letters[order[i]] += _letter(index)
    return letters


def _inside(mask: int, masks: list[int]) -> bool:
    """Whether the models of ``mask`` are all in one of ``masks`` (a loop: the letter
    display asks this hundreds of thousands of times)."""
    for other in masks:
        if mask | other == other:
            return True
    return False


#: the letters of :func:`letter_display`, in order; a group past them is ``[index]``
_ALPHABET = string.ascii_lowercase + string.ascii_uppercase


def _letter(index: int) -> str:
    return _ALPHABET[index] if index < len(_ALPHABET) else f"[{index}]"


def letter_runs(letters: str) -> str:
    """A model's letters as printed: every run of three or more consecutive groups written
    first–last, so that 65 judges' letters fit a column.

    >>> letter_runs("ijklmnopqrstuvwxyzAB"), letter_runs("nopqsuvw"), letter_runs("ab")
    ('i–B', 'n–q s u–w', 'ab')
    """
    tokens = re.findall(r"\[\d+\]|[a-zA-Z]", letters)
    runs: list[list[int]] = []
    for index in (_ALPHABET.index(t) if len(t) == 1 else int(t[1:-1]) for t in tokens):
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    if all(len(run) < 3 for run in runs):
        return letters
    return " ".join(
        f"{_letter(run[0])}–{_letter(run[-1])}" if len(run) >= 3 else " ".join(map(_letter, run))
        for run in runs
    )


def runs_note(letters: Iterable[str]) -> str:
    """What a caption adds where any of ``letters`` prints a run first–last (else nothing)."""
    compacted = any(letter_runs(own) != own for own in letters)
    return "; a–d: the groups a to d" if compacted else ""
