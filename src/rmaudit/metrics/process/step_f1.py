"""PRMBench's step-level scores (*PRMBench: A Fine-grained and Challenging Benchmark for
Process-Level Reward Models*, Song et al. 2025, arXiv 2501.03124, §3.3 "Evaluation Metrics").

A step is predicted valid when the PRM scores it above the threshold (``score > t``, as
PRMBench's ``mr_eval`` models label ``step_level_validity_labels``); a valid step is the
positive class and a step the data marks erroneous the negative one.  Over every step of a set
of solutions (an error class, or all of them: micro-averaged, the counts pooled as
``mr_eval/tasks/prmtest_classified/task.py`` pools its ``f1_matrix``):

    f1          = 2·TP / (2·TP + FP + FN)      on valid steps,
    negative_f1 = 2·TN / (2·TN + FN + FP)      on erroneous steps,
    PRMScore    = ½·f1 + ½·negative_f1         (f1 alone for multi_solutions, whose steps are
                                                all valid: ``draw_radar.ipynb``'s
                                                ``get_prmscore_from_current_res_dict``),

with TP a valid step predicted valid, FN a valid step predicted erroneous, FP an erroneous
step predicted valid and TN an erroneous step predicted erroneous.  Where PRMBench's code
returns −1 for an F1 whose precision and recall are both 0 (and its tables then print 0),
the F1 here is 0, its limit; the two agree everywhere else.  Each value carries its influence
per question (:mod:`.linearized`): PRMBench modifies one question several ways, so the
solutions of a question are one cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rmaudit.errors import MetricInputError

from .linearized import LinearizedEstimate, f1, question_totals, step_scores, weighted_sum


@dataclass(frozen=True)
class StepF1:
    """PRMBench's three numbers on one set of solutions, at each threshold."""

    f1: LinearizedEstimate
    negative_f1: LinearizedEstimate
    prm_score: LinearizedEstimate
    steps: int
    erroneous: int


def step_f1(
    scores: Sequence[np.ndarray],
    erroneous: Sequence[Sequence[int]],
    question_index: np.ndarray,
    questions: int,
    thresholds: np.ndarray,
    *,
    negative: bool = True,
) -> StepF1:
    """The step F1s of these solutions (``scores[i]``: solution i's step scores; ``erroneous[i]``:
    its erroneous steps, 0-based; ``question_index[i]``: its question, of ``questions``) at each
    of ``thresholds``; ``negative=False``: PRMScore is the f1 alone (multi_solutions).

    >>> r = step_f1([np.array([0.9, 0.2, 0.8])], [(1,)], np.array([0]), 1, np.array([0.5]))
    >>> float(r.f1.value[0]), float(r.negative_f1.value[0]), float(r.prm_score.value[0])
    (1.0, 1.0, 1.0)
    """
    if len(scores) != len(erroneous) or len(scores) != len(question_index):
        raise MetricInputError(
            f"expected one error list and question per solution, got {len(scores)} solutions, "
            f"{len(erroneous)} error lists and {len(question_index)} questions",
            field="erroneous",
        )
    scores = step_scores(scores)
    lengths = np.array([s.size for s in scores], dtype=int)
    flat = np.concatenate(scores) if scores else np.zeros(0)
    wrong = np.zeros(flat.size, dtype=bool)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])) if lengths.size else lengths
    for i, steps in enumerate(erroneous):
        for step in steps:
            if not 0 <= step < lengths[i]:
                raise MetricInputError(
                    f"solution {i}: erroneous step {step} is not one of its {lengths[i]} steps",
                    field="erroneous",
                    value=step,
                )
            wrong[starts[i] + step] = True
    owner = np.repeat(np.asarray(question_index, dtype=int), lengths)
    predicted_valid = flat[None, :] > np.asarray(thresholds, dtype=float)[:, None]

    def count(mask: np.ndarray) -> np.ndarray:
        return question_totals(mask, owner, questions)

    true_positive = count(predicted_valid & ~wrong)
    false_negative = count(~predicted_valid & ~wrong)
    false_positive = count(predicted_valid & wrong)
    true_negative = count(~predicted_valid & wrong)
    scope = np.bincount(np.asarray(question_index, dtype=int), minlength=questions) > 0
    valid_f1 = f1(true_positive, false_positive, false_negative, scope)
    negative_f1 = f1(true_negative, false_negative, false_positive, scope)
    score = weighted_sum([0.5, 0.5], [valid_f1, negative_f1]) if negative else valid_f1
    return StepF1(valid_f1, negative_f1, score, int(flat.size), int(wrong.sum()))
