"""Metrics of process reward models (docs/prm.md): step scores against the steps a benchmark
marks erroneous (PRMBench's step F1, :mod:`.step_f1`), the first step a PRM flags against the
first wrong one (ProcessBench, :mod:`.first_error`), and how step scores become a solution score
(:mod:`.aggregation`).  Each estimate carries its influence per question
(:mod:`.linearized`): its ± clusters a question's solutions, and two PRMs on the same
questions compare pairwise."""

from .aggregation import (
    AGGREGATIONS,
    OF_PROBABILITIES,
    REWARDMATH_AGGREGATIONS,
    aggregate,
    aggregate_steps,
    auroc,
)
from .first_error import FirstErrorScores, first_error_scores, first_flagged
from .linearized import LinearizedEstimate, f1, harmonic_mean, ratio, weighted_sum
from .step_f1 import StepF1, step_f1

__all__ = [
    "AGGREGATIONS",
    "OF_PROBABILITIES",
    "REWARDMATH_AGGREGATIONS",
    "LinearizedEstimate",
    "FirstErrorScores",
    "StepF1",
    "aggregate",
    "aggregate_steps",
    "auroc",
    "first_error_scores",
    "first_flagged",
    "f1",
    "harmonic_mean",
    "ratio",
    "step_f1",
    "weighted_sum",
]
