"""Simulated pairwise judges with a known position bias, verbosity bias and tie rate, so a judge
audit can be checked against the truth (rmaudit's offline world, not a real model).

The judge reads both answers through :func:`judged_quality` (the simulated oracle's view),
adds ``verbosity`` × the difference of their log lengths in characters, and prefers the first
with probability ``sigmoid(difference / noise)``, moved by ``position_bias`` toward the first
shown (and clipped to [0, 1]); with probability ``tie_rate`` it says tie instead.  Its
verdict is drawn from that distribution (a judge sampled at temperature 1), and it reports
the distribution itself as P(first) — what a real judge's verdict-token log-probabilities
give.  Everything is a pure function of the seed and the texts shown, in their order.

A rating judge (:class:`SimulatedRatingJudge`) rates one response: its expected rating is
:func:`judged_quality` plus ``verbosity`` × its log length, plus a fixed error per text of SD
``noise`` (what a real judge's expected rating under its rating-token log-probabilities gives).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._random import Draws, sigmoid
from .judge import response_quality


@dataclass(frozen=True)
class PairJudgement:
    verdict: str  # "first", "second" or "tie"
    p_first: float  # P(first) + ½ P(tie)
    probabilities: tuple[float, float, float]  # P(first), P(second), P(tie)


@dataclass(frozen=True)
class SimulatedPairJudge:
    seed: int = 0
    noise: float = 1.0
    position_bias: float = 0.0
    verbosity: float = 0.0
    tie_rate: float = 0.0

    def __post_init__(self) -> None:
        if self.noise <= 0 or not 0 <= self.tie_rate < 1 or abs(self.position_bias) > 1:
            raise ValueError(
                f"expected noise > 0, 0 <= tie_rate < 1, |position_bias| <= 1, got {self}"
            )

    def probabilities(self, prompt: str, first: str, second: str) -> tuple[float, float, float]:
        difference = response_quality(prompt, first) - response_quality(prompt, second)
        difference += self.verbosity * (math.log1p(len(first)) - math.log1p(len(second)))
        decisive = min(1.0, max(0.0, sigmoid(difference / self.noise) + self.position_bias))
        return (
            (1 - self.tie_rate) * decisive,
            (1 - self.tie_rate) * (1 - decisive),
            self.tie_rate,
        )

    def judge(self, prompt: str, first: str, second: str) -> PairJudgement:
        p = self.probabilities(prompt, first, second)
        u = Draws("pair-judge", self.seed, prompt, first, second).uniform()
        verdict = "first" if u < p[0] else "second" if u < p[0] + p[1] else "tie"
        return PairJudgement(verdict, p[0] + 0.5 * p[2], p)


@dataclass(frozen=True)
class SimulatedRatingJudge:
    seed: int = 0
    noise: float = 1.0
    verbosity: float = 0.0

    def __post_init__(self) -> None:
        if self.noise <= 0:
            raise ValueError(f"expected noise > 0, got {self}")

    def rate(self, prompt: str, response: str) -> float:
        quality = response_quality(prompt, response)
        quality += self.verbosity * math.log1p(len(response))
        return quality + self.noise * Draws("rating-judge", self.seed, prompt, response).normal()
