"""Built-in generic oracles: a reward model as the oracle (a gold RM, as in seed 002)."""

from __future__ import annotations

import math
from typing import Literal, Sequence

from pydantic import Field

from rmaudit import hookimpl
from rmaudit.components import ComponentOptions, Oracle, OracleLabel, Prompt, Response
from rmaudit.options import NestedRewardModel


class RewardModelOracleOptions(ComponentOptions):
    model: NestedRewardModel = Field(description="the gold RM: a reward model table (name = ...)")
    transform: Literal["none", "sigmoid"] = Field(
        "none", description="sigmoid maps logits into (0, 1): RETA needs positive oracle scores")
    offset: float = Field(0.0, description="added after the transform")


class RewardModelOracle(Oracle):
    """A reward model as the oracle: its (optionally transformed) score is the ground truth."""

    name = "rm-oracle"
    Options = RewardModelOracleOptions

    def __init__(self, options: RewardModelOracleOptions | None = None) -> None:
        super().__init__(options)
        self.model = self.options.model.build()
        self.simulated = self.model.simulated

    def label(self, batch: Sequence[tuple[Prompt, Response]]) -> list[OracleLabel]:
        labels = []
        for raw in self.model.score(batch):
            value = float(raw)
            if self.options.transform == "sigmoid":
                value = _sigmoid(value)
            value += self.options.offset
            labels.append(OracleLabel(score=value, samples=(value,)))
        return labels


def _sigmoid(x: float) -> float:
    # the two branches avoid overflow in exp for large |x|
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


@hookimpl
def register_oracles(register):
    register(RewardModelOracle)
