"""Checks across a recipe's sections, once every component is resolved and before anything
runs: each metric against what the recipe provides (a benchmark, pairs, a shift sweep, a label
budget) and the pool size N, one label per reward model and per metric, and no reward model
twice."""

from __future__ import annotations

from rmaudit.components import Metric
from rmaudit.components.keys import content_key
from rmaudit.components.options import component_identity
from rmaudit.errors import BadInput

from .model import Recipe
from .validation import ComponentSpec


def check_metric_inputs(recipe: Recipe) -> None:
    """Each metric's scope and needs against what the recipe provides, before anything runs."""
    for metric in recipe.metrics:
        cls = _metric_class(metric)
        problem = None
        if cls.scope in ("rm", "run") and not recipe.has_benchmark:
            problem = "needs a benchmark ([prompts], [responses] and [oracle], or [benchmark])"
        elif cls.scope == "pairs" and recipe.pair_source is None:
            problem = "needs preference pairs ([pairs.source])"
        elif cls.scope == "steps":
            problem = step_labels_problem(cls, recipe.solution_source)
        elif "shift" in cls.needs and recipe.shift is None:
            problem = "needs a shift sweep ([pairs.shift])"
        elif (
            recipe.label_budget is not None
            and cls.scope in ("rm", "run")
            and not cls.supports_label_budget
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
                _built_metric(metric).check_shift_levels(tuple(recipe.shift.levels))
            except BadInput as error:
                raise error.located(file=recipe.path, field=metric.field) from None


def step_labels_problem(metric: type[Metric], source: ComponentSpec | None) -> str | None:
    """Why a step metric cannot run on the recipe's solutions (None: it can)."""
    if source is None:
        return "needs solutions ([solutions.source]) and process reward models"
    labels = getattr(source.cls, "labels", ())
    lacking = [need for need in metric.needs if need not in labels]
    if lacking:
        return (
            f"needs labels its solution source {source.cls.name!r} lacks: "
            f"{', '.join(lacking)} (it has: {', '.join(labels) or 'none'})"
        )
    return None


def check_pool_size(recipe: Recipe, per_prompt: int) -> None:
    """Ask every metric whether it can run on pools of ``per_prompt`` responses."""
    for metric in recipe.metrics:
        try:
            _built_metric(metric).check_pool_size(per_prompt)
        except BadInput as error:
            located = error.located(file=recipe.path, field=metric.field)
            raise BadInput(
                located.problem,
                file=located.file,
                field=metric_entry(recipe, located.field or metric.field),
                value=located.value,
            ) from None


def metric_entry(recipe: Recipe, field: str) -> str:
    """A metric's recipe field; a default metric is said to be one (the user wrote none)."""
    if recipe.model.metrics is None:
        return f"{field} (a default metric: the recipe lists no [[metrics]])"
    return field


def check_unique_labels(specs: tuple[ComponentSpec, ...], file: str, section: str) -> None:
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


def check_distinct_models(specs: tuple[ComponentSpec, ...], file: str) -> None:
    """No two reward models with one identity (the same component, options and data files):
    their results would be stored under one key."""
    seen: dict[str, ComponentSpec] = {}
    for spec in specs:
        key = content_key(component_identity(spec.cls, spec.options))
        if key in seen:
            raise BadInput(
                f"the same model as {seen[key].field} (label {seen[key].label!r}): the same "
                "component with the same options and data is audited once",
                file=file,
                field=spec.field,
                value=spec.label,
            )
        seen[key] = spec


def _metric_class(spec: ComponentSpec) -> type[Metric]:
    """A ``[[metrics]]`` entry's class (the recipe's validator resolved it among the metrics)."""
    if not issubclass(spec.cls, Metric):
        raise TypeError(f"{spec.field} resolved to {spec.cls.__name__}, not a metric")
    return spec.cls


def _built_metric(spec: ComponentSpec) -> Metric:
    built = spec.build()
    if not isinstance(built, Metric):
        raise TypeError(f"{spec.field} built {type(built).__name__}, not a metric")
    return built
