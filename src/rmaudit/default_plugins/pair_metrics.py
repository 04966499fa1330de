"""Built-in preference-pair metrics (``scope = "pairs"``): thin wrappers over
:mod:`rmaudit.metrics.preference` (their TUI panels are in ``default_plugins.panels``; the
ECEs are in ``default_plugins.calibration_metrics``, the metrics of a shift sweep in
``default_plugins.shift_metrics``).

Each metric gets :class:`~rmaudit.components.PairInputs` once per reward model: the RM's
logits of every pair's chosen and rejected response (and each pair's prompt, by which a
standard error across pairs is clustered).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any, ClassVar, Literal, cast

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.components import (
    ComponentOptions,
    Metric,
    MetricOutput,
    MetricValue,
    PairInputs,
    PerPair,
)
from rmaudit.components.kinds import OptionsT
from rmaudit.components.vocabulary import CLUSTERED_PROMPTS, ResultKey
from rmaudit.default_plugins.metrics import scalar
from rmaudit.errors import MetricInputError
from rmaudit.metrics import (
    DEFAULT_TIES,
    MetricResult,
    accuracy,
    pair_credit,
    section_score,
    style_accuracy_matrix,
    style_difficulty,
    style_difficulty_stderr,
    subset_accuracy,
)
from rmaudit.metrics.preference import wald_is_approximate

Ties = Literal["loss", "half"]
TIES_FIELD: Ties = Field(
    cast(Ties, DEFAULT_TIES), description="credit for an RM tie: loss (RewardBench) or half"
)


def _scalar(key: str, label: str, result: MetricResult, **params: Any) -> MetricValue:
    # per_prompt stays None: per_prompt_results is keyed by prompt, and pairs share prompts.
    # Pairs clustered by prompt count as their prompts (fewer independent units; conservative).
    units = params.get(CLUSTERED_PROMPTS, int(result.per_prompt.size))
    if wald_is_approximate(result.value, units):
        noun = "prompts" if CLUSTERED_PROMPTS in params else "pairs"
        params["approximate"] = (
            f"± over {units} {noun} at accuracy {result.value:.2f} is "
            f"approximate; the Wilson CI [{result.ci_low:.3f}, "
            f"{result.ci_high:.3f}] covers"
        )
    return replace(scalar(key, label, result, **params), per_prompt=None)


def clustering(inputs: PairInputs) -> dict[str, Any]:
    """The params that say a stderr is clustered by prompt (when some prompt has several
    pairs): how many prompts the pairs come from."""
    return {} if inputs.clusters is None else {CLUSTERED_PROMPTS: len(set(inputs.clusters))}


def _labelled(inputs: PairInputs) -> tuple[list[int], list[str]]:
    """The positions of the pairs with a subset label, and their labels."""
    labelled = [(i, subset) for i, subset in enumerate(inputs.subsets) if subset is not None]
    return [i for i, _ in labelled], [subset for _, subset in labelled]


class PairMetric(Metric[OptionsT, PairInputs]):
    """A metric of an RM's scores on preference pairs: ``compute`` gets :class:`PairInputs`."""

    scope = "pairs"
    needs: ClassVar[tuple[str, ...]] = ("pairs",)


class AccuracyOptions(ComponentOptions):
    ties: Ties = TIES_FIELD
    by_subset: bool = Field(True, description="also report the accuracy of each subset")


class PairAccuracy(PairMetric[AccuracyOptions]):
    """Fraction of pairs whose chosen response the RM scores higher (RewardBench), overall and per
    subset."""

    name = "pair-accuracy"
    Options = AccuracyOptions
    bounds = (0.0, 1.0)

    def compute(self, inputs: PairInputs) -> MetricOutput:
        ties = self.options.ties
        values = [
            _scalar(
                "accuracy",
                "accuracy",
                accuracy(inputs.chosen, inputs.rejected, ties=ties, clusters=inputs.clusters),
                ties=ties,
                **clustering(inputs),
            )
        ]
        labelled, subsets = _labelled(inputs)
        if self.options.by_subset and labelled:
            clusters = inputs.clusters
            results = subset_accuracy(
                inputs.chosen[labelled],
                inputs.rejected[labelled],
                subsets,
                ties=ties,
                clusters=None if clusters is None else [clusters[i] for i in labelled],
            )
            prompts: dict[str, set[str]] = {}  # each subset's, for a clustered ±
            for i, subset in zip(labelled, subsets, strict=True):
                if clusters is not None:
                    prompts.setdefault(subset, set()).add(clusters[i])
            values += [
                _scalar(
                    str(ResultKey("accuracy", subset)),
                    f"acc {subset}",
                    result,
                    ties=ties,
                    subset=subset,
                    pairs=int(result.per_prompt.size),
                    **({} if clusters is None else {CLUSTERED_PROMPTS: len(prompts[subset])}),
                )
                for subset, result in results.items()
            ]
        return MetricOutput(values=values)

    def per_pair(self, inputs: PairInputs) -> dict[str, PerPair]:
        """Each pair's credit (1, 0, a tie per ``ties``): overall, and of each subset's pairs."""
        credit = pair_credit(inputs.chosen, inputs.rejected, ties=self.options.ties)
        found = {"accuracy": PerPair(credit)}
        labelled, subsets = _labelled(inputs)
        if self.options.by_subset and labelled:
            for subset in dict.fromkeys(subsets):
                mine = np.array([s == subset for s in inputs.subsets])
                found[str(ResultKey("accuracy", subset))] = PerPair(np.where(mine, credit, np.nan))
        return found


class SectionScoreOptions(ComponentOptions):
    sections: Literal["rewardbench"] | dict[str, list[str] | dict[str, float]] = Field(
        "rewardbench",
        description="'rewardbench' (RewardBench's leaderboard weights) or section → "
        "subsets (weighted by pair count) or subset → weight",
    )
    weights: dict[str, float] | None = Field(
        None, description="section weights (default: the preset's, or 1)"
    )
    ties: Ties = TIES_FIELD


class SectionScore(PairMetric[SectionScoreOptions]):
    """Section-weighted score of per-subset accuracies; the RewardBench preset by default."""

    name = "section-score"
    Options = SectionScoreOptions
    bounds = (0.0, 1.0)

    def compute(self, inputs: PairInputs) -> MetricOutput:
        labelled, subsets = _labelled(inputs)
        if not labelled:
            raise MetricInputError("expected pairs with subset labels, got none", field="sections")
        results = subset_accuracy(
            inputs.chosen[labelled],
            inputs.rejected[labelled],
            subsets,
            ties=self.options.ties,
        )
        score = section_score(results, self.options.sections, self.options.weights)
        values = [
            MetricValue(
                "section_score",
                "section score",
                score.score,
                params={
                    "missing_subsets": list(score.missing_subsets),
                    "unassigned_subsets": list(score.unassigned_subsets),
                    "section_weights": score.section_weights,
                },
            )
        ]
        values += [
            MetricValue(str(ResultKey("section", name)), name, value, params={"section": name})
            for name, value in score.sections.items()
        ]
        return MetricOutput(values=values)

    def per_pair(self, inputs: PairInputs) -> dict[str, PerPair]:
        """The score Σ_k v_k · acc_k is linear in the subset accuracies, with coefficients v_k
        that :func:`section_score` itself gives (the score with subset k's accuracy 1 and every
        other 0): it is the mean of x_i = n · v_k · c_i / n_k over the n labelled pairs, n_k of
        them in subset k, each pair in its subset's stratum."""
        labelled, subsets = _labelled(inputs)
        if not labelled:
            return {}
        o = self.options
        chosen, rejected = inputs.chosen[labelled], inputs.rejected[labelled]
        results = subset_accuracy(chosen, rejected, subsets, ties=o.ties)
        coefficient = {
            k: section_score(
                {s: replace(result, value=float(s == k)) for s, result in results.items()},
                o.sections,
                o.weights,
            ).score
            for k in results
        }
        size = Counter(subsets)
        credit = pair_credit(chosen, rejected, ties=o.ties)
        values = np.full(len(inputs.pair_ids), np.nan)
        values[labelled] = [
            len(labelled) * coefficient[s] * c / size[s]
            for s, c in zip(subsets, credit, strict=True)
        ]
        strata = tuple("" if s is None else s for s in inputs.subsets)
        return {"section_score": PerPair(values, strata)}


class RMBenchOptions(ComponentOptions):
    ties: Ties = TIES_FIELD


class RMBenchDifficulty(PairMetric[RMBenchOptions]):
    """RM-Bench easy / normal / hard accuracy from the chosen-style × rejected-style matrix."""

    name = "rm-bench"
    Options = RMBenchOptions
    bounds = (0.0, 1.0)

    def compute(self, inputs: PairInputs) -> MetricOutput:
        try:
            styles = (
                [meta["chosen_style"] for meta in inputs.meta],
                [meta["rejected_style"] for meta in inputs.meta],
            )
        except KeyError:
            raise MetricInputError(
                "expected RM-Bench pairs (chosen_style and rejected_style in "
                "every pair's meta: the rm-bench pair source)"
            ) from None
        matrix = style_accuracy_matrix(
            inputs.chosen, inputs.rejected, *styles, ties=self.options.ties
        )
        result = style_difficulty(matrix)
        # a record (one prompt, its 3 chosen × 3 rejected responses) is the sampling unit
        records = [
            (subset, meta.get("id"), meta.get("line"))
            for subset, meta in zip(inputs.subsets, inputs.meta, strict=True)
        ]
        credit = pair_credit(inputs.chosen, inputs.rejected, ties=self.options.ties)
        stderr = style_difficulty_stderr(credit, *styles, records)
        return MetricOutput(
            values=[
                MetricValue(
                    f"rm_bench_{level}",
                    f"RM-Bench {level}",
                    getattr(result, level),
                    stderr=stderr[level],
                    params={"records": len(set(records)), "ties": self.options.ties},
                )
                for level in ("easy", "normal", "hard", "average")
            ]
        )

    def per_pair(self, inputs: PairInputs) -> dict[str, PerPair]:
        """Each pair's credit, in the level its styles put it in (easy: the chosen response's
        style richer than the rejected one's, normal: equal, hard: plainer); each record has
        one pair per style combination, so a level's mean over its pairs is the mean over its
        cells."""
        if not all("chosen_style" in m and "rejected_style" in m for m in inputs.meta):
            return {}
        credit = pair_credit(inputs.chosen, inputs.rejected, ties=self.options.ties)
        sign = np.array([np.sign(m["chosen_style"] - m["rejected_style"]) for m in inputs.meta])
        found = {"rm_bench_average": PerPair(credit)}
        for level, side in (("easy", 1), ("normal", 0), ("hard", -1)):
            found[f"rm_bench_{level}"] = PerPair(np.where(sign == side, credit, np.nan))
        return found


@hookimpl
def register_metrics(register: Any) -> None:
    for cls in (
        PairAccuracy,
        SectionScore,
        RMBenchDifficulty,
    ):
        register(cls)
