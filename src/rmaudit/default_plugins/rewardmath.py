"""RewardMATH's benchmark and its recorded models (docs/rewardmath.md; ``rmaudit audit --suite
rewardmath --recorded-judges``):

* ``rewardmath``: a benchmark source — each problem a prompt, its solutions the responses,
  correctness the oracle (:mod:`rmaudit.benchmark.recorded.rewardmath_benchmark`);
* ``rewardmath-scores``: one model's recorded results file (:mod:`rmaudit.benchmark.recorded.
  rewardmath`) as a reward model scoring those responses.

A classifier's score and a rating judge's integer rating are the scores as recorded (a rating
judge's ties kept: rmaudit's estimators break them at random, the publisher's accuracy counts a
tie a loss and its accuracy "w/ tie" a win); a PRM's step scores are aggregated by the option
``aggregation`` (one of RewardMATH's eight; :data:`DEFAULT_AGGREGATION` unless given); a
pairwise judge's verdicts score as RewardMATH's evaluation scores them: the correct solution
1 + the comparisons it won, an incorrect one 1 where the correct one beat it and
(comparisons + 2) where it lost — so the correct solution is the top pick of a set of
solutions exactly when it won against each incorrect one there.  A pairwise judge saw each
comparison in one order only: its position bias cannot be told from its accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Annotated, Literal

from pydantic import Field

from rmaudit import hookimpl
from rmaudit.benchmark.keyed_files import text_key
from rmaudit.benchmark.layouts import expand
from rmaudit.benchmark.recorded import shortened
from rmaudit.benchmark.recorded.rewardmath import (
    CORRECT,
    Layout,
    RecordedProblem,
    RecordedScores,
    pairwise_scores,
    read_scores,
)
from rmaudit.benchmark.recorded.rewardmath_benchmark import SOLUTION, math_benchmark
from rmaudit.components import (
    BenchmarkContent,
    BenchmarkSource,
    ComponentOptions,
    Prompt,
    Response,
    RewardModel,
    Source,
)
from rmaudit.components.options import OPERATIONAL, HashedDataFile, file_source
from rmaudit.errors import BadInput, MetricInputError
from rmaudit.metrics.process import aggregate_steps

from .benchmark_sources import DataFolder

#: RewardMATH's eight aggregations of step scores (rmaudit's ``product`` is its ``prod``)
Aggregation = Literal[
    "min", "max", "product", "geometric_mean", "mean", "mean_logit", "mean_odd", "last"
]
#: a PRM's aggregation unless one is given: the product's per-step mean, which does not
#: favour short solutions as the product does (RewardMATH reports both)
DEFAULT_AGGREGATION: Aggregation = "geometric_mean"
#: what a results file's scores are, in words
KIND_WORDS = {
    "scores": "classifier",
    "ratings": "rating judge",
    "steps": "PRM",
    "pairwise": "pairwise judge",
}
#: the note every output of a pairwise judge carries
ONE_ORDER = (
    "one order per pair: each comparison was shown once, so position bias cannot be separated "
    "from accuracy"
)
_FETCH_HINT = "fetch results/ of github.com/kimsh0507/RewardMATH_official into DATA_DIR/rewardmath/"


class RewardMathOptions(ComponentOptions):
    missing_hint: Annotated[str, OPERATIONAL] = Field(
        _FETCH_HINT, description="what the error for a missing root says to download"
    )
    # where the files lie does not decide the benchmark: its keys hash its problems and texts
    root: Annotated[DataFolder, OPERATIONAL] = Field(description="the folder of the files")
    results: list[str] = Field(
        [],
        description="results files (globs relative to root) whose problems are the benchmark's",
    )
    texts: list[HashedDataFile] = Field(
        [], description="the solutions' texts, in the hub dataset's per-solution schema"
    )
    layout: Layout = Field(
        "rewardmath", description="RewardMATH's ten solutions, or RewardBench's two"
    )
    title: str = "RewardMATH"


class RewardMath(BenchmarkSource[RewardMathOptions]):
    """RewardMATH's problems (or RewardBench's math subset), each with its solutions and their
    correctness, from recorded results files and the texts where they are found."""

    name = "rewardmath"
    Options = RewardMathOptions

    def load(self) -> BenchmarkContent:
        o = self.options
        results = expand(o.root, o.results, "results") if o.results else []
        return math_benchmark(results, o.texts, o.layout, title=o.title)


class RecordedMathOptions(ComponentOptions):
    path: HashedDataFile = Field(
        description="a results file: DATA/rewardmath/results/RewardMATH/MODEL_reward.json[.gz]"
    )
    layout: Layout = Field(
        "rewardmath", description="RewardMATH's ten solutions, or RewardBench's two"
    )
    aggregation: Aggregation = Field(
        DEFAULT_AGGREGATION, description="a PRM's step scores into a solution's (PRM files only)"
    )


class RecordedMathScores(RewardModel[RecordedMathOptions]):
    """A model's scores on RewardMATH as its publisher recorded them: a classifier's, a rating
    judge's, a PRM's (its step scores aggregated) or a pairwise judge's verdicts."""

    name = "rewardmath-scores"
    Options = RecordedMathOptions

    @cached_property
    def recorded(self) -> RecordedScores:
        """The file's records (for the scores, and the publisher's figures)."""
        return read_scores(self.options.path, self.options.layout)

    @cached_property
    def scores(self) -> dict[tuple[str, str], float]:
        """Each (problem key, solution key)'s score; a problem recorded twice must score the
        same."""
        found: dict[tuple[str, str], float] = {}
        for record in self.recorded.problems:
            for solution, score in zip(record.all_solutions(), self._scores(record), strict=True):
                key = (record.key, solution)
                if found.setdefault(key, score) != score:
                    raise BadInput(
                        f"the problem {shortened(record.problem)} is recorded twice, with scores "
                        f"{found[key]} and {score} for solution {solution}",
                        file=record.where,
                        field="score",
                    )
        return found

    def _scores(self, record: RecordedProblem) -> list[float]:
        """The record's scores, the correct solution's first where the record lists it so."""
        kind = self.recorded.kind
        if kind == "pairwise":
            return pairwise_scores(record)
        if kind != "steps":
            return [float(v) for v in record.values]
        scores = []
        for index, steps in enumerate(record.values):
            try:
                scores.append(aggregate_steps(steps, self.options.aggregation))
            except MetricInputError as error:
                raise BadInput(
                    error.problem,
                    file=record.where,
                    field=f"score[{index}]",
                    value=error.value,
                ) from None
        return scores

    def check_items(self, items: Sequence[tuple[Prompt, Response]]) -> None:
        """Every response the run still has to score has a recorded score (a problem the run
        does not audit is left aside: the benchmark refuses a results file of other problems)."""
        missing = next((_key(item) for item in items if _key(item) not in self.scores), None)
        if missing is not None:
            raise BadInput(
                f"no recorded score for the solution {missing[1]} of the problem "
                f"{shortened(missing[0])}",
                file=str(self.options.path),
            )

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        missing = [item for item in batch if _key(item) not in self.scores]
        if missing:
            self.check_items(missing)
        return [self.scores[_key(item)] for item in batch]

    def sources(self) -> tuple[Source, ...]:
        return (file_source("scores", self.options.path),)


def _key(item: tuple[Prompt, Response]) -> tuple[str, str]:
    prompt, response = item
    return text_key(prompt.text), str(response.meta.get(SOLUTION, CORRECT))


@hookimpl
def register_benchmark_sources(register):
    register(RewardMath)


@hookimpl
def register_reward_models(register):
    register(RecordedMathScores)
