"""What a pairwise judge (an LLM asked "which answer is better, A or B?") exchanges with the
run: a pair as shown to it, in one order, and its verdict on that showing.

A reward model that judges pairs (:meth:`rmaudit.components.RewardModel.judges_pairs`) gets
every preference pair twice, once in each order (chosen first, then rejected first), as
:class:`PairShown` records, and returns one :class:`PairVerdict` per showing.  The run stores
each verdict keyed by what was shown (:func:`shown_key`: prompt, first answer, second
answer), so a pair judged once is never judged again, and both orders are in the store.
A verdict is one record from the judge to the store and back (:mod:`rmaudit.store.verdicts`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from rmaudit.store.verdicts import ShownIds, Verdict

from .keys import content_key
from .records import Prompt, Response


@dataclass(frozen=True)
class PairShown:
    """A pair as the judge sees it: the question, then ``first`` as answer A and ``second``
    as answer B."""

    prompt: Prompt
    first: Response
    second: Response

    @property
    def key(self) -> str:
        return shown_key(self.prompt.id, self.first.id, self.second.id)

    @property
    def ids(self) -> ShownIds:
        """The showing by its ids, as its verdict is stored."""
        return ShownIds(self.key, self.prompt.id, self.first.id, self.second.id)


@functools.lru_cache(maxsize=1 << 17)
def shown_key(prompt_id: str, first_id: str, second_id: str) -> str:
    """The content key of a showing: the same answers in the same order under the same
    prompt are one showing, judged once.  Remembered: every judge of a run asks for the
    same showings' keys."""
    return content_key("pair-shown", prompt_id, first_id, second_id)


@dataclass(frozen=True, eq=False)
class JudgedPairs:
    """A pairwise judge's verdicts on a run's pairs, aligned with
    :attr:`rmaudit.components.PairInputs.pair_ids`: for each pair, the verdict (in terms of
    the answer shown first or second) and ``p_first`` when the chosen answer was shown first,
    and when the rejected one was.  ``from_logprobs``: every probability came from the verdict
    tokens' log-probabilities (calibration is then measured)."""

    chosen_first: tuple[Verdict, ...]
    rejected_first: tuple[Verdict, ...]
    p_first_chosen_first: np.ndarray
    p_first_rejected_first: np.ndarray
    from_logprobs: bool = False
    #: each pair's judge reply in each order (shown literally by the front ends)
    replies: tuple[tuple[str, str], ...] = ()

    @property
    def p_chosen(self) -> np.ndarray:
        """P(chosen preferred) averaged over the two orders; a pair unparsed in one order
        takes the other's, NaN when unparsed in both."""
        both = np.vstack([self.p_first_chosen_first, 1.0 - self.p_first_rejected_first])
        counted = np.isfinite(both)
        total = np.where(counted, both, 0.0).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counted.any(axis=0), total / counted.sum(axis=0), np.nan)
