"""ProcessBench's score: does the PRM find the first wrong step? (*ProcessBench: Identifying
Process Errors in Mathematical Reasoning*, Zheng et al. 2024, arXiv 2412.06559, §2 and §4.1.)

The PRM's prediction for a solution is the first step it scores below the threshold, −1 if it
scores none below (every step judged correct); it matches when it equals the label, the first
wrong step (−1 for a solution correct throughout).  Per split, as ProcessBench's
``code/run_eval_prm_rlhflow.py`` computes it:

    acc_error   = share of matches among solutions with an error (label ≠ −1),
    acc_correct = share of matches among solutions without one (label = −1),
    F1          = 2·acc_error·acc_correct / (acc_error + acc_correct),

and the paper's headline is the mean of the splits' F1.  Each value carries its influence per
question (:mod:`.linearized`), so its ± clusters the solutions of one problem.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rmaudit.errors import MetricInputError

from .linearized import LinearizedEstimate, harmonic_mean, question_totals, ratio, step_scores


def first_flagged(scores: np.ndarray, threshold: float) -> int:
    """The first step scored below ``threshold`` (0-based), −1 if none.

    >>> first_flagged(np.array([0.9, 0.4, 0.1]), 0.5)
    1
    """
    below = np.flatnonzero(np.asarray(scores, dtype=float) < threshold)
    return int(below[0]) if below.size else -1


def predictions(scores: Sequence[np.ndarray], thresholds: np.ndarray) -> np.ndarray:
    """:func:`first_flagged` of every solution at every threshold, shape (T, solutions): the
    count of leading steps whose running minimum is at least the threshold, −1 where that is
    every step."""
    thresholds = np.asarray(thresholds, dtype=float)
    scores = step_scores(scores)
    lengths = np.array([s.size for s in scores], dtype=int)
    if not lengths.size:
        return np.zeros((thresholds.size, 0), dtype=int)
    running = np.concatenate([np.minimum.accumulate(s) for s in scores])
    owner = np.repeat(np.arange(lengths.size), lengths)
    kept = question_totals(running[None, :] >= thresholds[:, None], owner, lengths.size)
    return np.where(kept >= lengths[None, :], -1, kept).astype(int)


@dataclass(frozen=True)
class FirstErrorScores:
    """ProcessBench's numbers on one split (or any set of solutions), at each threshold."""

    error_accuracy: LinearizedEstimate
    correct_accuracy: LinearizedEstimate
    f1: LinearizedEstimate
    erroneous: int
    correct: int


def first_error_scores(
    scores: Sequence[np.ndarray],
    first_error: Sequence[int],
    question_index: np.ndarray,
    questions: int,
    thresholds: np.ndarray,
) -> FirstErrorScores:
    """Accuracy on erroneous and on correct solutions, and their F1 (``first_error[i]``:
    solution i's first wrong step, 0-based, −1 for none; ``question_index[i]``: its problem).

    >>> s = [np.array([0.9, 0.2]), np.array([0.8, 0.7])]
    >>> r = first_error_scores(s, [1, -1], np.array([0, 1]), 2, np.array([0.5]))
    >>> float(r.error_accuracy.value[0]), float(r.correct_accuracy.value[0]), float(r.f1.value[0])
    (1.0, 1.0, 1.0)
    """
    labels = np.asarray(first_error, dtype=int)
    lengths = np.array([len(s) for s in scores], dtype=int)
    if labels.shape != lengths.shape or len(question_index) != lengths.size:
        raise MetricInputError(
            "expected one label and one question per solution", field="first_error"
        )
    bad = np.flatnonzero((labels < -1) | (labels >= lengths))
    if bad.size:
        raise MetricInputError(
            f"solution {bad[0]}: first wrong step {labels[bad[0]]} is not one of its "
            f"{lengths[bad[0]]} steps",
            field="first_error",
            value=int(labels[bad[0]]),
        )
    index = np.asarray(question_index, dtype=int)
    match = predictions(scores, thresholds) == labels[None, :]
    wrong = labels >= 0
    scope = np.bincount(index, minlength=questions) > 0

    def accuracy(among: np.ndarray) -> LinearizedEstimate:
        hits = question_totals(match & among[None, :], index, questions)
        total = np.broadcast_to(question_totals(among[None, :], index, questions), hits.shape)
        return ratio(hits, total, scope)

    on_error, on_correct = accuracy(wrong), accuracy(~wrong)
    return FirstErrorScores(
        on_error,
        on_correct,
        harmonic_mean(on_error, on_correct),
        int(wrong.sum()),
        int((~wrong).sum()),
    )
