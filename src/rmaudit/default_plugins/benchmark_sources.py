"""Built-in benchmark sources: labelled benchmarks assembled from files made elsewhere
(:mod:`rmaudit.benchmark.layouts`), and the per-RM scores of the generic layout."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field, ValidationInfo

from rmaudit import hookimpl
from rmaudit.benchmark.keyed_files import text_key
from rmaudit.benchmark.layouts import alpacaeval, expand, generic
from rmaudit.components import (
    BenchmarkContent,
    BenchmarkSource,
    ComponentOptions,
    Prompt,
    Response,
    RewardModel,
    Source,
)
from rmaudit.components.options import OPERATIONAL, HashedDataFile, file_source
from rmaudit.errors import BadInput

MISSING_FOLDER_HINT = (
    "put the AlpacaEval outputs and annotations there (docs/bring-your-own-data.md)"
)


def _existing_folder(value: Path, info: ValidationInfo) -> Path:
    base = (info.context or {}).get("base_dir")
    path = value if value.is_absolute() or base is None else Path(base) / value
    if not path.is_dir():
        hint = info.data.get("missing_hint") or MISSING_FOLDER_HINT
        raise ValueError(f"folder not found: {path.resolve()}; {hint}")
    return path.resolve()


#: A folder relative to the recipe's folder; it must exist (the error says what to put there).
DataFolder = Annotated[Path, AfterValidator(_existing_folder)]


class AlpacaEvalOptions(ComponentOptions):
    # the files' content keys the benchmark; where they lie, and the hint, do not
    missing_hint: Annotated[str, OPERATIONAL] = Field(
        MISSING_FOLDER_HINT, description="what the error for a missing root says to download"
    )
    root: Annotated[DataFolder, OPERATIONAL] = Field(description="the folder of the files")
    outputs: list[str] = Field(
        min_length=1,
        description="model_outputs files (globs relative "
        "to root, each in natural order); file k gives sample k",
    )
    annotations: list[str] = Field(min_length=1, description="annotations files (globs)")
    title: str = "AlpacaEval"


class AlpacaEval(BenchmarkSource[AlpacaEvalOptions]):
    """AlpacaEval-style outputs files (one response per prompt each) + annotations (the
    preference is the oracle score): reward-bench's best-of-n layout."""

    name = "alpacaeval"
    Options = AlpacaEvalOptions

    def load(self) -> BenchmarkContent:
        o = self.options
        return alpacaeval(
            expand(o.root, o.outputs, "outputs"),
            expand(o.root, o.annotations, "annotations"),
            title=o.title,
        )


class BenchmarkJsonlOptions(ComponentOptions):
    path: HashedDataFile = Field(
        description="one JSON record per prompt (docs/benchmark-layout.schema.json)"
    )
    title: str = "benchmark from a file"


class BenchmarkJsonl(BenchmarkSource[BenchmarkJsonlOptions]):
    """A benchmark file in the generic layout: per prompt, its responses, their oracle scores
    and optionally RMs' scores (read by the ``benchmark-scores`` reward model)."""

    name = "benchmark-jsonl"
    Options = BenchmarkJsonlOptions

    def load(self) -> BenchmarkContent:
        return generic(self.options.path, title=self.options.title)[0]


class BenchmarkScoresOptions(ComponentOptions):
    path: HashedDataFile = Field(description="a generic-layout benchmark file")
    rm: str = Field(description="the key of its `scores` object to read")


class BenchmarkScores(RewardModel[BenchmarkScoresOptions]):
    """One RM's scores from a generic-layout benchmark file (its ``scores.<rm>`` lists)."""

    name = "benchmark-scores"
    Options = BenchmarkScoresOptions

    def __init__(self, options: BenchmarkScoresOptions | None = None) -> None:
        super().__init__(options)
        tables = generic(self.options.path, title="")[1]
        if self.options.rm not in tables:
            raise BadInput(
                f"no such RM in the file's scores (has: {', '.join(tables) or 'none'})",
                field="rm",
                value=self.options.rm,
            )
        self.table = tables[self.options.rm]

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        keys = [(text_key(p.text), text_key(r.text)) for p, r in batch]
        missing = [i for i, key in enumerate(keys) if key not in self.table]
        if missing:
            raise BadInput(
                f"{len(missing)} of {len(batch)} responses have no score for {self.options.rm!r}",
                file=str(self.options.path),
                field=f"scores.{self.options.rm}",
            )
        return [self.table[key] for key in keys]

    def check_items(self, items: Sequence[tuple[Prompt, Response]]) -> None:
        self.score(items)

    def sources(self) -> tuple[Source, ...]:
        return (file_source("scores", self.options.path, self.options.rm),)


@hookimpl
def register_benchmark_sources(register):
    register(AlpacaEval)
    register(BenchmarkJsonl)


@hookimpl
def register_reward_models(register):
    register(BenchmarkScores)
