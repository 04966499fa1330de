"""RewardMATH's own figures for each recorded model of a math suite (docs/rewardmath.md):
accuracy, accuracy with ties and MRR under the publisher's rule
(:func:`rmaudit.metrics.publishers.rewardmath_figures`) over every record of its results file,
a PRM's under each of the eight aggregations; rmaudit's figures on the same model beside them.
The counts are stored by the file's digest (:mod:`rmaudit.store.file_summaries`), as the other
publishers' are (:mod:`.publisher_figures`)."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from rmaudit.benchmark.recorded.rewardmath import RecordedProblem, pairwise_scores
from rmaudit.default_plugins.rewardmath import (
    DEFAULT_AGGREGATION,
    ONE_ORDER,
    RecordedMathScores,
)
from rmaudit.errors import MetricInputError
from rmaudit.metrics.process import REWARDMATH_AGGREGATIONS, aggregate_steps
from rmaudit.metrics.publishers import OVERALL, RewardMathFigures, rewardmath_figures

REWARDMATH_RULE = (
    "RewardMATH (arXiv 2410.01729): per problem, accuracy = the correct solution scored above "
    "every incorrect one (w/ tie: at least as high), MRR = the mean of 1 / its rank, a tie "
    "ranked below; over every record of the file; a pairwise judge's correct solution scored "
    "1 + its wins, an incorrect one 1 or 11"
)
#: the kind of stored file summary: a results file's counts, per layout
MATH_COUNTS = "rewardmath-figures-{layout}"
#: rmaudit's figures set beside the publisher's: metric key → label
ALONGSIDE = {
    "one_to_many": "acc",
    "one_to_many_ties": "acc w/ tie",
    "mrr": "MRR",
    "tie_rate": "tie rate",
}
#: how much of rmaudit's accuracy with ties rests on ties: tie rate / accuracy with ties
TIES_SHARE = "of w/ tie: ties"


def math_counts(model: RecordedMathScores) -> dict[str, Any]:
    """A results file's figures under the publisher's rule — a PRM's per aggregation (one
    undefined on the file is left out, with why) — and what kind of model it is."""
    recorded = model.recorded
    if recorded.kind != "steps":
        groups = [
            [OVERALL, asdict(_figures([_scores(r, recorded.kind) for r in recorded.problems]))]
        ]
        return {"kind": recorded.kind, "groups": groups, "undefined": {}}
    groups, undefined = [], {}
    for how in REWARDMATH_AGGREGATIONS:
        try:
            scored = [[aggregate_steps(s, how) for s in r.values] for r in recorded.problems]
        except MetricInputError as error:
            undefined[how] = f"{error.problem}: {error.value}"
            continue
        if not all(math.isfinite(s) for scores in scored for s in scores):
            undefined[how] = "a solution's score is not finite"
            continue
        groups.append([how, asdict(_figures(scored))])
    return {"kind": "steps", "groups": groups, "undefined": undefined}


def _scores(record: RecordedProblem, kind: str) -> list[float]:
    """A record's scores (the correct solution's first), as the publisher scores them."""
    if kind == "pairwise":
        return pairwise_scores(record)
    return [float(v) for v in record.values]


def _figures(scored: list[list[float]]) -> RewardMathFigures:
    """The publisher's figures from each record's scores, the correct solution's first."""
    return rewardmath_figures([scores[0] for scores in scored], [scores[1:] for scores in scored])


def math_note(counts: dict[str, Any], aggregation: str) -> str:
    """What is to know of a model's figures, in words: a PRM's aggregation and those
    undefined on its file, a pairwise judge's one order; "" if nothing."""
    kind = counts["kind"]
    if kind == "pairwise":
        return f"pairwise judge: {ONE_ORDER}"
    if kind != "steps":
        return ""
    default = " (the default)" if aggregation == DEFAULT_AGGREGATION else ""
    note = f"PRM: rmaudit's figures under aggregation {aggregation}{default}"
    for how, why in counts["undefined"].items():
        note += f"; {how} undefined ({why})"
    return note


def math_groups(counts: dict[str, Any]) -> dict[str, RewardMathFigures]:
    return {name: RewardMathFigures(**figures) for name, figures in counts["groups"]}


def math_group_json(figures: RewardMathFigures) -> dict[str, Any]:
    return {
        "problems": figures.problems,
        "correct": figures.correct,
        "correct_with_ties": figures.correct_with_ties,
        "accuracy": figures.accuracy,
        "accuracy_with_ties": figures.accuracy_with_ties,
        "mrr": figures.mrr,
    }
