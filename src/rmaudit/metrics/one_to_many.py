"""One correct response against many incorrect ones: RewardMATH's accuracy and MRR per prompt
(*Evaluating Robustness of Reward Models for Mathematical Reasoning*, Kim et al., arXiv
2410.01729, Sec. 3.2, "one-to-many comparison"), with what ties do to them.

Per prompt, the responses with the prompt's highest oracle score are the correct ones and the
others the incorrect ones:

* **accuracy**: 1 when every correct response scores strictly above every incorrect one;
* **accuracy with ties**: the same with "at least as high" — a tie counted a win;
* **tie rate**: accuracy with ties minus accuracy, the prompts where the correct response
  ties the best incorrect one (and none is above it);
* **reciprocal rank**: 1 / the rank of the best correct response among all, sorted by score
  high first, a tie ranked below the incorrect responses (RewardMATH's ``_calculate_MRR``).

Each is a mean over prompts with its ± across prompts (:class:`MetricResult`); the share of
accuracy with ties that rests on ties is tie rate / accuracy with ties.  A prompt whose
responses all have the same oracle score has no correct one to tell apart and is undefined.

>>> r = one_to_many([np.array([1.0, 0.0, 0.0])], [np.array([2.0, 2.0, 1.0])])
>>> r.accuracy.value, r.accuracy_with_ties.value, r.tie_rate.value, r.reciprocal_rank.value
(0.0, 1.0, 1.0, 0.5)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._results import MetricResult
from rmaudit.metrics._validation import check_pools


@dataclass(frozen=True)
class OneToMany:
    accuracy: MetricResult
    accuracy_with_ties: MetricResult
    tie_rate: MetricResult
    reciprocal_rank: MetricResult


def one_to_many(
    oracle: Sequence[np.ndarray], scores: Sequence[np.ndarray], *, seed: int = 0
) -> OneToMany:
    """The four per-prompt figures above, averaged over prompts."""
    oracle_pools, score_pools = check_pools(oracle, scores)
    pools = enumerate(zip(oracle_pools, score_pools, strict=True))
    rows = np.array([_prompt(judged, scored, q) for q, (judged, scored) in pools])
    strict, ties, reciprocal = rows.T
    return OneToMany(
        *(
            MetricResult.from_per_prompt(values, seed=seed)
            for values in (strict, ties, ties - strict, reciprocal)
        )
    )


def _prompt(oracle: np.ndarray, scores: np.ndarray, index: int) -> tuple[float, float, float]:
    correct = oracle == oracle.max()
    if correct.all():
        raise MetricInputError(
            f"prompt {index}: every response has the same oracle score, none is the correct one",
            field="oracle",
        )
    right, wrong = scores[correct], scores[~correct]
    best_wrong = wrong.max()
    rank = 1 + int((wrong >= right.max()).sum())
    return float(right.min() > best_wrong), float(right.min() >= best_wrong), 1.0 / rank
