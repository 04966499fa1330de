"""RewardBench 2's rows as the scores see them, and the best-of-4 credit of one row.

A row is a prompt with its correct completions (``chosen``; the first is the one best-of-4
scores) and its incorrect ones (``rejected``), each with an RM's score.  rmaudit stores a row
as its correct × incorrect preference pairs, each pair's ``meta`` naming the row and the
two completions' positions in it (:func:`rows_from_pairs` puts the row back together).

Best-of-4 (Malik et al. 2025, *RewardBench 2: Advancing Reward Model Evaluation*, arXiv
2506.01937, Sec. 3 "Scoring" and App. G): a row scores 1/k when its chosen completion holds
the top score and k completions share that top score (½, ⅓, ¼ for two-, three- and four-way
ties), else 0; so a model that scores everything alike gets the chance value ¼ on a row of four.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rmaudit.errors import MetricInputError

#: the subset whose score is the Ties formula (:mod:`.ties`), not best-of-4; upstream spells it
#: "Ties" in the data and compares it lower-cased
TIES = "Ties"


def is_ties(subset: str) -> bool:
    return subset.lower() == TIES.lower()


@dataclass(frozen=True)
class ScoredRow:
    """One prompt's completions with an RM's scores."""

    #: the row's id among the data's rows (a paired comparison's unit)
    unit: str
    subset: str
    #: the row's upstream ``id`` (Ties: ``ref:N`` or ``tied:N``)
    group: str
    correct: np.ndarray
    incorrect: np.ndarray


@dataclass(frozen=True)
class Rows:
    """The rows put back together from pairs, and the rows that could not be (a row whose
    pairs were sampled away in part): their units, with the reason."""

    rows: tuple[ScoredRow, ...]
    incomplete: dict[str, str] = field(default_factory=dict)


def top_credit(correct: np.ndarray, incorrect: np.ndarray) -> float:
    """1/k when the first correct completion holds the top score and k completions share it,
    else 0 (App. G's partial credit).

    >>> top_credit(np.array([2.0]), np.array([1.0, 2.0, 0.0]))   # a two-way tie at the top
    0.5
    >>> top_credit(np.array([1.0]), np.array([2.0, 0.0, 0.0]))
    0.0
    """
    scores = np.concatenate([correct, incorrect])
    top = scores.max()
    return 1.0 / float(np.count_nonzero(scores == top)) if correct[0] == top else 0.0


def rows_from_pairs(
    chosen: np.ndarray,
    rejected: np.ndarray,
    subsets: Sequence[str | None],
    metas: Sequence[dict[str, Any]],
) -> Rows:
    """The rows of a set of correct × incorrect pairs: pair i holds the scores of correct
    completion ``meta["correct"]`` and incorrect completion ``meta["incorrect"]`` of row
    ``meta["row"]``, which has ``meta["num_correct"]`` and ``meta["num_incorrect"]``.  A pair
    without those keys is a row of its own (one correct, one incorrect completion).  A row
    missing a completion is left out, with the reason."""
    for name, values in (("chosen", chosen), ("rejected", rejected)):
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise MetricInputError(
                f"expected finite scores, got {values[bad[0]]} at pair {bad[0]}", field=name
            )
    found: dict[str, dict[str, Any]] = {}
    for i, meta in enumerate(metas):
        unit = f"row {meta['row']}" if "row" in meta else f"pair {i}"
        entry = found.setdefault(
            unit,
            {
                "subset": subsets[i] or "",
                "group": str(meta.get("id", unit)),
                "sizes": (int(meta.get("num_correct", 1)), int(meta.get("num_incorrect", 1))),
                "correct": {},
                "incorrect": {},
            },
        )
        entry["correct"].setdefault(int(meta.get("correct", 0)), float(chosen[i]))
        entry["incorrect"].setdefault(int(meta.get("incorrect", 0)), float(rejected[i]))
    rows, incomplete = [], {}
    for unit, entry in sorted(found.items()):
        sizes = entry["sizes"]
        have = (len(entry["correct"]), len(entry["incorrect"]))
        expected = (set(range(sizes[0])), set(range(sizes[1])))
        if (set(entry["correct"]), set(entry["incorrect"])) != expected:
            incomplete[unit] = (
                f"{have[0]} of {sizes[0]} correct and {have[1]} of {sizes[1]} incorrect "
                "completions (a sample of its pairs)"
            )
            continue
        rows.append(
            ScoredRow(
                unit,
                entry["subset"],
                entry["group"],
                np.array([entry["correct"][k] for k in sorted(entry["correct"])]),
                np.array([entry["incorrect"][k] for k in sorted(entry["incorrect"])]),
            )
        )
    return Rows(tuple(rows), incomplete)
