"""The typed rows the store returns at its boundary: named, frozen records instead of positional
tuples and ``dict[str, Any]``, so a reader sees each column's name and type, and each JSON
column parsed (:mod:`.json_columns`).  A benchmark's items are in :mod:`.item_records`, a run's
preference pairs in :mod:`.pair_records`.

A benchmark's label design (docs/budget.md) is one of them, :class:`LabelDesignRecord`: the
``[oracle]`` budget a recipe validated (:class:`rmaudit.recipe.budget.LabelBudget`), with its
guides' RM keys, stored as one JSON column (``benchmarks.design``) that is written and read back
here and nowhere else.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from rmaudit.errors import BadInput

from .json_columns import dumps, json_object


@dataclass(frozen=True)
class LabelDesignRecord:
    """How a budgeted benchmark was labelled: which responses its design drew, and how."""

    #: "uniform" or "rm-guided" (:data:`rmaudit.metrics.budget.LABEL_DESIGNS`)
    design: str
    #: a fraction of each prompt's responses in (0, 1], or None with ``labels_per_prompt``
    budget: float | None = None
    #: a count of responses per prompt, or None with ``budget``
    labels_per_prompt: int | None = None
    #: the guide RMs of an rm-guided design, by their keys
    guide: tuple[str, ...] = ()
    design_seed: int = 0
    #: the guides by their labels in the recipe, for display
    guide_labels: tuple[str, ...] = ()
    #: "rm-guided design, 25% of each prompt's responses (guided by honest)"
    text: str = ""

    @property
    def description(self) -> str:
        """The design in words (a design imported without one: "uniform design")."""
        return self.text or f"{self.design} design"

    def identity(self) -> dict[str, Any]:
        """What a built benchmark's key hashes of its design: the draw, guides by their keys."""
        return {
            "budget": self.budget,
            "labels_per_prompt": self.labels_per_prompt,
            "design": self.design,
            "guide": list(self.guide),
            "design_seed": self.design_seed,
        }

    def as_json(self) -> dict[str, Any]:
        """The design as stored and exported (a benchmark file's ``benchmark.design``)."""
        return {
            **self.identity(),
            "guide_labels": list(self.guide_labels),
            "text": self.text,
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> LabelDesignRecord:
        """From a stored design or a checked benchmark file's header (keys it lacks take their
        defaults; keys this version does not know are left out)."""
        return cls(
            design=str(value["design"]),
            budget=value.get("budget"),
            labels_per_prompt=value.get("labels_per_prompt"),
            guide=tuple(value.get("guide") or ()),
            design_seed=int(value.get("design_seed") or 0),
            guide_labels=tuple(value.get("guide_labels") or ()),
            text=str(value.get("text") or ""),
        )


def design_column(design: LabelDesignRecord | None) -> str | None:
    """The ``benchmarks.design`` column of a design (NULL: every response labelled)."""
    if design is None:
        return None
    return dumps(design.as_json())


def design_from_column(text: str | None, path: str) -> LabelDesignRecord | None:
    """The stored ``benchmarks.design`` column read back: the one place it is parsed."""
    if text is None or text == "":
        return None
    try:
        value = json.loads(text)
        return LabelDesignRecord.from_json(value)
    except (TypeError, ValueError, KeyError):
        raise BadInput(
            "database is corrupted: not a label design; restore it from a copy, or rerun its "
            "recipes into a new DB",
            file=path,
            field="benchmarks.design",
            value=text[:40],
        ) from None


@dataclass(frozen=True)
class BenchmarkRow:
    """A stored benchmark: its selection of prompts, N responses of a policy each, labelled by
    an oracle (all of them, or those its label design drew)."""

    id: str
    title: str
    selection_key: str
    policy_key: str
    per_prompt: int
    oracle_key: str
    simulated: bool
    #: "built", "imported from FILE", "read by SOURCE"
    origin: str
    created_at: str
    #: None: every response labelled
    design: LabelDesignRecord | None = None


@dataclass(frozen=True)
class ComponentRow:
    """A stored component: what made the items stored under its key."""

    key: str
    kind: str | None
    name: str | None
    version: int | None
    #: its options (as hashed into its key)
    options: dict[str, Any]
    simulated: bool


BENCHMARK_COLUMNS = (
    "id",
    "title",
    "selection_key",
    "policy_key",
    "per_prompt",
    "oracle_key",
    "simulated",
    "origin",
    "created_at",
    "design",
)


def benchmark_row(row: dict[str, Any], path: str) -> BenchmarkRow:
    """A ``benchmarks`` row (column → value) as its record."""
    return BenchmarkRow(
        id=row["id"],
        title=row["title"],
        selection_key=row["selection_key"],
        policy_key=row["policy_key"],
        per_prompt=row["per_prompt"],
        oracle_key=row["oracle_key"],
        simulated=bool(row["simulated"]),
        origin=row["origin"],
        created_at=row["created_at"],
        design=design_from_column(row["design"], path),
    )


def benchmark_columns(benchmark: BenchmarkRow) -> tuple[Any, ...]:
    """The ``benchmarks`` columns of a record, in :data:`BENCHMARK_COLUMNS` order."""
    return (
        benchmark.id,
        benchmark.title,
        benchmark.selection_key,
        benchmark.policy_key,
        benchmark.per_prompt,
        benchmark.oracle_key,
        int(benchmark.simulated),
        benchmark.origin,
        benchmark.created_at,
        design_column(benchmark.design),
    )


@dataclass(frozen=True)
class RunRow:
    """A stored run: its recipe, where it stands, and what it audited."""

    id: str
    title: str
    recipe_path: str | None
    recipe_text: str | None
    #: the validated recipe (what the run id hashes, less the executor), stored as JSON in
    #: ``runs.recipe_json``; empty for a run stored without one
    recipe: dict[str, Any]
    #: None for a run of preference pairs only (or one that failed before its benchmark)
    benchmark_id: str | None
    pair_set_key: str | None
    #: "running", "done", "failed" or "interrupted"
    status: str
    simulated: bool
    created_at: str
    finished_at: str | None
    rmaudit_version: str | None
    #: stage → seconds, as JSON
    timings: str | None
    error: str | None
    #: the solutions a run of process reward models audits (None for any other run)
    solution_set_key: str | None = None


#: the ``runs`` columns, in :class:`RunRow`'s order (its ``recipe`` is ``recipe_json``)
RUN_COLUMNS = tuple("recipe_json" if f == "recipe" else f for f in RunRow.__dataclass_fields__)


def run_row(row: dict[str, Any], path: str) -> RunRow:
    """A ``runs`` row (column → value) as its record."""
    fields = {f: row[c] for f, c in zip(RunRow.__dataclass_fields__, RUN_COLUMNS, strict=True)}
    return RunRow(
        **{
            **fields,
            "recipe": json_object(row["recipe_json"], path, "runs.recipe_json"),
            "simulated": bool(row["simulated"]),
        }
    )


def run_columns(run: RunRow) -> list[Any]:
    """The ``runs`` columns of a record, in :data:`RUN_COLUMNS` order (sqlite3 stores a bool as
    0 or 1)."""
    return [
        (dumps(run.recipe) if run.recipe else None) if f == "recipe" else getattr(run, f)
        for f in RunRow.__dataclass_fields__
    ]


class RunListing(NamedTuple):
    """A run as ``rmaudit runs`` lists it."""

    id: str
    title: str
    status: str
    simulated: bool
    created_at: str
    recipe_path: str | None
    #: None for a pairs-only run (and a run still in its prompts stage)
    prompts: int | None
    per_prompt: int | None
    reward_models: int
    #: None for a run that did not fail
    error: str | None
    #: 0 for a run without pairs (yet)
    pairs: int
    #: 0 for a run without solutions (yet): a run of process reward models has them
    solutions: int


@dataclass(frozen=True)
class MetricValue:
    """One scalar result, as a metric returns it and ``metric_results`` stores it (NaN: NULL):
    ``key`` is unique within a metric, e.g. ``reta@0.25``; ``label`` is its column header, e.g.
    ``RETA(1/4)``.  The run sets what storing adds: the RM's key (``RUN_LEVEL``, "": across
    every RM), the metric's label in the recipe, and the ``higher_is_better`` that holds.
    Read back, ``per_prompt`` is None (it is stored as ``per_prompt_results``' rows)."""

    key: str
    label: str
    value: float
    stderr: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    params: dict[str, Any] = field(default_factory=dict)
    per_prompt: np.ndarray | None = None
    #: Overrides the metric's ``higher_is_better`` for this value (e.g. FPR@95 beside AUROC).
    higher_is_better: bool | None = None
    rm_key: str = ""
    metric: str = ""

    @property
    def approximate(self) -> str:
        """Why value ± 1.96·stderr is only approximate (empty: it covers at its nominal rate)."""
        return str(self.params.get("approximate") or "")

    @property
    def undefined(self) -> str:
        """Why the value is undefined (NaN), where the metric says (empty: defined)."""
        return str(self.params.get("undefined") or "")


@dataclass(frozen=True)
class CurvePointRow:
    """One stored point of a run's curve (``curves``)."""

    run_id: str
    rm_key: str
    metric: str
    key: str
    label: str
    point: int
    x_label: str
    x: float | None
    value: float | None
    stderr: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True)
class RunSourceRow:
    """Where one part of a run came from (``run_sources``; :mod:`rmaudit.run.provenance`)."""

    part: str
    entry: str
    simulated: bool
    role: str
    #: "file", "model", "api", "simulated", …
    kind: str
    location: str | None
    #: a file's SHA-256, a model's revision
    digest: str | None
    note: str | None


class RunRewardModel(NamedTuple):
    """One of a run's RMs, in recipe order."""

    label: str
    rm_key: str


class RunFailure(NamedTuple):
    """An item a stage of a run could not make, and why."""

    item_id: str
    error: str


class PerPromptRow(NamedTuple):
    """One stored per-prompt value of a run's metric (``per_prompt_results``), written and read
    back (read as NaN where an older version stored a skipped prompt's NaN, as NULL)."""

    run_id: str
    rm_key: str
    metric: str
    key: str
    prompt_id: str
    value: float
