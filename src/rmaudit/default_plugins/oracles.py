"""Built-in generic oracles: a reward model as the oracle (a gold RM, as in seed 002)."""

from __future__ import annotations

import math
from typing import Any, Literal, Sequence

from pydantic import Field, ValidationInfo, field_validator

from rmaudit import hookimpl
from rmaudit.components import ComponentOptions, Oracle, OracleLabel, Prompt, Response
from rmaudit.recipe import build_nested, nested_component


class RewardModelOracleOptions(ComponentOptions):
    model: dict[str, Any] = Field(description="the gold RM: a reward model table (name = ...)")
    transform: Literal["none", "sigmoid"] = Field(
        "none", description="sigmoid maps logits into (0, 1): RETA needs positive oracle scores")
    offset: float = Field(0.0, description="added after the transform")

    @field_validator("model")
    @classmethod
    def _model_resolves(cls, model: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        return nested_component("reward_model", model, field="model", info=info)


class RewardModelOracle(Oracle):
    """A reward model as the oracle: its (optionally transformed) score is the ground truth."""

    name = "rm-oracle"
    Options = RewardModelOracleOptions

    def __init__(self, options: RewardModelOracleOptions | None = None) -> None:
        super().__init__(options)
        self.model = build_nested("reward_model", self.options.model, field="model")
        self.simulated = self.model.simulated

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "version": self.version,
                "options": {"transform": self.options.transform, "offset": self.options.offset,
                            "model": self.model.identity()}}

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
