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

import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from rmaudit.components import Metric, PairSource
from rmaudit.errors import BadInput

from .budget import LabelBudget, cheap_judge, rm_labels
from .checks import (
    check_distinct_models,
    check_metric_inputs,
    check_pool_size,
    check_unique_labels,
    step_labels_problem,
)
from .executor_options import executor_options
from .model import Recipe, RecipeModel
from .process import DEFAULT_STEP_METRICS, process_sections
from .validation import ComponentSpec, bad_input, component_spec, refuse_bools

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
    model = _recipe_model(raw, file=file, base_dir=base_dir)
    spec = _SpecMaker(file, base_dir)
    solution_source, process_reward_models = process_sections(model, spec, file)
    built = _built_benchmark(model, spec)
    imported = model.benchmark is not None or model.benchmark_source is not None
    has_benchmark = built.source is not None or imported
    benchmark_source = (
        None
        if model.benchmark_source is None
        else spec("benchmark_source", model.benchmark_source, "benchmark")
    )
    pair_source, perturber = _pairs(model, spec, has_benchmark=has_benchmark)
    reward_models = tuple(
        spec("reward_model", value, f"reward_models[{i}]", labelled=True)
        for i, value in enumerate(model.reward_models)
    )
    check_unique_labels(reward_models, file, "reward_models")
    check_distinct_models(reward_models, file)
    recipe = Recipe(
        file,
        text,
        model,
        built.source,
        built.sampler,
        built.embedder,
        built.policy,
        built.oracle,
        reward_models,
        _metrics(
            model,
            spec,
            has_benchmark=has_benchmark,
            shift=perturber is not None,
            solutions=solution_source,
        ),
        model.benchmark.file if model.benchmark else None,
        pair_source=pair_source,
        perturber=perturber,
        executor=executor_options(model.executor, file=file),
        benchmark_source=benchmark_source,
        label_budget=built.label_budget,
        solution_source=solution_source,
        process_reward_models=process_reward_models,
    )
    if model.cheap_oracle is not None:
        cheap_table, cheap_rm = cheap_judge(
            model.cheap_oracle, file=file, rm_labels=[s.label for s in reward_models]
        )
        cheap = None if cheap_table is None else spec("oracle", cheap_table, "cheap_oracle")
        recipe = replace(recipe, cheap_oracle=cheap, cheap_reward_model=cheap_rm)
    check_metric_inputs(recipe)
    if recipe.per_prompt is not None:
        check_pool_size(recipe, recipe.per_prompt)
    return recipe


def _recipe_model(raw: dict[str, Any], *, file: str, base_dir: Path | None) -> RecipeModel:
    """The recipe's tables validated against their sections' models."""
    if isinstance(raw.get("benchmark"), dict) and "name" in raw["benchmark"]:
        raw = {**raw, "benchmark_source": raw["benchmark"]}
        del raw["benchmark"]
    refuse_bools(RecipeModel, raw, file=file, field="")
    try:
        return RecipeModel.model_validate(raw, context={"base_dir": base_dir})
    except ValidationError as error:
        raise bad_input(error, RecipeModel, raw, file=file, field="") from None


@dataclass(frozen=True)
class _SpecMaker:
    """Validates a component table of this recipe file (:func:`component_spec`)."""

    file: str
    base_dir: Path | None

    def __call__(self, kind: str, value: Any, where: str, labelled: bool = False) -> ComponentSpec:
        return component_spec(
            kind, value, field=where, file=self.file, base_dir=self.base_dir, labelled=labelled
        )


class _BuiltBenchmark(NamedTuple):
    """The components of a benchmark built here (all None when it is imported, or absent)."""

    source: ComponentSpec | None = None
    sampler: ComponentSpec | None = None
    embedder: ComponentSpec | None = None
    policy: ComponentSpec | None = None
    oracle: ComponentSpec | None = None
    label_budget: LabelBudget | None = None


def _built_benchmark(model: RecipeModel, spec: _SpecMaker) -> _BuiltBenchmark:
    """``[prompts]``, ``[responses]`` and ``[oracle]`` (its label budget split off), or none of
    them: a recipe audits a benchmark, preference pairs, or both, and only a pairs-only recipe
    may leave out every benchmark section."""
    file = spec.file
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
    if imported or not built_here and (model.pairs is not None or model.solutions is not None):
        return _BuiltBenchmark()
    for section in ("prompts", "responses", "oracle"):
        if getattr(model, section) is None:
            raise BadInput(
                f"missing [{section}] section (or give [benchmark] file = ...)",
                file=file,
                field=section,
            )
    assert model.prompts is not None and model.responses is not None  # checked just above
    source = spec("prompt_source", model.prompts.source, "prompts.source")
    sampler = spec("prompt_sampler", model.prompts.sampler, "prompts.sampler")
    embedder = spec("embedder", model.prompts.embedder, "prompts.embedder")
    policy = spec("reference_policy", model.responses.policy, "responses.policy")
    oracle_table, label_budget = LabelBudget.from_oracle_table(
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
    return _BuiltBenchmark(source, sampler, embedder, policy, oracle, label_budget)


def _pairs(
    model: RecipeModel, spec: _SpecMaker, *, has_benchmark: bool
) -> tuple[ComponentSpec | None, ComponentSpec | None]:
    """``[pairs]``: the pair source and, with ``[pairs.shift]``, the sweep's perturber."""
    if model.pairs is None:
        return None, None
    file = spec.file
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
            "derives pairs from a benchmark; add [prompts], [responses] and [oracle], or "
            "[benchmark]",
            file=file,
            field="pairs.source.name",
            value=pair_source.cls.name,
        )
    if model.pairs.shift is None:
        return pair_source, None
    return pair_source, _perturber_spec(
        model.pairs.shift.perturber, file=file, base_dir=spec.base_dir
    )


def _metrics(
    model: RecipeModel,
    spec: _SpecMaker,
    *,
    has_benchmark: bool,
    shift: bool,
    solutions: ComponentSpec | None,
) -> tuple[ComponentSpec, ...]:
    """``[[metrics]]``, or the defaults for what the recipe audits (for solutions: the step
    metrics their labels allow)."""
    values = (
        model.metrics
        if model.metrics is not None
        else [
            *(DEFAULT_METRICS if has_benchmark else ()),
            *(DEFAULT_PAIR_METRICS if model.pairs is not None else ()),
            *(DEFAULT_SHIFT_METRICS if shift else ()),
            *(DEFAULT_STEP_METRICS if solutions is not None else ()),
        ]
    )
    metrics = tuple(
        spec("metric", value, f"metrics[{i}]", labelled=True) for i, value in enumerate(values)
    )
    if model.metrics is None and solutions is not None:
        metrics = tuple(
            m
            for m in metrics
            if not issubclass(m.cls, Metric) or step_labels_problem(m.cls, solutions) is None
        )
    check_unique_labels(metrics, spec.file, "metrics")
    return metrics


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
