"""What a recipe holds once read: the TOML's sections as strict pydantic models
(:class:`RecipeModel`) and the validated :class:`Recipe` the runner takes, with each component
resolved to its :class:`~rmaudit.recipe.validation.ComponentSpec` (docs/recipes.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from rmaudit.components.keys import content_key
from rmaudit.components.options import DataFile
from rmaudit.components.vocabulary import SHIFT_TARGETS, ShiftTarget

from .budget import LabelBudget
from .executor_options import ExecutorOptions, LocalExecutorOptions
from .validation import ComponentSpec, StrictTable

#: RMs Under Distribution Shift (arXiv 2311.14743), Fig. 1-2: p = 0, 0.05, ..., 0.75 (p = 0 is the
#: in-distribution reference).
DEFAULT_SHIFT_LEVELS = tuple(round(0.05 * i, 2) for i in range(16))


class PromptsSection(StrictTable):
    source: Any
    sampler: Any = "all"
    embedder: Any = "tfidf-lsa"


class ResponsesSection(StrictTable):
    policy: Any
    per_prompt: int = Field(ge=2, description="N, responses per prompt")


class BenchmarkSection(StrictTable):
    file: DataFile


class ShiftSection(StrictTable):
    perturber: Any
    levels: list[float] = Field(
        list(DEFAULT_SHIFT_LEVELS),
        min_length=2,
        description="shift levels p; must include 0, the unshifted pairs",
    )
    targets: list[ShiftTarget] = Field(list(SHIFT_TARGETS), min_length=1)
    seed: int = Field(
        0, ge=0, description="seeds the perturbations (with the perturber's own seed)"
    )

    @field_validator("levels")
    @classmethod
    def _levels_from_zero(cls, levels: list[float]) -> list[float]:
        for p in levels:
            if not 0 <= p <= 1:
                raise ValueError(f"every level must lie in [0, 1], got {p}")
        if 0 not in levels:
            raise ValueError(
                "the levels must include 0: the unshifted pairs are the in-distribution reference"
            )
        if len(set(levels)) != len(levels):
            raise ValueError("levels must be distinct")
        return sorted(levels)

    @field_validator("targets")
    @classmethod
    def _distinct_targets(cls, targets: list[str]) -> list[str]:
        if len(set(targets)) != len(targets):
            raise ValueError("targets must be distinct")
        return targets


class PairsSection(StrictTable):
    source: Any
    shift: ShiftSection | None = None


class SolutionsSection(StrictTable):
    """``[solutions]``: the solutions process reward models are audited on (docs/prm.md)."""

    source: Any


class PlanSection(StrictTable):
    """``[plan]``: what ``rmaudit plan`` prices each call at, as a fraction of one oracle call
    (docs/budget.md, "What a plan spends"); its flags override these.  Nothing here changes a
    run's results, so the run key leaves it out."""

    cheap_price: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="one cheap-judge call"
    )
    generation_price: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="one generated response"
    )
    scoring_price: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="one RM scoring of a response"
    )


class RecipeModel(StrictTable):
    title: str = "untitled audit"
    batch_size: int = Field(256, ge=1)
    prompts: PromptsSection | None = None
    responses: ResponsesSection | None = None
    oracle: Any = None
    #: a cheap judge beside the oracle of a label budget: an oracle table, or
    #: ``{reward_model = "LABEL"}`` (docs/budget.md)
    cheap_oracle: Any = None
    benchmark: BenchmarkSection | None = None
    #: ``[benchmark]`` with a ``name``: a benchmark source (a benchmark assembled from files)
    benchmark_source: dict[str, Any] | None = None
    pairs: PairsSection | None = None
    #: one of reward_models and (with [solutions]) process_reward_models is given
    reward_models: list[Any] = Field(default_factory=list)
    solutions: SolutionsSection | None = None
    process_reward_models: list[Any] | None = None
    metrics: list[Any] | None = None
    executor: Any = None
    plan: PlanSection | None = None


@dataclass(frozen=True)
class Recipe:
    """A validated recipe, ready for the runner."""

    path: str
    text: str
    model: RecipeModel
    source: ComponentSpec | None
    sampler: ComponentSpec | None
    embedder: ComponentSpec | None
    policy: ComponentSpec | None
    oracle: ComponentSpec | None
    reward_models: tuple[ComponentSpec, ...]
    metrics: tuple[ComponentSpec, ...]
    benchmark_file: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    pair_source: ComponentSpec | None = None
    perturber: ComponentSpec | None = None
    executor: ExecutorOptions = field(default_factory=LocalExecutorOptions)
    benchmark_source: ComponentSpec | None = None
    #: which responses the oracle labels; None: every one (docs/budget.md)
    label_budget: LabelBudget | None = None
    #: a cheap judge beside the oracle: an oracle component, or one of the recipe's RMs by label
    cheap_oracle: ComponentSpec | None = None
    cheap_reward_model: str | None = None
    #: ``[solutions.source]`` and ``[[process_reward_models]]`` (docs/prm.md)
    solution_source: ComponentSpec | None = None
    process_reward_models: tuple[ComponentSpec, ...] = ()

    @property
    def per_prompt(self) -> int | None:
        return self.model.responses.per_prompt if self.model.responses else None

    @property
    def has_benchmark(self) -> bool:
        return (
            self.source is not None
            or self.benchmark_file is not None
            or self.benchmark_source is not None
        )

    @property
    def imports_benchmark(self) -> bool:
        """The benchmark comes from files (a benchmark file or a benchmark source)."""
        return self.benchmark_file is not None or self.benchmark_source is not None

    @property
    def shift(self) -> ShiftSection | None:
        return self.model.pairs.shift if self.model.pairs else None

    def run_identity(self) -> dict[str, Any]:
        """What the run key hashes: the validated recipe, less where its stages run and what
        the planner prices calls at."""
        # a recipe without a benchmark source, a cheap judge or solutions keeps the key it
        # had before they existed
        exclude = {"executor", "plan"} | {
            name
            for name in ("benchmark_source", "cheap_oracle", "solutions", "process_reward_models")
            if getattr(self.model, name) is None
        }
        return self.model.model_dump(mode="json", exclude=exclude)

    @property
    def run_key(self) -> str:
        """Same recipe content (after validation), same run.  Where the stages run is not
        part of it: the same audit on a laptop and on a cluster is one run, with one result."""
        return content_key(self.run_identity())
