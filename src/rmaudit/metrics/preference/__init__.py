"""Preference-pair metrics: accuracy, calibration and out-of-distribution detection.

Inputs are the RM's scores (logits) of the chosen and of the rejected response of each pair,
as two 1-D arrays indexed by pair (docs/metrics.md, "Pair metrics").  The sampling
unit is the pair: standard errors and bootstrap intervals resample pairs.

- RewardBench (arXiv 2403.13787): accuracy = fraction of pairs with score(chosen) > score(rejected),
  per subset, combined into section scores and a section-weighted total.
- RM-Bench: easy / normal / hard accuracies from the 3 × 3 matrix of chosen style ×
  rejected style accuracies.
- Distribution shift (RMs Under Distribution Shift, arXiv 2311.14743): confidence = max softmax of
  the two logits (Sec. 3.2, = MSP), ECE with M equal-width confidence bins (Sec. 3.1), energy score
  (Sec. 5.1), and AUROC / FPR@95 of an OOD detector between an in-distribution and a shifted set
  (Sec. 5.3).
- Rethinking RM Evaluation (arXiv 2410.05584), App. 8.3: the Bradley-Terry ECE, whose bins split
  pairs by reward margin.

>>> import numpy as np
>>> chosen, rejected = np.array([2.0, 0.5, 1.0]), np.array([1.0, 1.5, 1.0])
>>> accuracy(chosen, rejected).value                  # the tie counts as a loss
0.3333333333333333
>>> accuracy(chosen, rejected, ties="half").value
0.5
"""

from rmaudit.metrics.preference._inputs import DEFAULT_TIES
from rmaudit.metrics.preference.accuracy import (
    WALD_MINIMUM,
    accuracy,
    clustered_stderr,
    edge_wilson_interval,
    pair_credit,
    subset_accuracy,
    wald_is_approximate,
    wilson_interval,
)
from rmaudit.metrics.preference.calibration import CalibrationResult, bt_ece, confidence, ece
from rmaudit.metrics.preference.ood import auroc, energy_score, fpr_at_95_tpr
from rmaudit.metrics.preference.sections import (
    REWARDBENCH,
    SectionScheme,
    SectionTotal,
    section_score,
)
from rmaudit.metrics.preference.styles import (
    StyleDifficulty,
    style_accuracy_matrix,
    style_difficulty,
    style_difficulty_stderr,
)

__all__ = [
    "DEFAULT_TIES",
    "REWARDBENCH",
    "WALD_MINIMUM",
    "CalibrationResult",
    "SectionScheme",
    "SectionTotal",
    "StyleDifficulty",
    "accuracy",
    "auroc",
    "bt_ece",
    "clustered_stderr",
    "edge_wilson_interval",
    "confidence",
    "ece",
    "energy_score",
    "fpr_at_95_tpr",
    "pair_credit",
    "section_score",
    "style_accuracy_matrix",
    "style_difficulty",
    "style_difficulty_stderr",
    "subset_accuracy",
    "wald_is_approximate",
    "wilson_interval",
]
