"""Judges run elsewhere, audited from the outputs their publishers released (docs/judges.md,
"Real judges"; ``rmaudit audit --recorded-judges``):

* ``llmbar-judge``: one LLMBar evaluator configuration (an LLM and a prompting strategy),
  its ``result.json`` files (:mod:`rmaudit.benchmark.recorded.llmbar`) — verdicts from the
  winners recorded in both orders, or for the ``Rating*`` strategies from the judge's ratings;
* ``judgebench-judge``: one JudgeBench outputs file of a judge, its two games per pair;
* ``judgebench-rm``: one JudgeBench outputs file of a reward model, scored by the raw scores
  its games recorded (:mod:`rmaudit.benchmark.recorded.judgebench`).

Each matches the run's pairs by their texts, as ``verdicts-file`` does: a pair of the run
without a recorded verdict (or score) is bad input, found in the plan before anything is
stored; a record for a pair the run does not audit (one the suite's pair source rejected,
or left out of a ``--sample``) is left aside.  The publishers' own figures are computed from
the same records (:mod:`rmaudit.metrics.publishers`, :mod:`rmaudit.suites.publisher_figures`).
A component reads its files when first asked for a verdict, a score or its records: a rerun
whose verdicts and figures are stored (the files' digests are in their keys) reads none.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.benchmark.recorded.judgebench import Game, JudgeBenchJudged, read_outputs
from rmaudit.benchmark.recorded.llmbar import LLMBarJudged, read_results
from rmaudit.components import (
    ComponentOptions,
    PairShown,
    PairVerdict,
    Prompt,
    Response,
    RewardModel,
    Source,
    Verdict,
)
from rmaudit.components.options import HashedDataFile, file_source
from rmaudit.errors import BadInput

from .verdicts_file import Showing, shortened, showing_key

#: P(first preferred) of each verdict, a tie counting ½
_P_FIRST: dict[Verdict, float] = {"first": 1.0, "second": 0.0, "tie": 0.5, "unparsed": math.nan}
#: a JudgeBench decision on A and B as shown, as a verdict (null: unparsed; the reader
#: refuses any other)
_DECISIONS: dict[str | None, Verdict] = {"A>B": "first", "B>A": "second", "A=B": "tie"}


class _RecordedJudge(RewardModel):
    """A pairwise judge whose verdicts were recorded: each showing looked up by its texts."""

    @cached_property
    def verdicts(self) -> dict[Showing, PairVerdict]:
        """Each showing's verdict (P(first) its credit) and reply, as the run stores it."""
        found: dict[Showing, PairVerdict] = {}
        files: dict[Showing, Path] = {}  # where each is first recorded, to name a duplicate
        for showing, verdict, reply, path in self._recorded_verdicts():
            earlier = found.setdefault(showing, PairVerdict(verdict, _P_FIRST[verdict], reply))
            first_file = files.setdefault(showing, path)
            if earlier.verdict != verdict:
                raise BadInput(
                    f"the pair with prompt {shortened(showing[0])} is recorded twice, with "
                    f"verdicts {earlier.verdict} ({first_file}) and {verdict}",
                    file=str(path),
                )
        return found

    def _recorded_verdicts(self) -> Iterator[tuple[Showing, Verdict, str, Path]]:
        raise NotImplementedError

    def judges_pairs(self) -> bool:
        return True

    def check_pairs(self, shown: Sequence[PairShown]) -> None:
        """Every showing of the run has a recorded verdict."""
        missing = [s for s in shown if showing_key(s) not in self.verdicts]
        files = ", ".join(map(str, self._paths()))
        if missing and len(missing) == len(shown):
            raise BadInput(
                "no pair of this suite has a recorded verdict: outputs recorded on another "
                "suite's pairs?",
                file=files,
            )
        if missing:
            raise BadInput(
                f"no recorded verdict for the pair shown with prompt "
                f"{shortened(missing[0].prompt.text)}, A {shortened(missing[0].first.text)}, "
                f"B {shortened(missing[0].second.text)}",
                file=files,
            )

    def judge_pairs(self, batch: Sequence[PairShown]) -> list[PairVerdict]:
        self.check_pairs(batch)  # a shifted copy, which the plan could not check
        return [self.verdicts[showing_key(s)] for s in batch]

    def _paths(self) -> list[Path]:
        raise NotImplementedError

    def sources(self) -> tuple[Source, ...]:
        return tuple(file_source("verdicts", path) for path in self._paths())


class LLMBarJudgeOptions(ComponentOptions):
    results: list[HashedDataFile] = Field(
        min_length=1,
        description="the configuration's result.json (or .json.gz), one per subset: "
        "DATA/llmbar/LLMBar/SUBSET/evaluators/LLM/STRATEGY/result.json.gz",
    )
    from_ratings: bool = Field(
        False,
        description="verdicts from the judge's ratings score_1 and score_2 (a Rating "
        "strategy: the higher-rated answer preferred, equal ratings a tie), not its winners",
    )


class LLMBarJudge(_RecordedJudge):
    """An LLMBar evaluator configuration (LLM × prompting strategy), from its recorded outputs."""

    name = "llmbar-judge"
    Options = LLMBarJudgeOptions
    options: LLMBarJudgeOptions

    @cached_property
    def recorded(self) -> dict[Path, list[LLMBarJudged]]:
        """Each result file's records (for the verdicts, and the publisher's figures)."""
        return {path: read_results(path) for path in self.options.results}

    def _recorded_verdicts(self) -> Iterator[tuple[Showing, Verdict, str, Path]]:
        for path, records in self.recorded.items():
            for index, record in enumerate(records, start=1):
                if record.output_1 == record.output_2:
                    continue  # one answer twice: no pair of any suite
                for showing, verdict, reply in self._both_orders(record, f"{path}:record {index}"):
                    yield showing, verdict, reply, path

    def _both_orders(self, r: LLMBarJudged, where: str) -> list[tuple[Showing, Verdict, str]]:
        prompt = r.prompt.strip()
        shown_1 = (prompt, r.output_1, r.output_2)  # output_1 first: "swap = False"
        shown_2 = (prompt, r.output_2, r.output_1)
        if not self.options.from_ratings:
            return [
                (shown_1, _winner(r.winners[0], first="1"), r.replies[0]),
                (shown_2, _winner(r.winners[1], first="2"), r.replies[1]),
            ]
        if r.ratings is None:
            raise BadInput(
                "no ratings score_1 and score_2 (from_ratings: a Rating strategy's file)",
                file=where,
                field="results[-1]",
            )
        one, two = r.ratings
        return [(shown_1, *_rated(one, two)), (shown_2, *_rated(two, one))]

    def _paths(self) -> list[Path]:
        return list(self.options.results)


def _winner(winner: str | None, *, first: str) -> Verdict:
    """An LLMBar winner ("1", "2", None) as a verdict on a showing whose first answer is
    output ``first``."""
    if winner is None:
        return "unparsed"
    return "first" if winner == first else "second"


def _rated(first: float | None, second: float | None) -> tuple[Verdict, str]:
    """The verdict of the ratings of the answers shown first and second, and a reply saying
    them."""
    said = " and ".join("none" if r is None else f"{r:g}" for r in (first, second))
    reply = f"ratings {said} (the answer shown first, then the other)"
    if first is None or second is None:
        return "unparsed", reply
    return ("first" if first > second else "second" if second > first else "tie"), reply


class JudgeBenchOptions(ComponentOptions):
    path: HashedDataFile = Field(
        description="DATA/judgebench/outputs/dataset=judgebench,response_model=M,"
        "judge_name=N,judge_model=J.jsonl[.gz]"
    )


class JudgeBenchJudge(_RecordedJudge):
    """A JudgeBench judge, from its recorded outputs (two games per pair: as is, and swapped)."""

    name = "judgebench-judge"
    Options = JudgeBenchOptions
    options: JudgeBenchOptions

    @cached_property
    def recorded(self) -> list[JudgeBenchJudged]:
        """The file's records (for the verdicts, and the publisher's figures)."""
        return read_outputs(self.options.path)

    def _recorded_verdicts(self) -> Iterator[tuple[Showing, Verdict, str, Path]]:
        for r in self.recorded:
            if r.response_a == r.response_b:
                continue
            question = r.question.strip()
            for showing, game in (
                ((question, r.response_a, r.response_b), r.games[0]),
                ((question, r.response_b, r.response_a), r.games[1]),
            ):
                decision = _DECISIONS.get(game.decision, "unparsed")
                yield showing, decision, game.reply, self.options.path

    def _paths(self) -> list[Path]:
        return [self.options.path]


class JudgeBenchRM(RewardModel):
    """A JudgeBench reward model, scored by the raw scores its recorded games hold."""

    name = "judgebench-rm"
    Options = JudgeBenchOptions
    options: JudgeBenchOptions

    @cached_property
    def recorded(self) -> list[JudgeBenchJudged]:
        """The file's records (for the scores, and the publisher's figures)."""
        return read_outputs(self.options.path, scores=True)

    @cached_property
    def scores(self) -> dict[tuple[str, str], float]:
        """Each (question, response)'s score."""
        found: dict[tuple[str, str], float] = {}
        for r in self.recorded:
            for answer, text in enumerate((r.response_a, r.response_b)):
                key, score = (r.question.strip(), text), _mean_score(r.games, answer)
                if found.setdefault(key, score) != score:
                    raise BadInput(
                        f"the response {shortened(text)} is recorded twice, with scores "
                        f"{found[key]} and {score}",
                        file=str(self.options.path),
                    )
        return found

    def check_items(self, items: Sequence[tuple[Prompt, Response]]) -> None:
        missing = [i for i in items if _item(i) not in self.scores]
        if missing and len(missing) == len(items):
            raise BadInput(
                "no response of this suite has a recorded score: outputs recorded on another "
                "suite's pairs?",
                file=str(self.options.path),
            )
        if missing:
            raise BadInput(
                f"no recorded score for the response {shortened(missing[0][1].text)} to the "
                f"prompt {shortened(missing[0][0].text)}",
                file=str(self.options.path),
            )

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        self.check_items(batch)
        return [self.scores[_item(item)] for item in batch]

    def sources(self) -> tuple[Source, ...]:
        return (file_source("scores", self.options.path),)


def _mean_score(games: tuple[Game, ...], answer: int) -> float:
    """A response's score: the mean of its scores in the games (A is the second answer shown
    in the swapped game)."""
    found = [g.scores[answer if i == 0 else 1 - answer] for i, g in enumerate(games) if g.scores]
    return float(np.mean(found))


def _item(item: tuple[Prompt, Response]) -> tuple[str, str]:
    return item[0].text.strip(), item[1].text


@hookimpl
def register_reward_models(register):
    for cls in (LLMBarJudge, JudgeBenchJudge, JudgeBenchRM):
        register(cls)
