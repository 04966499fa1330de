"""Recipes: TOML files validated into typed component options (docs/recipes.md).

A recipe names its components by ``name`` (or ``plugin:name``) and gives their options
beside it::

    [prompts.sampler]
    name = "kdpp"
    k = 100

Every problem is a :class:`~rmaudit.errors.BadInput` whose one line names the recipe
file, the field (``reward_models[2].noise``) and the offending value.
"""

from __future__ import annotations

import importlib.util
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rmaudit.components import PairSource
from rmaudit.components.keys import content_key
from rmaudit.components.options import DataFile
from rmaudit.components.vocabulary import SHIFT_TARGETS, ShiftTarget
from rmaudit.errors import BadInput
from rmaudit.recipe.budget import LabelBudget, cheap_judge, rm_labels, split_budget
from rmaudit.recipe.executor_options import (
    EXECUTOR_OPTIONS,
    INSTALL_HINT,
    ExecutorOptions,
    LocalExecutorOptions,
)
from rmaudit.recipe.validation import (
    ComponentSpec,
    bad_input,
    component_spec,
    refuse_bools,
)

DEFAULT_METRICS: tuple[dict[str, Any], ...] = (
    {"name": "reta", "eta": 0.25},
    {"name": "reta-curve"},
    {"name": "best-of-n", "rank": 1},
    {"name": "best-of-n", "rank": 2, "label": "2nd-best-of-n"},
    {"name": "pairwise-accuracy"},
)
#: Added to the defaults when the recipe has [pairs] (and its [pairs.shift]).
DEFAULT_PAIR_METRICS: tuple[dict[str, Any], ...] = (
    {"name": "pair-accuracy"},
    {"name": "calibration"},
    {"name": "bt-ece"},
)
DEFAULT_SHIFT_METRICS: tuple[dict[str, Any], ...] = ({"name": "shift-curves"},)
#: RMs Under Distribution Shift (arXiv 2311.14743), Fig. 1-2: p = 0, 0.05, ..., 0.75 (p = 0 is the
#: in-distribution reference).
DEFAULT_SHIFT_LEVELS = tuple(round(0.05 * i, 2) for i in range(16))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PromptsSection(_Strict):
    source: Any
    sampler: Any = "all"
    embedder: Any = "tfidf-lsa"


class ResponsesSection(_Strict):
    policy: Any
    per_prompt: int = Field(ge=2, description="N, responses per prompt")


class BenchmarkSection(_Strict):
    file: DataFile


class ShiftSection(_Strict):
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


class PairsSection(_Strict):
    source: Any
    shift: ShiftSection | None = None


class RecipeModel(_Strict):
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
    reward_models: list[Any] = Field(min_length=1)
    metrics: list[Any] | None = None
    executor: Any = None


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
        """What the run key hashes: the validated recipe, less where its stages run."""
        # a recipe without a benchmark source or a cheap judge keeps the key it had before
        # they existed
        exclude = {"executor"} | {
            name
            for name in ("benchmark_source", "cheap_oracle")
            if getattr(self.model, name) is None
        }
        return self.model.model_dump(mode="json", exclude=exclude)

    @property
    def run_key(self) -> str:
        """Same recipe content (after validation), same run.  Where the stages run is not
        part of it: the same audit on a laptop and on a cluster is one run, with one result."""
        return content_key(self.run_identity())


def load_recipe(path: str | Path) -> Recipe:
    path = Path(path)
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput("recipe file not found", file=file) from None
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read recipe ({error})", file=file) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise BadInput(f"malformed TOML: {error}", file=file) from None
    return parse_recipe(raw, file=file, text=text, base_dir=path.parent)


def parse_recipe(
    raw: dict[str, Any], *, file: str, text: str = "", base_dir: Path | None = None
) -> Recipe:
    if isinstance(raw.get("benchmark"), dict) and "name" in raw["benchmark"]:
        raw = {**raw, "benchmark_source": raw["benchmark"]}
        del raw["benchmark"]
    refuse_bools(RecipeModel, raw, file=file, field="")
    try:
        model = RecipeModel.model_validate(raw, context={"base_dir": base_dir})
    except ValidationError as error:
        raise bad_input(error, RecipeModel, raw, file=file, field="") from None

    def spec(kind: str, value: Any, where: str, labelled: bool = False) -> ComponentSpec:
        return component_spec(
            kind, value, field=where, file=file, base_dir=base_dir, labelled=labelled
        )

    built_here = (
        model.prompts is not None or model.responses is not None or model.oracle is not None
    )
    imported = model.benchmark is not None or model.benchmark_source is not None
    if imported and built_here:
        raise BadInput(
            "give either [benchmark] (an imported benchmark file) or "
            "[prompts], [responses] and [oracle], not both",
            file=file,
            field="benchmark",
        )
    source = sampler = embedder = policy = oracle = label_budget = None
    # A recipe audits a benchmark, preference pairs, or both: only a pairs-only recipe may
    # leave out every benchmark section.
    if not imported and (built_here or model.pairs is None):
        for section in ("prompts", "responses", "oracle"):
            if getattr(model, section) is None:
                raise BadInput(
                    f"missing [{section}] section (or give [benchmark] file = ...)",
                    file=file,
                    field=section,
                )
        source = spec("prompt_source", model.prompts.source, "prompts.source")
        sampler = spec("prompt_sampler", model.prompts.sampler, "prompts.sampler")
        embedder = spec("embedder", model.prompts.embedder, "prompts.embedder")
        policy = spec("reference_policy", model.responses.policy, "responses.policy")
        oracle_table, label_budget = split_budget(
            model.oracle,
            file=file,
            rm_labels=rm_labels(model.reward_models),
            per_prompt=model.responses.per_prompt,
        )
        oracle = spec("oracle", oracle_table, "oracle")
        if getattr(source.cls, "needs_benchmark", False):
            raise BadInput(
                "derives pairs from a benchmark; it has no prompts of its own "
                "(use it under [pairs.source])",
                file=file,
                field="prompts.source.name",
                value=source.cls.name,
            )
    has_benchmark = source is not None or imported
    benchmark_source = (
        None
        if model.benchmark_source is None
        else spec("benchmark_source", model.benchmark_source, "benchmark")
    )

    pair_source = perturber = None
    if model.pairs is not None:
        pair_source = spec("prompt_source", model.pairs.source, "pairs.source")
        if not issubclass(pair_source.cls, PairSource):
            raise BadInput(
                "not a preference-pair source",
                file=file,
                field="pairs.source.name",
                value=pair_source.cls.name,
            )
        if pair_source.cls.needs_benchmark and not has_benchmark:
            raise BadInput(
                "derives pairs from a benchmark; add [prompts], [responses] and "
                "[oracle], or [benchmark]",
                file=file,
                field="pairs.source.name",
                value=pair_source.cls.name,
            )
        if model.pairs.shift is not None:
            perturber = _perturber_spec(model.pairs.shift.perturber, file=file, base_dir=base_dir)

    reward_models = tuple(
        spec("reward_model", value, f"reward_models[{i}]", labelled=True)
        for i, value in enumerate(model.reward_models)
    )
    _check_unique_labels(reward_models, file, "reward_models")
    metric_values = (
        model.metrics
        if model.metrics is not None
        else [
            *(DEFAULT_METRICS if has_benchmark else ()),
            *(DEFAULT_PAIR_METRICS if model.pairs is not None else ()),
            *(DEFAULT_SHIFT_METRICS if perturber is not None else ()),
        ]
    )
    metrics = tuple(
        spec("metric", value, f"metrics[{i}]", labelled=True)
        for i, value in enumerate(metric_values)
    )
    _check_unique_labels(metrics, file, "metrics")
    recipe = Recipe(
        file,
        text,
        model,
        source,
        sampler,
        embedder,
        policy,
        oracle,
        reward_models,
        metrics,
        model.benchmark.file if model.benchmark else None,
        pair_source=pair_source,
        perturber=perturber,
        executor=_executor_options(model.executor, file=file),
        benchmark_source=benchmark_source,
        label_budget=label_budget,
    )
    if model.cheap_oracle is not None:
        cheap_table, cheap_rm = cheap_judge(
            model.cheap_oracle, file=file, rm_labels=[s.label for s in reward_models]
        )
        cheap = None if cheap_table is None else spec("oracle", cheap_table, "cheap_oracle")
        recipe = replace(recipe, cheap_oracle=cheap, cheap_reward_model=cheap_rm)
    _check_metric_inputs(recipe)
    if recipe.per_prompt is not None:
        check_pool_size(recipe, recipe.per_prompt)
    return recipe


def _executor_options(raw: Any, *, file: str) -> ExecutorOptions:
    """The ``executor`` table: ``local`` (default) or ``ray`` with its cluster options."""
    if raw is None:
        return LocalExecutorOptions()
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict):
        raise BadInput("expected a table with a 'name' key", file=file, field="executor", value=raw)
    name = raw.get("name", ...)
    if name not in EXECUTOR_OPTIONS:
        problem = "missing executor name" if name is ... else "unknown executor"
        raise BadInput(
            f"{problem}; known: {', '.join(EXECUTOR_OPTIONS)}",
            file=file,
            field="executor.name",
            value=name,
        )
    options_model = EXECUTOR_OPTIONS[name]
    try:
        options = options_model.model_validate(raw)
    except ValidationError as error:
        raise bad_input(error, options_model, raw, file=file, field="executor") from None
    if name == "ray" and importlib.util.find_spec("ray") is None:
        raise BadInput(
            f"the ray executor needs Ray, which is not installed: {INSTALL_HINT}",
            file=file,
            field="executor.name",
            value=name,
        )
    return options


def _perturber_spec(raw: Any, *, file: str, base_dir: Path | None) -> ComponentSpec:
    """The sweep's perturber: its level p comes from ``levels``, so the table may not set it."""
    where = "pairs.shift.perturber"
    if isinstance(raw, dict) and "p" in raw:
        raise BadInput(
            "the shift level is set by pairs.shift.levels, not by the perturber",
            file=file,
            field=f"{where}.p",
            value=raw["p"],
        )
    perturber = component_spec("shift_perturber", raw, field=where, file=file, base_dir=base_dir)
    if "p" not in perturber.cls.Options.model_fields:
        raise BadInput(
            "a shift sweep needs a perturber with a level option 'p'",
            file=file,
            field=f"{where}.name",
            value=perturber.cls.name,
        )
    return perturber


def _check_metric_inputs(recipe: Recipe) -> None:
    """Each metric's scope and needs against what the recipe provides, before anything runs."""
    for metric in recipe.metrics:
        problem = None
        if metric.cls.scope in ("rm", "run") and not recipe.has_benchmark:
            problem = "needs a benchmark ([prompts], [responses] and [oracle], or [benchmark])"
        elif metric.cls.scope == "pairs" and recipe.pair_source is None:
            problem = "needs preference pairs ([pairs.source])"
        elif "shift" in metric.cls.needs and recipe.shift is None:
            problem = "needs a shift sweep ([pairs.shift])"
        elif (
            recipe.label_budget is not None
            and metric.cls.scope in ("rm", "run")
            and not metric.cls.supports_label_budget
        ):
            problem = (
                "needs every response labelled: it has no estimator for a label budget "
                "(docs/budget.md lists those that do)"
            )
        if problem:
            raise BadInput(
                problem, file=recipe.path, field=f"{metric.field}.name", value=metric.cls.name
            )
        if recipe.shift is not None:
            try:
                metric.build().check_shift_levels(tuple(recipe.shift.levels))
            except BadInput as error:
                raise error.located(file=recipe.path, field=metric.field) from None


def check_pool_size(recipe: Recipe, per_prompt: int) -> None:
    """Ask every metric whether it can run on pools of ``per_prompt`` responses."""
    for metric in recipe.metrics:
        try:
            metric.build().check_pool_size(per_prompt)
        except BadInput as error:
            located = error.located(file=recipe.path, field=metric.field)
            raise BadInput(
                located.problem,
                file=located.file,
                field=metric_entry(recipe, located.field),
                value=located.value,
            ) from None


def metric_entry(recipe: Recipe, field: str) -> str:
    """A metric's recipe field; a default metric is said to be one (the user wrote none)."""
    if recipe.model.metrics is None:
        return f"{field} (a default metric: the recipe lists no [[metrics]])"
    return field


def _check_unique_labels(specs: tuple[ComponentSpec, ...], file: str, section: str) -> None:
    seen: dict[str, str] = {}
    for spec in specs:
        if spec.label in seen:
            raise BadInput(
                f"label already used by {seen[spec.label]}; give each entry a distinct 'label'",
                file=file,
                field=f"{spec.field}.label",
                value=spec.label,
            )
        seen[spec.label] = spec.field
