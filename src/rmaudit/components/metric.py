"""Metrics: the inputs each scope receives, the values and curves they return, and the
:class:`Metric` base class."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from rmaudit.metrics.rewardbench2 import RowPlace
from rmaudit.store.records import MetricValue

from .judging import JudgedPairs
from .kinds import Component, OptionsT
from .process import LabelledSolution


@dataclass(frozen=True)
class LabelDesign:
    """How a budgeted benchmark was labelled (docs/budget.md): the design ("uniform" or
    "rm-guided"), each response's inclusion probability per prompt, a cheap judge's
    predictions of every response (None without one), and the other RMs' scores of every
    response (each per prompt): control variates that narrow the intervals."""

    kind: str
    inclusion: tuple[np.ndarray, ...]
    predictions: tuple[np.ndarray, ...] | None = None
    auxiliary: tuple[tuple[np.ndarray, ...], ...] = ()

    def on_prompts(self, kept: Sequence[int] | np.ndarray) -> LabelDesign:
        """The design of a subset of the prompts (by index)."""

        def subset(pools):
            return None if pools is None else tuple(pools[q] for q in kept)

        return LabelDesign(
            self.kind,
            subset(self.inclusion),
            subset(self.predictions),
            tuple(subset(pools) for pools in self.auxiliary),
        )


@dataclass(frozen=True)
class MetricInputs:
    """A benchmark as metrics see it: per prompt, oracle scores J and RM scores Y.

    On a budgeted benchmark ``design`` is set and ``oracle`` holds NaN for the responses the
    oracle did not label; only metrics with ``supports_label_budget`` receive such inputs."""

    prompt_ids: tuple[str, ...]
    oracle: tuple[np.ndarray, ...]
    scores: tuple[np.ndarray, ...]
    design: LabelDesign | None = None


@dataclass(frozen=True)
class StudyInputs:
    """A benchmark with every RM of the run: for metrics across RMs (``scope = "run"``)."""

    prompt_ids: tuple[str, ...]
    oracle: tuple[np.ndarray, ...]
    scores: dict[str, tuple[np.ndarray, ...]]  # RM label → per-prompt scores


@dataclass(frozen=True)
class PairInputs:
    """Preference pairs as metrics see them (``scope = "pairs"``): one RM's logits of each
    pair's chosen and rejected response, aligned with ``pair_ids``.

    ``shifted`` holds the shift sweep, if the recipe has one: target ("prompt", "response",
    "both") → shift level p → (chosen, rejected) logits of the shifted copies of the same
    pairs, in the same order; p = 0 is the unshifted set (the in-distribution reference).
    ``prompt_ids`` is each pair's prompt: pairs of one prompt (RM-Bench's nine per prompt) are
    not independent, so a standard error across pairs clusters them by it.
    """

    pair_ids: tuple[str, ...]
    chosen: np.ndarray
    rejected: np.ndarray
    subsets: tuple[str | None, ...]
    meta: tuple[dict[str, Any], ...]
    shifted: dict[str, dict[float, tuple[np.ndarray, np.ndarray]]] = field(default_factory=dict)
    prompt_ids: tuple[str, ...] = ()
    #: a pairwise judge's verdicts in both orders (None for an RM that scores responses)
    verdicts: JudgedPairs | None = None
    #: each pair's place in its RewardBench 2 row (None: no row; all None unless given)
    places: tuple[RowPlace | None, ...] = ()

    def __post_init__(self) -> None:
        if not self.places:
            object.__setattr__(self, "places", (None,) * len(self.pair_ids))

    @property
    def clusters(self) -> tuple[str, ...] | None:
        """``prompt_ids`` when some prompt has several pairs, else None (pairs independent)."""
        if len(set(self.prompt_ids)) < len(self.prompt_ids):
            return self.prompt_ids
        return None


@dataclass(frozen=True)
class StepInputs:
    """A solution set as step metrics see it (``scope = "steps"``): one PRM's scores of each
    solution's steps, aligned with ``solutions``, and the id of each solution's problem (the
    prompt id of ``LabelledSolution.cluster``).  Solutions of one problem (PRMBench's several
    modified copies of it) are not independent, so a metric's ± clusters them by problem, and
    its per-question values are per problem (``questions``: in first-seen order)."""

    solutions: tuple[LabelledSolution, ...]
    scores: tuple[np.ndarray, ...]
    question_ids: tuple[str, ...]

    @property
    def questions(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.question_ids))


#: ``rm_key`` under which run-level results (``scope = "run"`` metrics) are stored.
RUN_LEVEL = ""


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


@dataclass(frozen=True)
class PerPair:
    """The per-pair values behind one stored value of a pair metric, aligned with
    :attr:`PairInputs.pair_ids`: their mean over the finite ones is the value, and NaN marks a
    pair that is not one of its units (another subset's).  ``strata`` (one per pair, None: a
    single stratum) are fixed groups the value weights, such as a section score's subsets: a
    difference's ± is then stratified by them (:func:`rmaudit.metrics.paired.stratified_stderr`).
    What :meth:`Metric.per_pair` declares, so that two models on the same pairs compare pair by
    pair (:mod:`rmaudit.results.comparison`)."""

    values: np.ndarray
    strata: tuple[str, ...] | None = None
    #: what a unit is, as a comparison's caption names it ("rows": a row of several pairs)
    unit: str = "pairs"


@dataclass
class MetricOutput:
    values: list[MetricValue] = field(default_factory=list)
    curves: list[CurveValue] = field(default_factory=list)


#: What a metric's ``compute`` receives: the inputs of its ``scope``.
InputsT = TypeVar("InputsT", bound=MetricInputs | StudyInputs | PairInputs | StepInputs)


class Metric(Component[OptionsT], Generic[OptionsT, InputsT]):
    """A reliability metric computed from a benchmark and one RM's scores."""

    kind = "metric"
    higher_is_better: ClassVar[bool] = True
    #: Closed interval the values lie in; None where unbounded.
    bounds: ClassVar[tuple[float | None, float | None]] = (None, None)
    #: Which inputs the metric reads; a pair metric that reads ``PairInputs.shifted``
    #: lists "shift", so a recipe without a shift sweep is rejected before it runs.
    needs: ClassVar[tuple[str, ...]] = ("oracle", "scores")
    #: "rm": ``compute`` gets :class:`MetricInputs` once per RM; "run": it gets :class:`StudyInputs`
    #: once, with every RM (studies across RMs, such as Rethinking RM Evaluation's); "pairs": it
    #: gets :class:`PairInputs` once per RM (preference-pair metrics); "steps": it gets
    #: :class:`StepInputs` once per process reward model (step metrics, docs/prm.md).
    scope: ClassVar[str] = "rm"
    #: Whether ``compute`` estimates from a labelled subset (``MetricInputs.design``); the run
    #: skips other benchmark metrics on a budgeted benchmark, and says so.
    supports_label_budget: ClassVar[bool] = False

    def check_pool_size(self, per_prompt: int) -> None:
        """Raise BadInput (field = the option) if the options need more responses per prompt."""

    def check_shift_levels(self, levels: tuple[float, ...]) -> None:
        """Raise BadInput (field = the option) if the options name a shift level the sweep lacks."""

    def undefined_prompts(self, oracle: Sequence[np.ndarray]) -> dict[int, str]:
        """The prompts (by position) this metric is undefined on, each with the reason.

        The run skips them — counted, stored in ``failures``, said in the summary — and
        computes the metric on the rest: real data's quirks (all-equal labels, a prompt with
        few labelled responses) never abort an audit.  Decided from the oracle scores alone,
        so a plan (``--dry-run``) of a benchmark read from files can warn before any work.
        ``compute`` may assume none of them is in its inputs.  For ``scope = "rm"`` and
        ``"run"`` metrics; a prompt with fewer than two responses is undefined for all.
        """
        return {
            q: "fewer than two responses" if len(pool) < 2 else "fewer than two labelled responses"
            for q, pool in enumerate(oracle)
            if np.count_nonzero(~np.isnan(pool)) < 2
        }

    def compute(self, inputs: InputsT) -> MetricOutput:
        raise NotImplementedError

    def per_pair(self, inputs: PairInputs) -> dict[str, PerPair]:
        """For a pair metric (``scope = "pairs"``): the per-pair values behind each stored key
        whose value is a mean over pairs (:class:`PerPair`), from the same inputs
        :meth:`compute` gets — recomputed from the stored scores or verdicts when models are
        compared, and compared only where their mean gives the stored value back.  The
        default, none: the metric's values are not compared pair by pair (a ratio, an ECE)."""
        return {}
