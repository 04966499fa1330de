"""Simulated judges of the offline world: pairwise (``sim-judge``, and the presets
``sim-judge-fair`` and ``sim-judge-first``), a judge audit with a known position bias,
verbosity bias and tie rate, and rating (``sim-judge-rating``), a cheap judge for a label
budget (docs/judges.md).  Simulated: every output says so."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from rmaudit import hookimpl
from rmaudit.backends.simulated.pair_judge import SimulatedPairJudge, SimulatedRatingJudge
from rmaudit.components import (
    ComponentOptions,
    PairShown,
    PairVerdict,
    Prompt,
    Response,
    RewardModel,
)


class SimJudgeOptions(ComponentOptions):
    seed: int = 0
    noise: float = Field(1.0, gt=0, description="how blurred its view of quality is")
    position_bias: float = Field(
        0.0, ge=-1, le=1, description="added to P(first) of a decisive verdict"
    )
    verbosity: float = Field(
        0.0, description="weight of the log length difference in its preference"
    )
    tie_rate: float = Field(0.05, ge=0, lt=1, description="share of verdicts that are ties")


class SimJudge(RewardModel):
    """A simulated pairwise judge with a known position bias, verbosity bias and tie rate."""

    name = "sim-judge"
    Options = SimJudgeOptions
    options: SimJudgeOptions
    simulated = True

    def __init__(self, options: SimJudgeOptions | None = None) -> None:
        super().__init__(options)
        o = self.options
        self.judge = SimulatedPairJudge(o.seed, o.noise, o.position_bias, o.verbosity, o.tie_rate)

    def judges_pairs(self) -> bool:
        return True

    def judge_pairs(self, batch: Sequence[PairShown]) -> list[PairVerdict]:
        verdicts = []
        for shown in batch:
            judged = self.judge.judge(shown.prompt.text, shown.first.text, shown.second.text)
            verdicts.append(
                PairVerdict(
                    judged.verdict,  # type: ignore[arg-type]
                    judged.p_first,
                    f"[[{ {'first': 'A', 'second': 'B', 'tie': 'C'}[judged.verdict] }]]",
                    (judged.verdict,),  # type: ignore[arg-type]
                    from_logprobs=True,
                )
            )
        return verdicts


class FairOptions(SimJudgeOptions):
    position_bias: float = Field(0.0, ge=-1, le=1)


class FirstOptions(SimJudgeOptions):
    position_bias: float = Field(0.2, ge=-1, le=1, description="prefers the first shown")


class SimJudgeFair(SimJudge):
    """A simulated pairwise judge without position or verbosity bias (5 % ties)."""

    name = "sim-judge-fair"
    Options = FairOptions


class SimJudgeFirst(SimJudge):
    """A simulated pairwise judge that favours the answer shown first (+0.2 on P(first))."""

    name = "sim-judge-first"
    Options = FirstOptions


class SimJudgeRatingOptions(ComponentOptions):
    seed: int = 0
    noise: float = Field(1.0, gt=0, description="SD of its error on the 1-10 scale")
    verbosity: float = Field(0.0, description="weight of the log length in its rating")


class SimJudgeRating(RewardModel):
    """A simulated rating judge: the simulated oracle's view of quality, blurred, as a score."""

    name = "sim-judge-rating"
    Options = SimJudgeRatingOptions
    options: SimJudgeRatingOptions
    simulated = True

    def __init__(self, options: SimJudgeRatingOptions | None = None) -> None:
        super().__init__(options)
        o = self.options
        self.judge = SimulatedRatingJudge(o.seed, o.noise, o.verbosity)

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        return [self.judge.rate(prompt.text, response.text) for prompt, response in batch]


@hookimpl
def register_reward_models(register):
    for cls in (SimJudge, SimJudgeFair, SimJudgeFirst, SimJudgeRating):
        register(cls)
