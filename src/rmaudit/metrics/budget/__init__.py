"""Metrics from a labelled subset of each prompt's responses: label designs with known
inclusion probabilities (:mod:`.design`), design-unbiased estimators assisted by a cheap judge
and the RMs' scores (:mod:`.estimators`, :mod:`.pairwise`) and the label planner's arithmetic
(:mod:`.planning`).  docs/budget.md explains when to use them.

Inputs are per prompt, as for every metric: ``oracle[q]`` the oracle scores with NaN where a
response is unlabelled, ``scores[q]`` an RM's scores of every response, ``inclusion[q]`` each
response's inclusion probability π (1 everywhere: full labelling), and optionally
``predictions[q]`` a cheap judge's scores of every response.
"""

from .design import (
    LABEL_DESIGNS,
    by_response,
    guide_importance,
    pair_inclusion,
    rm_guided_inclusion,
    select,
    uniform_inclusion,
    uniform_sample_size,
)
from .estimators import (
    budget_best_of_n,
    budget_best_of_n_curve,
    budget_reta,
    budget_reta_curve,
    labelled_weight_share,
)
from .pairwise import budget_pairwise_accuracy

__all__ = [
    "LABEL_DESIGNS",
    "budget_best_of_n",
    "budget_best_of_n_curve",
    "budget_pairwise_accuracy",
    "budget_reta",
    "budget_reta_curve",
    "by_response",
    "guide_importance",
    "labelled_weight_share",
    "pair_inclusion",
    "rm_guided_inclusion",
    "select",
    "uniform_inclusion",
    "uniform_sample_size",
]
