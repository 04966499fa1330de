"""Base classes for every plugin kind, and the records they exchange.

A component is a class with a unique ``name``, a pydantic ``Options`` model (validated
from the recipe) and a docstring whose first line describes it.  The host builds it
with validated options; its identity — kind, name, ``version`` and options — is hashed
into the keys of everything it produces, so changing any option means new work and an
unchanged component never redoes any (DESIGN.md, "Content-addressed, resumable store").

Stages call components on batches (``generate``, ``label``, ``score``): a component may
vectorise across the batch but must return the same value for an item whatever batch
it arrives in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from rmaudit.hashing import content_key


class NoOptions(BaseModel):
    """Options model of a component that takes none."""

    model_config = ConfigDict(extra="forbid")


class ComponentOptions(BaseModel):
    """Base for option models: unknown options are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Prompt:
    id: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Response:
    id: str
    prompt_id: str
    sample_index: int
    text: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Generation:
    """What a reference policy returns for one (prompt, sample index)."""

    text: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OracleLabel:
    """An oracle's verdict on one response: ``score`` is the mean of ``samples``."""

    score: float
    samples: tuple[float, ...] = ()
    cost_usd: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Component:
    kind: ClassVar[str] = ""
    name: ClassVar[str] = ""
    #: Bump when a change of code changes outputs, so stored results are not reused.
    version: ClassVar[int] = 1
    #: True for the offline simulated world; every output that uses one says so.
    simulated: ClassVar[bool] = False
    Options: ClassVar[type[BaseModel]] = NoOptions

    def __init__(self, options: BaseModel | None = None) -> None:
        self.options = options if options is not None else self.Options()

    @classmethod
    def summary(cls) -> str:
        """The first line of the class docstring."""
        return (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""

    def identity(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "version": self.version,
            "options": self.options.model_dump(mode="json"),
        }

    @property
    def key(self) -> str:
        """Content key of this component: same identity, same key, across runs."""
        return content_key(self.identity())


class PromptSource(Component):
    """Where candidate prompts come from."""

    kind = "prompt_source"

    def load(self) -> list[tuple[str, dict[str, Any]]]:
        """Return (text, meta) pairs; the host derives prompt ids from the texts."""
        raise NotImplementedError


class Embedder(Component):
    """Turns prompt texts into vectors for diversity-aware sampling."""

    kind = "embedder"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), d)."""
        raise NotImplementedError


class PromptSampler(Component):
    """Chooses which prompts of the pool enter the benchmark."""

    kind = "prompt_sampler"
    needs_embeddings: ClassVar[bool] = False

    def sample(self, prompts: Sequence[Prompt], embeddings: np.ndarray | None) -> list[int]:
        """Return the indices (into ``prompts``) of the chosen prompts."""
        raise NotImplementedError

    def planned_size(self, pool_size: int) -> int:
        """How many prompts ``sample`` will keep from a pool of ``pool_size`` (for plans)."""
        k = getattr(self.options, "k", None)
        return pool_size if k is None else min(k, pool_size)


class ReferencePolicy(Component):
    """Writes the candidate responses the oracle labels and the RMs score."""

    kind = "reference_policy"

    def generate(self, batch: Sequence[tuple[Prompt, int]]) -> list[Generation]:
        """One generation per (prompt, sample index)."""
        raise NotImplementedError


class Oracle(Component):
    """The trusted judge whose scores are the ground truth of the benchmark."""

    kind = "oracle"

    def calls_per_label(self) -> int:
        """How many requests one label costs (for ``--dry-run`` plans)."""
        return 1

    def label(self, batch: Sequence[tuple[Prompt, Response]]) -> list[OracleLabel]:
        raise NotImplementedError


class RewardModel(Component):
    """The model under audit: one real-valued score per (prompt, response)."""

    kind = "reward_model"

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        raise NotImplementedError


class ShiftPerturber(Component):
    """Moves text away from the training distribution (seed 004)."""

    kind = "shift_perturber"

    def perturb(self, text: str, *, seed: int) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class MetricInputs:
    """A benchmark as metrics see it: per prompt, oracle scores J and RM scores Y."""

    prompt_ids: tuple[str, ...]
    oracle: tuple[np.ndarray, ...]
    scores: tuple[np.ndarray, ...]


@dataclass(frozen=True)
class StudyInputs:
    """A benchmark with every RM of the run: for metrics across RMs (``scope = "run"``)."""

    prompt_ids: tuple[str, ...]
    oracle: tuple[np.ndarray, ...]
    scores: dict[str, tuple[np.ndarray, ...]]  # RM label → per-prompt scores


#: ``rm_key`` under which run-level results (``scope = "run"`` metrics) are stored.
RUN_LEVEL = ""


@dataclass(frozen=True)
class MetricValue:
    """One scalar result: ``key`` is unique within a metric, e.g. ``reta@0.25``;
    ``label`` is its column header, e.g. ``RETA(1/4)``."""

    key: str
    label: str
    value: float
    stderr: float = float("nan")
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    params: dict[str, Any] = field(default_factory=dict)
    per_prompt: np.ndarray | None = None


@dataclass(frozen=True)
class CurveValue:
    """A curve: ``x`` against ``value`` with a per-point stderr and CI."""

    key: str
    label: str
    x_label: str
    x: np.ndarray
    value: np.ndarray
    stderr: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class MetricOutput:
    values: list[MetricValue] = field(default_factory=list)
    curves: list[CurveValue] = field(default_factory=list)


class Metric(Component):
    """A reliability metric computed from a benchmark and one RM's scores."""

    kind = "metric"
    higher_is_better: ClassVar[bool] = True
    #: Closed interval the values lie in; None where unbounded.
    bounds: ClassVar[tuple[float | None, float | None]] = (None, None)
    #: Which inputs the metric reads.
    needs: ClassVar[tuple[str, ...]] = ("oracle", "scores")
    #: "rm": ``compute`` gets :class:`MetricInputs` once per RM; "run": it gets
    #: :class:`StudyInputs` once, with every RM (studies across RMs, such as seed 002's).
    scope: ClassVar[str] = "rm"

    def check_pool_size(self, per_prompt: int) -> None:
        """Raise BadInput (field = the option) if the options need more responses per prompt."""

    def compute(self, inputs: MetricInputs | StudyInputs) -> MetricOutput:
        raise NotImplementedError


KINDS: dict[str, type[Component]] = {
    cls.kind: cls
    for cls in (PromptSource, PromptSampler, Embedder, ReferencePolicy, Oracle, RewardModel,
                ShiftPerturber, Metric)
}
