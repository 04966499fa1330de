"""Recipes: TOML files validated into typed component options (DESIGN.md, "Shape").

A recipe names its components by ``name`` (or ``plugin:name``) and gives their options
beside it::

    [prompts.sampler]
    name = "kdpp"
    k = 100

Every problem is a :class:`~rmaudit.errors.BadInput` whose one line names the recipe
file, the field (``reward_models[2].noise``) and the offending value.
"""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rmaudit import plugins
from rmaudit.components import Component
from rmaudit.errors import BadInput
from rmaudit.hashing import content_key
from rmaudit.options import DataFile

DEFAULT_METRICS: tuple[dict[str, Any], ...] = (
    {"name": "reta", "eta": 0.25},
    {"name": "reta-curve"},
    {"name": "best-of-n", "rank": 1},
    {"name": "best-of-n", "rank": 2, "label": "2nd-best-of-n"},
    {"name": "pairwise-accuracy"},
)


@dataclass(frozen=True)
class ComponentSpec:
    """A validated component slot of a recipe: what to build, and where it was written."""

    kind: str
    cls: type[Component]
    options: BaseModel
    field: str
    label: str

    def build(self) -> Component:
        return self.cls(self.options)


def validate_options(cls: type[Component], raw: dict[str, Any], *, field: str, file: str | None,
                     base_dir: Path | None) -> BaseModel:
    """Validate ``raw`` against ``cls.Options``; the first problem becomes a BadInput."""
    try:
        return cls.Options.model_validate(raw, context={"base_dir": base_dir, "file": file})
    except ValidationError as error:
        raise _bad_input(error, cls.Options, raw, file=file, field=field) from None


def component_spec(kind: str, raw: Any, *, field: str, file: str | None, base_dir: Path | None,
                   labelled: bool = False) -> ComponentSpec:
    """Resolve and validate one ``{name = ..., <options>}`` table of a recipe."""
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict):
        raise BadInput("expected a table with a 'name' key", file=file, field=field, value=raw)
    options = dict(raw)
    name = options.pop("name", None)
    if not isinstance(name, str) or not name:
        raise BadInput("missing component name", file=file, field=f"{field}.name",
                       value=name if name is not None else ...)
    label = options.pop("label", None) if labelled else None
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise BadInput("expected a non-empty string", file=file, field=f"{field}.label", value=label)
    found = plugins.resolve(kind, name, field=f"{field}.name", file=file)
    parsed = validate_options(found.cls, options, field=field, file=file, base_dir=base_dir)
    return ComponentSpec(kind, found.cls, parsed, field, label or name)


def _bad_input(error: ValidationError, model: type[BaseModel], raw: dict[str, Any], *,
               file: str | None, field: str) -> BadInput:
    first = error.errors()[0]
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
    where = f"{field}{loc}" if field else loc.lstrip(".")
    problem = first["msg"]
    if first["type"] == "extra_forbidden":
        known = sorted(model.model_fields)
        close = difflib.get_close_matches(str(first["loc"][-1]), known, n=1)
        problem = "unknown option" + (f"; did you mean {close[0]!r}?" if close
                                      else f"; known: {', '.join(known) or 'none'}")
    elif problem.startswith("Value error, "):
        problem = problem.removeprefix("Value error, ")
    value = first.get("input", ...)
    if first["type"] == "missing":
        value = ...
    return BadInput(problem, file=file, field=where, value=value)


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


class RecipeModel(_Strict):
    title: str = "untitled audit"
    batch_size: int = Field(256, ge=1)
    prompts: PromptsSection | None = None
    responses: ResponsesSection | None = None
    oracle: Any = None
    benchmark: BenchmarkSection | None = None
    reward_models: list[Any] = Field(min_length=1)
    metrics: list[Any] | None = None


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

    @property
    def per_prompt(self) -> int | None:
        return self.model.responses.per_prompt if self.model.responses else None

    @property
    def run_key(self) -> str:
        """Same recipe content (after validation), same run."""
        return content_key(self.model.model_dump(mode="json"))


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


def parse_recipe(raw: dict[str, Any], *, file: str, text: str = "", base_dir: Path | None = None) -> Recipe:
    try:
        model = RecipeModel.model_validate(raw, context={"base_dir": base_dir})
    except ValidationError as error:
        raise _bad_input(error, RecipeModel, raw, file=file, field="") from None

    def spec(kind: str, value: Any, where: str, labelled: bool = False) -> ComponentSpec:
        return component_spec(kind, value, field=where, file=file, base_dir=base_dir,
                              labelled=labelled)

    built_here = model.prompts is not None or model.responses is not None or model.oracle is not None
    if model.benchmark is not None and built_here:
        raise BadInput("give either [benchmark] (an imported benchmark file) or "
                       "[prompts], [responses] and [oracle], not both", file=file, field="benchmark")
    source = sampler = embedder = policy = oracle = None
    if model.benchmark is None:
        for section in ("prompts", "responses", "oracle"):
            if getattr(model, section) is None:
                raise BadInput(f"missing [{section}] section (or give [benchmark] file = ...)",
                               file=file, field=section)
        source = spec("prompt_source", model.prompts.source, "prompts.source")
        sampler = spec("prompt_sampler", model.prompts.sampler, "prompts.sampler")
        embedder = spec("embedder", model.prompts.embedder, "prompts.embedder")
        policy = spec("reference_policy", model.responses.policy, "responses.policy")
        oracle = spec("oracle", model.oracle, "oracle")

    reward_models = tuple(spec("reward_model", value, f"reward_models[{i}]", labelled=True)
                          for i, value in enumerate(model.reward_models))
    _check_unique_labels(reward_models, file, "reward_models")
    metric_values = model.metrics if model.metrics is not None else list(DEFAULT_METRICS)
    metrics = tuple(spec("metric", value, f"metrics[{i}]", labelled=True)
                    for i, value in enumerate(metric_values))
    _check_unique_labels(metrics, file, "metrics")
    recipe = Recipe(file, text, model, source, sampler, embedder, policy, oracle, reward_models,
                    metrics, model.benchmark.file if model.benchmark else None)
    if recipe.per_prompt is not None:
        check_pool_size(recipe, recipe.per_prompt)
    return recipe


def check_pool_size(recipe: Recipe, per_prompt: int) -> None:
    """Ask every metric whether it can run on pools of ``per_prompt`` responses."""
    for metric in recipe.metrics:
        try:
            metric.build().check_pool_size(per_prompt)
        except BadInput as error:
            raise error.located(file=recipe.path, field=metric.field) from None


def _check_unique_labels(specs: tuple[ComponentSpec, ...], file: str, section: str) -> None:
    seen: dict[str, str] = {}
    for spec in specs:
        if spec.label in seen:
            raise BadInput(f"label already used by {seen[spec.label]}; give each entry a distinct "
                           f"'label'", file=file, field=f"{spec.field}.label", value=spec.label)
        seen[spec.label] = spec.field
