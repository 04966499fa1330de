"""LLMBar's recorded evaluator outputs (*Evaluating Large Language Models at Evaluating
Instruction Following*, arXiv 2310.07641; github.com/princeton-nlp/LLMBar): for each subset,
``<subset>/evaluators/<LLM>/<strategy>/result.json[.gz]``, the subset's records ``{input,
output_1, output_2, label}`` each with the judge's ``results``.  The **last** entry of
``results`` holds both orders — ``"swap = False"`` (``output_1`` shown first) and ``"swap =
True"`` — each with its ``winner``, already mapped back to the original numbering (``"1"``:
``output_1``; null: the reply held no verdict).  The ``Rating*`` strategies also store the
judge's ratings ``score_1`` and ``score_2`` (``[text, finish_reason]``; an empty text: no
rating)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmaudit.benchmark.tabular import read_rows
from rmaudit.errors import BadInput

from . import shortened

#: the folder under a subset's dataset.json that holds its evaluators
EVALUATORS = "evaluators"
RESULT_NAMES = ("result.json.gz", "result.json")
#: the two orders of a ``results`` entry: output_1 shown first, then output_2 shown first
ORDERS = ("swap = False", "swap = True")
WINNERS = ("1", "2")


@dataclass(frozen=True)
class LLMBarJudged:
    """One record of a ``result.json``: the pair and the judge's verdicts on it."""

    prompt: str
    output_1: str
    output_2: str
    label: int  # 1 or 2: the better output
    #: the winner with output_1 shown first, then with output_2 shown first ("1", "2", None)
    winners: tuple[str | None, str | None]
    #: the judge's reply in each order ("" where the file keeps none)
    replies: tuple[str, str]
    #: a Rating* strategy's ratings of output_1 and output_2 (None: not rated); None elsewhere
    ratings: tuple[float | None, float | None] | None = None


def result_file(folder: Path) -> Path | None:
    """The ``result.json[.gz]`` of an evaluator folder, if it has one."""
    return next((folder / n for n in RESULT_NAMES if (folder / n).is_file()), None)


def read_results(path: Path) -> list[LLMBarJudged]:
    """Every record of a ``result.json[.gz]``; a record that is not as described above is
    ``BadInput`` naming the file, the record and the field."""
    return [_record(where, row) for where, row in read_rows(path, "json")]


def _record(where: str, row: dict[str, Any]) -> LLMBarJudged:
    texts = [_text(row, name, where) for name in ("input", "output_1", "output_2")]
    label = row.get("label")
    if isinstance(label, bool) or label not in (1, 2):
        raise BadInput("expected the label 1 or 2", file=where, field="label", value=label)
    results = row.get("results")
    if not isinstance(results, list) or not results or not isinstance(results[-1], dict):
        raise BadInput(
            "expected a list of results whose last entry holds both orders",
            file=where,
            field="results",
            value=shortened(results),
        )
    last = results[-1]
    orders = [_order(last, name, where) for name in ORDERS]
    ratings = None
    if "score_1" in last or "score_2" in last:
        ratings = (_rating(last, "score_1", where), _rating(last, "score_2", where))
    return LLMBarJudged(
        texts[0],
        texts[1],
        texts[2],
        label,
        (orders[0][0], orders[1][0]),
        (orders[0][1], orders[1][1]),
        ratings,
    )


def _text(row: dict[str, Any], name: str, where: str) -> str:
    value = row.get(name)
    if not isinstance(value, str):
        raise BadInput("expected a text", file=where, field=name, value=shortened(value))
    return value


def _order(last: dict[str, Any], name: str, where: str) -> tuple[str | None, str]:
    """(winner, reply) of one order of the last ``results`` entry."""
    field = f"results[-1].{name}"
    shown = last.get(name)
    if not isinstance(shown, dict) or "winner" not in shown:
        raise BadInput(
            "expected the order's winner", file=where, field=field, value=shortened(shown)
        )
    winner = shown["winner"]
    if winner is not None and winner not in WINNERS:
        raise BadInput(
            'expected the winner "1", "2" or null',
            file=where,
            field=f"{field}.winner",
            value=winner,
        )
    completion = shown.get("completion")
    reply = completion[0] if isinstance(completion, list) and completion else completion
    return winner, reply if isinstance(reply, str) else ""


def _rating(last: dict[str, Any], name: str, where: str) -> float | None:
    """A rating: ``[text, finish_reason]`` (or a bare number or text); an empty text is none."""
    value = last.get(name)
    text = value[0] if isinstance(value, list) and value else value
    if isinstance(text, (int, float)) and not isinstance(text, bool) and math.isfinite(text):
        return float(text)
    if isinstance(text, str) and not text.strip():
        return None
    try:
        rating = float(text) if isinstance(text, str) else math.nan
    except ValueError:
        rating = math.nan
    if not math.isfinite(rating):
        raise BadInput(
            "expected a rating: a number, or an empty text for none",
            file=where,
            field=f"results[-1].{name}",
            value=shortened(value),
        )
    return rating
