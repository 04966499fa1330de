"""Built-in generic oracles: a reward model as the oracle (a gold RM, as in Rethinking RM
Evaluation, arXiv 2410.05584), and
labels made elsewhere, read from a file."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from rmaudit import hookimpl
from rmaudit.benchmark.keyed_files import ALL_AT_ONCE, read_keyed_values
from rmaudit.components import ComponentOptions, Oracle, OracleLabel, Prompt, Response, Source
from rmaudit.components.options import NestedRewardModel, file_source
from rmaudit.default_plugins.reward_models import KeyedFileOptions


class RewardModelOracleOptions(ComponentOptions):
    model: NestedRewardModel = Field(description="the gold RM: a reward model table (name = ...)")
    transform: Literal["none", "sigmoid"] = Field(
        "none", description="sigmoid maps logits into (0, 1): RETA needs positive oracle scores"
    )
    offset: float = Field(0.0, description="added after the transform")


class RewardModelOracle(Oracle[RewardModelOracleOptions]):
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


class LabelsFileOptions(KeyedFileOptions):
    label_field: str = "label"
    description: str = Field(
        "labels file", description="who labelled, as the run's provenance names the oracle"
    )


class LabelsFile(Oracle[LabelsFileOptions]):
    """Oracle labels made elsewhere (human or judge), read from a file (.jsonl, .json, .csv,
    .parquet, optionally .gz) keyed by prompt + response text, your ids, or rmaudit's ids."""

    name = "labels-file"
    Options = LabelsFileOptions

    def __init__(self, options: LabelsFileOptions | None = None) -> None:
        super().__init__(options)
        self.table = read_keyed_values(
            self.options.path, self.options.key_fields(self.options.label_field), "label"
        )

    def label(self, batch: Sequence[tuple[Prompt, Response]]) -> list[OracleLabel]:
        return [OracleLabel(score=v, samples=(v,)) for v in self.table.lookup(batch, "label")]

    def preferred_batch_items(self) -> int:
        return ALL_AT_ONCE

    def sources(self) -> tuple[Source, ...]:
        return (file_source("labels", self.options.path, self.options.description),)


@hookimpl
def register_oracles(register):
    register(RewardModelOracle)
    register(LabelsFile)
