"""``[solutions]`` and ``[[process_reward_models]]``: a recipe that audits process reward
models (docs/prm.md) on a solution source, with the step metrics its labels allow."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rmaudit.components import SolutionSource
from rmaudit.errors import BadInput

from .checks import check_unique_labels
from .model import RecipeModel
from .validation import ComponentSpec

#: the step metrics of a ``[solutions]`` recipe without ``[[metrics]]``: those whose labels
#: its source has (``Metric.needs`` against ``SolutionSource.labels``)
DEFAULT_STEP_METRICS: tuple[dict[str, Any], ...] = (
    {"name": "prmbench-score"},
    {"name": "processbench-f1"},
    {"name": "step-aggregation"},
)

#: the sections of a recipe of reward models, which a recipe with [solutions] leaves out
_OTHER_SECTIONS = ("prompts", "responses", "oracle", "cheap_oracle", "benchmark", "pairs")

SpecMaker = Callable[..., ComponentSpec]


def process_sections(
    model: RecipeModel, spec: SpecMaker, file: str
) -> tuple[ComponentSpec | None, tuple[ComponentSpec, ...]]:
    """The solution source and the PRMs (None and none in a recipe of reward models)."""
    if model.solutions is None and model.process_reward_models is None:
        if not model.reward_models:
            raise BadInput(
                "missing [[reward_models]] (or [solutions] with [[process_reward_models]])",
                file=file,
                field="reward_models",
            )
        return None, ()
    if model.solutions is None:
        raise BadInput(
            "process reward models need [solutions] (the solutions they score)",
            file=file,
            field="solutions",
        )
    if not model.process_reward_models:
        raise BadInput(
            "missing [[process_reward_models]]: the PRMs to audit on [solutions]",
            file=file,
            field="process_reward_models",
        )
    others = [name for name in _OTHER_SECTIONS if _given(model, name)]
    others += ["reward_models"] if model.reward_models else []
    if others:
        raise BadInput(
            "a recipe with [solutions] audits process reward models only; audit reward "
            "models in a recipe of their own",
            file=file,
            field=others[0],
        )
    source = spec("prompt_source", model.solutions.source, "solutions.source")
    if not issubclass(source.cls, SolutionSource):
        raise BadInput(
            "not a solution source (one with step labels: prmbench, processbench)",
            file=file,
            field="solutions.source.name",
            value=source.cls.name,
        )
    prms = tuple(
        spec("process_reward_model", value, f"process_reward_models[{i}]", labelled=True)
        for i, value in enumerate(model.process_reward_models)
    )
    check_unique_labels(prms, file, "process_reward_models")
    return source, prms


def _given(model: RecipeModel, section: str) -> bool:
    if section == "benchmark":
        return model.benchmark is not None or model.benchmark_source is not None
    return getattr(model, section) is not None
