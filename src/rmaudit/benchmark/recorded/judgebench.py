"""JudgeBench's recorded judge outputs (*JudgeBench: A Benchmark for Evaluating LLM-based
Judges*, arXiv 2410.12784; github.com/ScalerLab/JudgeBench ``run_judge.py``):
``outputs/dataset=judgebench,response_model=<M>,judge_name=<N>,judge_model=<J>.jsonl[.gz]``,
one record per pair — the pair's fields (``pair_id``, ``source``, ``question``,
``response_A``, ``response_B``, ``label``) plus ``judge_name`` and ``judgments: [g1, g2]``.
g1 is the judge's game on the pair as it is, g2 on the same pair with A and B swapped; each
game is ``{"judgment": {...}, "decision": "A>B" | "B>A" | "A=B" | null}`` in terms of the
answers as shown (null: no verdict; a game whose call failed is null itself).  Any other
decision is refused, naming the file, line and field, as LLMBar's reader refuses a winner
other than "1", "2" or null: ``run_judge.py`` writes no other (its Arena-Hard judge maps
``A>>B`` to ``A>B`` before writing), so another is a file it did not write as published.  A reward
model's games (``judge_name=reward_model``) carry its raw scores ``judgment.scores =
[score of the answer shown first, score of the other]``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmaudit.benchmark.tabular import read_rows
from rmaudit.errors import BadInput

from . import shortened

#: the folder under ``judgebench/`` that holds the outputs
OUTPUTS = "outputs"
#: the ``judge_name`` of reward models, whose games carry scores
REWARD_MODEL = "reward_model"
DECISIONS = ("A>B", "B>A", "A=B")
LABELS = ("A>B", "B>A")
_NAME = re.compile(
    r"dataset=judgebench,response_model=(?P<responses>[^,]+),judge_name=(?P<judge>[^,]+),"
    r"judge_model=(?P<model>[^,]+)\.jsonl(\.gz)?"
)


@dataclass(frozen=True)
class OutputName:
    """What an outputs file's name says: whose responses were judged, by which judge."""

    response_model: str
    judge_name: str
    judge_model: str


def output_name(path: Path) -> OutputName | None:
    """The parts of an outputs file's name (None: not an outputs file)."""
    found = _NAME.fullmatch(path.name)
    return found and OutputName(found["responses"], found["judge"], found["model"])


@dataclass(frozen=True)
class Game:
    """The judge on the pair in one order: its decision on A and B as shown (None: no
    verdict), its reply, and a reward model's scores of A and B as shown."""

    decision: str | None
    reply: str = ""
    scores: tuple[float, float] | None = None


@dataclass(frozen=True)
class JudgeBenchJudged:
    """One record of an outputs file."""

    pair_id: str
    source: str
    question: str
    response_a: str
    response_b: str
    label: str  # "A>B" or "B>A": the correct response
    #: g1 (the pair as it is) and g2 (A and B swapped); g2 absent from a single-game record
    games: tuple[Game, ...]


def read_outputs(path: Path, *, scores: bool = False) -> list[JudgeBenchJudged]:
    """Every record of an outputs file.  A judge's record needs both games; a reward model's
    (``scores``) needs the first, with its scores.  A record otherwise is ``BadInput`` naming
    the file, its line and the field."""
    return [_record(where, row, scores) for where, row in read_rows(path, "jsonl")]


def _record(where: str, row: dict[str, Any], scores: bool) -> JudgeBenchJudged:
    texts = {
        name: _text(row, name, where)
        for name in ("pair_id", "source", "question", "response_A", "response_B", "label")
    }
    if texts["label"] not in LABELS:
        raise BadInput('expected "A>B" or "B>A"', file=where, field="label", value=texts["label"])
    judgments = row.get("judgments")
    if not isinstance(judgments, list):
        raise BadInput(
            "expected a list of games", file=where, field="judgments", value=shortened(judgments)
        )
    needed = 1 if scores else 2
    if len(judgments) < needed:
        raise BadInput(
            f"a game missing: {len(judgments)} of the {needed} games expected (the pair as it "
            "is, then with A and B swapped)",
            file=where,
            field="judgments",
        )
    games = tuple(
        _game(game, f"judgments[{i}]", where, scores) for i, game in enumerate(judgments[:2])
    )
    return JudgeBenchJudged(
        texts["pair_id"],
        texts["source"],
        texts["question"],
        texts["response_A"],
        texts["response_B"],
        texts["label"],
        games,
    )


def _game(game: Any, field: str, where: str, scores: bool) -> Game:
    if game is None and not scores:  # the call failed: no verdict
        return Game(None)
    if not isinstance(game, dict) or "decision" not in game:
        raise BadInput(
            "expected a game with a decision", file=where, field=field, value=shortened(game)
        )
    decision = game["decision"]
    if decision is not None and decision not in DECISIONS:  # as LLMBar's unknown winners are
        raise BadInput(
            'expected the decision "A>B", "B>A", "A=B" or null (run_judge.py writes no other)',
            file=where,
            field=f"{field}.decision",
            value=shortened(decision),
        )
    judgment = game.get("judgment")
    judgment = judgment if isinstance(judgment, dict) else {}
    reply = judgment.get("response")
    return Game(
        decision,
        reply if isinstance(reply, str) else "",
        _scores(judgment.get("scores"), f"{field}.judgment.scores", where) if scores else None,
    )


def _scores(value: Any, field: str, where: str) -> tuple[float, float]:
    numbers = value if isinstance(value, list) and len(value) == 2 else None
    if numbers is None or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
        for x in numbers
    ):
        raise BadInput(
            "expected the two answers' scores, finite numbers", file=where, field=field, value=value
        )
    return float(numbers[0]), float(numbers[1])


def _text(row: dict[str, Any], name: str, where: str) -> str:
    value = row.get(name)
    if not isinstance(value, str):
        raise BadInput("expected a text", file=where, field=name, value=shortened(value))
    return value
