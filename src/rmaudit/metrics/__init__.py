"""Reward-model reliability metrics as pure functions on numpy arrays (docs/metrics.md).

Inputs are per prompt: ``oracle[q]`` holds the oracle scores J of prompt q's responses and
``scores[q]`` an RM's scores Y of the same responses (sequences of 1-D arrays; prompts may have
different numbers of responses).  Every metric returns a :class:`MetricResult` (or a
:class:`CurveResult` for a grid of η or n) with the mean over prompts, its standard error and
bootstrap CI across prompts, and the per-prompt values.  Invalid input raises
:class:`rmaudit.errors.MetricInputError`.

>>> import numpy as np
>>> from rmaudit.metrics import reta
>>> oracle = [np.array([1.0, 2.0, 3.0, 4.0])]
>>> round(reta(oracle, oracle, 0.5, n=4).value, 6)
1.4
"""

from rmaudit.metrics import preference, regret
from rmaudit.metrics._results import CurveResult, MetricResult
from rmaudit.metrics.best_of_n import best_k_of_n, best_of_n, best_of_n_curve, bon_kl, rank_of_n_kl
from rmaudit.metrics.pairwise import pairwise_accuracy
from rmaudit.metrics.preference import *  # noqa: F403 -- the pair metrics, all of them
from rmaudit.metrics.regret import *  # noqa: F403 -- the regret study's metrics, all of them
from rmaudit.metrics.reta import default_etas, reta, reta_curve, reta_n_range

__all__ = [
    "CurveResult",
    "MetricResult",
    "best_k_of_n",
    "best_of_n",
    "best_of_n_curve",
    "bon_kl",
    "default_etas",
    "pairwise_accuracy",
    "rank_of_n_kl",
    "reta",
    "reta_curve",
    "reta_n_range",
]
__all__ += preference.__all__ + regret.__all__
