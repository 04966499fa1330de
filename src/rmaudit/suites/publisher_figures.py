"""The publishers' own figures for each recorded judge of an audit, beside rmaudit's: computed
from the same recorded outputs under the publisher's rule (:mod:`rmaudit.metrics.publishers`),
on every record the publisher's file holds, per subset (LLMBar: its ``statistics.json``) or
per category and overall (JudgeBench: ``run_judge.py``'s report); printed in a table of their
own and written to the results file under each model's ``"publisher"`` key.  Each
file's counts are stored by its digest (:mod:`rmaudit.store.file_summaries`): a rerun reads
no recorded file again."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from rmaudit.benchmark.pairs.judgebench import CATEGORIES, judgebench_category
from rmaudit.benchmark.recorded.judgebench import JudgeBenchJudged
from rmaudit.components import Component
from rmaudit.components.options import file_digest
from rmaudit.components.vocabulary import ResultKey
from rmaudit.default_plugins.recorded_judges import JudgeBenchJudge, JudgeBenchRM, LLMBarJudge
from rmaudit.default_plugins.rewardmath import KIND_WORDS, RecordedMathScores
from rmaudit.metrics.publishers import (
    OVERALL,
    JudgeBenchScore,
    LLMBarFigures,
    RewardMathFigures,
    judgebench_score,
    llmbar_figures,
)
from rmaudit.recipe import Recipe
from rmaudit.store import Store

from . import Suite
from .data import Located
from .math_publisher import (
    ALONGSIDE,
    MATH_COUNTS,
    REWARDMATH_RULE,
    TIES_SHARE,
    math_counts,
    math_group_json,
    math_groups,
    math_note,
)

LLMBAR_RULE = (
    "LLMBar (arXiv 2310.07641): Acc. = the mean of the two orders' accuracies, an unparsed "
    "verdict wrong; Agr. = the share of pairs whose two verdicts agree, two unparsed agreeing"
)
JUDGEBENCH_RULE = (
    "JudgeBench (arXiv 2410.12784): a pair is correct when its two verdicts, mapped back, net "
    "at least one vote for the correct response (inconsistent pairs, two ties and unparsed "
    "replies wrong); the share of pairs, per category and overall"
)
#: rmaudit's number beside the publisher's: a judge's accuracy in both orders (a tie ½, a pair
#: unparsed in both orders left out), an RM's pair accuracy, RewardMATH's one-to-many accuracy
RMAUDIT_KEYS = ("judge_accuracy", "accuracy", "one_to_many")
#: the kinds of stored file summaries: an LLMBar result file's counts, a JudgeBench outputs
#: file's per category
LLMBAR_COUNTS, JUDGEBENCH_COUNTS = "llmbar-figures", "judgebench-scores"


@dataclass(frozen=True)
class PublisherFigures:
    """A recorded judge's figures under its publisher's rule, with rmaudit's beside them."""

    label: str
    publisher: str  # "LLMBar" or "JudgeBench"
    rule: str
    #: subset (or category, or "Overall", or a PRM's aggregation) → the publisher's counts
    groups: dict[str, LLMBarFigures | JudgeBenchScore | RewardMathFigures]
    #: the same groups → rmaudit's value (NaN: none stored)
    rmaudit: dict[str, float]
    #: rmaudit's figures on the model set beside the publisher's, by label (RewardMATH's)
    alongside: dict[str, float] = field(default_factory=dict)
    #: what the model is, in words ("classifier RM", "PRM", ...; RewardMATH's); "" if not said
    kind: str = ""
    #: what to know of the figures (a PRM's aggregation, a pairwise judge's one order)
    note: str = ""


def shared_notes(figures: list[PublisherFigures], most: int | None = None) -> list[str]:
    """What is to know of the recorded models' figures (a PRM's aggregation, a pairwise judge's
    one order), once per note: the models it is of named (past ``most``, counted)."""
    by_note: dict[str, list[str]] = {}
    for f in figures:
        if f.note:
            by_note.setdefault(f.note, []).append(f.label)
    return [
        f"{', '.join(labels) if most is None or len(labels) <= most else f'{len(labels)} models'}"
        f": {note}"
        for note, labels in by_note.items()
    ]


def publisher_figures(
    store: Store,
    run_id: str,
    suite: Suite,
    located: Located,
    recipe: Recipe,
    components: Mapping[str, Component],
) -> list[PublisherFigures]:
    """Every recorded judge of the run's figures, in the recipe's order (each file's counts
    stored, where not yet, by its digest)."""
    stored = _rmaudit_values(store, run_id)
    subsets = {
        path.parent: str(file.options.get("subset", path.parent.name))
        for file, path in zip(suite.files, located.paths, strict=True)
    }
    counts = _Counts(store)
    found = []
    for spec in recipe.reward_models:
        component = components[spec.field]
        groups: dict[str, LLMBarFigures | JudgeBenchScore | RewardMathFigures]
        if isinstance(component, RecordedMathScores):
            found.append(_math_figures(spec.label, component, counts, stored.get(spec.label, {})))
            continue
        if isinstance(component, LLMBarJudge):
            groups = {
                _subset(path, subsets): LLMBarFigures(
                    **counts.of(LLMBAR_COUNTS, path, partial(_llmbar_count, component, path))
                )
                for path in component.options.results
            }
            publisher, rule = "LLMBar", LLMBAR_RULE
        elif isinstance(component, (JudgeBenchJudge, JudgeBenchRM)):
            path = component.options.path
            summed = counts.of(JUDGEBENCH_COUNTS, path, partial(_judgebench_groups, component))
            groups = {name: JudgeBenchScore(**score) for name, score in summed["groups"]}
            publisher, rule = "JudgeBench", JUDGEBENCH_RULE
        else:
            continue
        mine = stored.get(spec.label, {})
        rmaudit = {
            group: mine.get(None if group == OVERALL else group, math.nan) for group in groups
        }
        found.append(PublisherFigures(spec.label, publisher, rule, groups, rmaudit))
    counts.store_new()
    return found


class _Counts:
    """Each file's counts of a kind: stored, else computed from the file (and then stored)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.new: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)

    def of(self, kind: str, path: Path, count: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        digest = file_digest(path)
        found = self.store.file_summaries.of(kind, [digest]).get(digest)
        if found is None:
            found = self.new[kind][digest] = count()
        return found

    def store_new(self) -> None:
        for kind, summaries in self.new.items():
            self.store.file_summaries.add(kind, summaries)


def _math_figures(
    label: str, model: RecordedMathScores, counts: _Counts, mine: dict[str | None, float]
) -> PublisherFigures:
    """A recorded RewardMATH model's figures, rmaudit's on the model's aggregation beside."""
    kind = MATH_COUNTS.format(layout=model.options.layout)
    summed = counts.of(kind, model.options.path, partial(math_counts, model))
    groups = math_groups(summed)
    aggregation = model.options.aggregation
    own = aggregation if summed["kind"] == "steps" else OVERALL
    rmaudit = {g: mine.get(None, math.nan) if g == own else math.nan for g in groups}
    alongside = {name: mine.get(key, math.nan) for key, name in ALONGSIDE.items()}
    with_ties = alongside[ALONGSIDE["one_to_many_ties"]]
    alongside[TIES_SHARE] = alongside[ALONGSIDE["tie_rate"]] / with_ties if with_ties else math.nan
    return PublisherFigures(
        label,
        "RewardMATH",
        REWARDMATH_RULE,
        dict(groups),
        rmaudit,
        alongside,
        KIND_WORDS[summed["kind"]],
        math_note(summed, aggregation),
    )


def _llmbar_count(judge: LLMBarJudge, path: Path) -> dict[str, Any]:
    """One result file's LLMBar counts, read from the file."""
    records = judge.recorded[path]
    winners = [r.winners for r in records]
    labels = [r.label for r in records]
    return asdict(llmbar_figures(labels, [w[0] for w in winners], [w[1] for w in winners]))


def _subset(result: Path, subsets: dict[Path, str]) -> str:
    """The subset of an LLMBar result file: SUBSET/evaluators/LLM/STRATEGY/result.json."""
    folder = result.parents[3]
    return subsets.get(folder, folder.name)


def _judgebench_groups(component: JudgeBenchJudge | JudgeBenchRM) -> dict[str, Any]:
    """A JudgeBench file's score per category and overall, in the paper's order (a list: the
    store sorts an object's keys)."""
    records = component.recorded
    by_category: dict[str, list[JudgeBenchJudged]] = defaultdict(list)
    for r in records:
        by_category[judgebench_category(r.source)].append(r)
    order = [name for _, name in CATEGORIES if name in by_category]
    order += sorted(set(by_category) - set(order))
    groups = [(name, by_category[name]) for name in order] + [(OVERALL, records)]
    scores = [
        judgebench_score([r.label for r in chosen], [[g.decision for g in r.games] for r in chosen])
        for _, chosen in groups
    ]
    return {
        "groups": [[name, asdict(score)] for (name, _), score in zip(groups, scores, strict=True)]
    }


def _rmaudit_values(store: Store, run_id: str) -> dict[str, dict[str | None, float]]:
    """Model label → subset (None: all pairs) → rmaudit's number beside the publisher's."""
    labels = {rm_key: label for label, rm_key in store.read.reward_models(run_id)}
    found: dict[str, dict[str | None, float]] = defaultdict(dict)
    for row in store.read.metric_rows(run_id):
        if row.key in ALONGSIDE and row.rm_key in labels:  # RewardMATH's, by their keys
            found[labels[row.rm_key]][row.key] = row.value
        key = ResultKey.read(row.key)
        if key.name not in RMAUDIT_KEYS or row.rm_key not in labels:
            continue
        subset = key.part
        values = found[labels[row.rm_key]]
        # a judge's accuracy in both orders before its pair accuracy (ties a loss there)
        if key.name == RMAUDIT_KEYS[0] or subset not in values:
            values[subset] = row.value
    return found


def figures_json(figures: PublisherFigures) -> dict[str, Any]:
    """A model's ``"publisher"`` entry in the results file: exact counts and figures (a PRM's
    per aggregation, and rmaudit's beside them where the publisher is RewardMATH)."""
    groups = {name: _group_json(counts) for name, counts in figures.groups.items()}
    overall = groups.pop(OVERALL, None)
    math_figures = figures.publisher == "RewardMATH"
    return {
        "name": figures.publisher,
        "rule": figures.rule,
        ("aggregations" if math_figures else "subsets"): groups,
        **({"overall": overall} if overall is not None else {}),
        **(
            {
                "rmaudit": {
                    k: v if math.isfinite(v) else None for k, v in figures.alongside.items()
                },
                "kind": figures.kind,
                "note": figures.note,
            }
            if math_figures
            else {}
        ),
    }


def _group_json(counts: LLMBarFigures | JudgeBenchScore | RewardMathFigures) -> dict[str, Any]:
    if isinstance(counts, RewardMathFigures):
        return math_group_json(counts)
    if isinstance(counts, LLMBarFigures):
        return {
            "pairs": counts.pairs,
            "correct_first": counts.correct_first,
            "correct_second": counts.correct_second,
            "agree": counts.agree,
            "accuracy_first": counts.accuracy_first,
            "accuracy_second": counts.accuracy_second,
            "accuracy": counts.accuracy,
            "agreement": counts.agreement,
        }
    return {"pairs": counts.pairs, "correct": counts.correct, "score": counts.score}
