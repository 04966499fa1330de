"""Within-prompt pairwise ranking accuracy of an RM against the oracle.

"Rethinking Reward Model Evaluation" (arXiv 2410.05584) App. 8.3, "Accuracy": with N responses per
prompt, the C(N, 2) pairs are the test cases; a pair the oracle tells apart is passed when the RM
orders it the same way.  It is the accuracy-style baseline the RETA paper (arXiv 2504.14838, Sec. 2)
contrasts RETA with, computed here on the same labelled pools.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rmaudit.metrics._positional import stack_by_size
from rmaudit.metrics._results import MetricResult
from rmaudit.metrics._validation import check_choice, check_ordered_pools

ArrayLike = Sequence[float] | np.ndarray

# Pair comparisons are vectorised over (prompts × N × N) booleans; this caps one batch at
# 16 MB per boolean array.
_PAIR_BATCH_ELEMENTS = 1 << 24


def pairwise_accuracy(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    *,
    ties: str = "half",
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
) -> MetricResult:
    """Fraction of oracle-ordered response pairs that the RM orders the same way.

    Per prompt, over the pairs (a, b) with J(a) > J(b): ``(#{Y(a) > Y(b)} + t · #{Y(a) = Y(b)}) /
    #{J(a) > J(b)}`` with t = 1/2 for ``ties="half"`` and t = 0 for ``ties="loss"``; then averaged
    over prompts (Rethinking RM Evaluation, arXiv 2410.05584 App. 8.3, "Accuracy").  Pairs the
    oracle ties are not counted; a prompt whose oracle scores are all equal has no pair and is an
    error.  ``seed`` seeds only the bootstrap CI.

    Example:
        >>> oracle = [np.array([1.0, 2.0, 3.0])]
        >>> round(pairwise_accuracy(oracle, [np.array([1.0, 3.0, 2.0])]).value, 6)   # 2 of 3
        0.666667
        >>> round(pairwise_accuracy(oracle, [np.array([1.0, 2.0, 2.0])]).value, 6)   # 2.5 of 3
        0.833333
        >>> round(pairwise_accuracy(oracle, [np.array([1.0, 2.0, 2.0])], ties="loss").value, 6)
        0.666667
    """
    oracle_pools, score_pools = check_ordered_pools(oracle, scores)
    tie_credit = {"half": 0.5, "loss": 0.0}[check_choice(ties, ("half", "loss"), "ties")]
    per_prompt = np.empty(len(oracle_pools))
    for size, prompts, judged, scored in stack_by_size(oracle_pools, score_pools):
        batch = max(1, _PAIR_BATCH_ELEMENTS // (size * size))
        for start in range(0, prompts.size, batch):
            rows = slice(start, start + batch)
            oracle_prefers = judged[rows, :, None] > judged[rows, None, :]
            comparable = np.count_nonzero(oracle_prefers, axis=(1, 2))
            rm_scores = scored[rows]
            rm_prefers = rm_scores[:, :, None] > rm_scores[:, None, :]
            rm_ties = rm_scores[:, :, None] == rm_scores[:, None, :]
            agree = np.count_nonzero(oracle_prefers & rm_prefers, axis=(1, 2))
            tied = np.count_nonzero(oracle_prefers & rm_ties, axis=(1, 2))
            per_prompt[prompts[rows]] = (agree + tie_credit * tied) / comparable
    return MetricResult.from_per_prompt(per_prompt, ci=ci, bootstrap=bootstrap, seed=seed)
