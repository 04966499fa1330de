"""Built-in generic reward models: ensembles of other RMs and scores read from a file."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.benchmark.keyed_files import ALL_AT_ONCE, KeyFields, KeyKind, read_keyed_values
from rmaudit.components import ComponentOptions, Prompt, Response, RewardModel, Source
from rmaudit.components.options import NEW_OPTION, HashedDataFile, NestedRewardModel, file_source


class EnsembleOptions(ComponentOptions):
    members: list[NestedRewardModel] = Field(min_length=2, description="member RM tables")
    aggregate: Literal["mean", "median", "min"] = "mean"


_AGGREGATES: dict[str, Callable[..., Any]] = {"mean": np.mean, "median": np.median, "min": np.min}


class Ensemble(RewardModel[EnsembleOptions]):
    """Mean (or median, min) of several reward models' scores, as RMEns-3x7B in the RETA paper."""

    name = "ensemble"
    Options = EnsembleOptions

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.members = [member.build() for member in self.options.members]
        self.simulated = any(m.simulated for m in self.members)

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        table = np.array([member.score(batch) for member in self.members], dtype=float)
        combine = _AGGREGATES[self.options.aggregate]
        return [float(v) for v in combine(table, axis=0)]

    def sources(self) -> tuple[Source, ...]:
        return tuple(source for member in self.members for source in member.sources())


class KeyedFileOptions(ComponentOptions):
    """Where a file of values computed elsewhere keys its rows (docs/bring-your-own-data.md)."""

    path: HashedDataFile  # its content, not its location, decides whether stored values hold
    match: Annotated[KeyKind, NEW_OPTION] = Field(
        "rmaudit-id",
        description="what a row is keyed by: 'text' (prompt + response text), "
        "'id' (your response ids) or 'rmaudit-id'",
    )
    id_field: str = Field("response_id", description="the id column (match = 'id' or 'rmaudit-id')")
    prompt_field: Annotated[str, NEW_OPTION] = Field("prompt", description="match = 'text'")
    response_field: Annotated[str, NEW_OPTION] = Field("response", description="match = 'text'")

    def key_fields(self, value_field: str) -> KeyFields:
        return KeyFields(
            self.match, self.prompt_field, self.response_field, self.id_field, value_field
        )


class ScoresFileOptions(KeyedFileOptions):
    score_field: str = "score"


class ScoresFile(RewardModel[ScoresFileOptions]):
    """Scores computed elsewhere, read from a file (.jsonl, .json, .csv, .parquet, optionally
    .gz) keyed by prompt + response text, your ids, or rmaudit's response ids."""

    name = "scores-file"
    Options = ScoresFileOptions

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.table = read_keyed_values(
            self.options.path, self.options.key_fields(self.options.score_field), "score"
        )

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        return self.table.lookup(batch, "score")

    def check_items(self, items: Sequence[tuple[Prompt, Response]]) -> None:
        self.table.lookup(items, "score", record=False)

    def check_response_ids(self, ids: Sequence[str]) -> None:
        if self.options.match == "rmaudit-id":  # other keys need the texts or their meta
            self.table.check_ids(ids, "score")

    def preferred_batch_items(self) -> int:
        return ALL_AT_ONCE

    def sources(self) -> tuple[Source, ...]:
        return (file_source("scores", self.options.path),)

    def report(self) -> dict[str, Any]:
        count, first = self.table.unmatched()
        if not count or not self.table.used:  # nothing looked up (all stored): nothing to say
            return {}
        return {"rows matching no scored response": f"{count} (first: {first})"}


@hookimpl
def register_reward_models(register):
    register(Ensemble)
    register(ScoresFile)
