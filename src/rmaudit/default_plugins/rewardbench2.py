"""RewardBench 2 (Malik et al. 2025, *RewardBench 2: Advancing Reward Model Evaluation*, arXiv
2506.01937): its score as a pair metric (``rewardbench-2``: best-of-4 with partial credit for
tied top scores in each subset, the Ties formula, and their unweighted mean, each with its ±),
and a model's published per-item scores as a reward model (``rb2-scores``).  The rows come
from the ``rewardbench-2`` pair source (``default_plugins.pair_sources``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.benchmark.keyed_files import ALL_AT_ONCE
from rmaudit.benchmark.pairs.rewardbench2 import read_rewardbench2
from rmaudit.benchmark.rb2_results import align, read_results
from rmaudit.components import (
    ComponentOptions,
    MetricOutput,
    MetricValue,
    PairInputs,
    PerPair,
    Prompt,
    Response,
    RewardModel,
    Source,
)
from rmaudit.components.options import HashedDataFile, file_source
from rmaudit.components.vocabulary import RB2_SCORE, rb2_subset_key
from rmaudit.metrics.rewardbench2 import (
    BOUNDS,
    TIES,
    RowPlace,
    SubsetScore,
    is_ties,
    rewardbench2_score,
    rows_from_pairs,
)

from .pair_metrics import PairMetric

#: what the stored params say each interval is
_SUBSET_INTERVAL = "± over rows; 95% interval: Wilson's over rows, the Poisson bound at the edges"
_TIES_INTERVAL = (
    "± and components' ±: bootstrap over questions; 95% interval: the components' Wilson "
    "intervals combined (MOVER)"
)
_FINAL_INTERVAL = (
    "± = √(Σ subset ±²) / subsets; 95% interval: the subsets' intervals combined (MOVER)"
)
#: left-out rows named in the params at most
_NAMED = 5


class RewardBench2Options(ComponentOptions):
    seed: int = Field(0, ge=0, description="seeds the bootstrap intervals")


class RewardBench2(PairMetric[RewardBench2Options]):
    """RewardBench 2's score: best-of-4 per subset (a tie at the top shares the credit), the
    Ties formula, and their unweighted mean, each with its ± (arXiv 2506.01937)."""

    name = "rewardbench-2"
    Options = RewardBench2Options
    bounds = BOUNDS

    def compute(self, inputs: PairInputs) -> MetricOutput:
        rows = rows_from_pairs(inputs.chosen, inputs.rejected, inputs.subsets, inputs.places)
        score = rewardbench2_score(rows, seed=self.options.seed)
        left_out = _left_out(score.left_out, score.counted_in_part)
        values = []
        if score.final is not None:
            f = score.final
            values.append(
                MetricValue(
                    RB2_SCORE,
                    "RB2 score",
                    f.value,
                    f.stderr,
                    f.ci_low,
                    f.ci_high,
                    params={
                        "subsets": list(f.subsets),
                        "records": len(f.units),
                        "interval": _FINAL_INTERVAL,
                        **({"approximate": f.approximate} if f.approximate else {}),
                        **left_out,
                    },
                )
            )
        values += [_subset_value(s) for s in score.subsets]
        return MetricOutput(values=values)

    def per_pair(self, inputs: PairInputs) -> dict[str, PerPair]:
        """Each unit's value (a row's credit; a Ties question's weighted value, whose mean is
        the Ties score; for the final score, each scaled to the mean of the subset scores,
        its subset the stratum), held by the unit's first pair, NaN at its other pairs: a
        row of four completions is one unit, not three pairs (the data's sampling unit)."""
        rows = rows_from_pairs(inputs.chosen, inputs.rejected, inputs.subsets, inputs.places)
        score = rewardbench2_score(rows, intervals=False)
        first = _first_pairs(inputs)
        count = len(inputs.pair_ids)

        def per_pair(units: dict[str, float]) -> np.ndarray:
            values = np.full(count, np.nan)
            for unit, value in units.items():
                values[first[unit]] = value
            return values

        found = {
            rb2_subset_key(s.subset): PerPair(
                per_pair(s.units), unit="questions" if is_ties(s.subset) else "rows"
            )
            for s in score.subsets
        }
        if score.final is not None:
            f = score.final
            strata = [""] * count
            for unit, subset in f.strata.items():
                strata[first[unit]] = subset
            found[RB2_SCORE] = PerPair(per_pair(f.units), tuple(strata), "rows and questions")
        return found


def _first_pairs(inputs: PairInputs) -> dict[str, int]:
    """Each unit's first pair: ``row N`` (``pair I`` for a pair without a row), and
    ``Ties question N`` for a Ties pair whose row's id is ``ref:N`` or ``tied:N``."""
    first: dict[str, int] = {}
    for i, (given, subset) in enumerate(zip(inputs.places, inputs.subsets, strict=True)):
        place = given or RowPlace.own(i)
        first.setdefault(place.unit, i)
        if is_ties(subset or ""):
            first.setdefault(f"{TIES} question {place.id.partition(':')[2]}", i)
    return first


def _subset_value(s: SubsetScore) -> MetricValue:
    params: dict[str, Any] = {
        "records": s.count,
        "interval": _TIES_INTERVAL if s.components else _SUBSET_INTERVAL,
    }
    if s.components:
        params["components"] = s.components
    if s.approximate:
        params["approximate"] = s.approximate
    return MetricValue(
        rb2_subset_key(s.subset), s.subset, s.value, s.stderr, s.ci_low, s.ci_high, params=params
    )


def _left_out(nowhere: dict[str, str], in_part: dict[str, str]) -> dict[str, Any]:
    """The params that say what counts nowhere and what counts in part: how many of each,
    and the first few with why."""
    params: dict[str, Any] = {}
    for name, reasons in (("left_out", nowhere), ("counted_in_part", in_part)):
        if reasons:
            params[name] = len(reasons)
            params[f"{name}_first"] = dict(list(reasons.items())[:_NAMED])
    return params


class RB2ScoresOptions(ComponentOptions):
    # the files' contents, not where they lie, decide the scores
    path: HashedDataFile = Field(
        description="a model's per-item scores (reward-bench-2-results' eval-set-scores file)"
    )
    data: HashedDataFile = Field(
        description="RewardBench 2's data file the scores are of (test-00000-of-00001.parquet)"
    )


class RB2Scores(RewardModel[RB2ScoresOptions]):
    """A model's published RewardBench 2 scores (allenai/reward-bench-2-results' per-item
    file), matched to the data's rows by id and position within each subset, each score the
    score of the completion at its place (benchmark/rb2_results.py)."""

    name = "rb2-scores"
    Options = RB2ScoresOptions

    def __init__(self, options: RB2ScoresOptions | None = None) -> None:
        super().__init__(options)
        data = read_rewardbench2(self.options.data)
        rows, model = read_results(self.options.path)
        self.aligned = align(self.options.path, rows, model, data)

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        return self.aligned.table.lookup(batch, "score")

    def check_items(self, items: Sequence[tuple[Prompt, Response]]) -> None:
        self.aligned.table.lookup(items, "score", record=False)

    def preferred_batch_items(self) -> int:
        return ALL_AT_ONCE

    def sources(self) -> tuple[Source, ...]:
        return (file_source("scores", self.options.path, self.aligned.model),)

    def report(self) -> dict[str, Any]:
        a = self.aligned
        found = {}
        if a.ids_differing:
            found["ids that differ from the data (no key: rows matched by position)"] = (
                f"{len(a.ids_differing)} (first: {a.ids_differing[0]})"
            )
        if a.matched_by_id:
            reordered = ", ".join(a.matched_by_id)
            found["subsets whose rows the file holds in another order (matched by id)"] = reordered
        return found


@hookimpl
def register_metrics(register):
    register(RewardBench2)


@hookimpl
def register_reward_models(register):
    register(RB2Scores)
