"""RewardBench 2's scores (Malik et al. 2025, *RewardBench 2: Advancing Reward Model
Evaluation*, arXiv 2506.01937) with intervals: best-of-4 with partial credit for tied top
scores (:mod:`.rows`), the Ties formula (:mod:`.ties`) and the final score (:mod:`.score`)."""

from .rows import TIES, RowPlace, ScoredRow, is_ties, rows_from_pairs, top_credit
from .score import (
    SUBSETS,
    FinalScore,
    RewardBench2Score,
    SubsetScore,
    rewardbench2_score,
    subset_order,
)
from .ties import (
    BOUNDS,
    MARGIN_WEIGHT,
    WEIGHTS,
    GroupStats,
    TiesQuestions,
    group_stats,
    margin_term,
    ties_interval,
    ties_questions,
)

__all__ = [
    "BOUNDS",
    "MARGIN_WEIGHT",
    "SUBSETS",
    "TIES",
    "WEIGHTS",
    "FinalScore",
    "GroupStats",
    "RewardBench2Score",
    "RowPlace",
    "ScoredRow",
    "SubsetScore",
    "TiesQuestions",
    "group_stats",
    "is_ties",
    "margin_term",
    "rewardbench2_score",
    "rows_from_pairs",
    "subset_order",
    "ties_interval",
    "ties_questions",
    "top_credit",
]
