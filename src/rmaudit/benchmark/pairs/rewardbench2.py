"""RewardBench 2's rows (hf.co/datasets/allenai/reward-bench-2, split ``test``) as preference
pairs: each row's correct × incorrect completions, every pair's ``meta`` naming its row and the
two completions' positions in it, so that the ``rewardbench-2`` metric can put the row back
together (:func:`rmaudit.metrics.rewardbench2.rows_from_pairs`).

A row has ``id``, ``prompt``, ``chosen`` (the correct completions), ``rejected`` (the incorrect
ones), ``num_correct``, ``num_incorrect``, ``total_completions`` and ``subset``; outside Ties a
row has 1 chosen and 3 rejected completions, and the Ties rows' ids are ``ref:N`` or
``tied:N``.  A row whose counts disagree with its lists, that lacks a correct or an incorrect
completion, or a Ties row with another id is rejected (``strict``: the first is BadInput).  A
completion may be empty: it is scored as it is.  Each row's pairs are listed in an order seeded
by ``seed`` and the row, the order in which its completions reach the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from rmaudit.benchmark.pairs.parsers import PathLike, RecordProblem, _parse, _shown, _string
from rmaudit.benchmark.pairs.records import ParseResult, PreferencePair

_TIES_KINDS = ("ref", "tied")


def _completions(record: dict[str, Any], name: str) -> list[str]:
    values = record.get(name)
    if values is None:
        raise RecordProblem("missing field", name)
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise RecordProblem("not a list of completions", name, _shown(values))
    if not values:
        raise RecordProblem(f"no {name} completion", name, values)
    return values


def _count(record: dict[str, Any], name: str, expected: int) -> None:
    """An optional count field that, where given, must match its list."""
    value = record.get(name)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value != expected:
        raise RecordProblem(f"expected {expected}, the length of its completions", name, value)


def parse_rewardbench2(path: PathLike, *, seed: int = 0, strict: bool = False) -> ParseResult:
    """Every row's pairs: ``meta`` holds ``row`` (``FILE:ROW``), the upstream ``id``, the
    positions ``correct`` and ``incorrect`` of the pair's completions among the row's chosen and
    rejected ones, ``num_correct`` and ``num_incorrect``."""
    name = Path(path).name

    def build(record: dict[str, Any], line: int) -> list[PreferencePair]:
        prompt = _string(record, "prompt", "prompt")
        subset = _string(record, "subset", "subset")
        chosen, rejected = _completions(record, "chosen"), _completions(record, "rejected")
        _count(record, "num_correct", len(chosen))
        _count(record, "num_incorrect", len(rejected))
        _count(record, "total_completions", len(chosen) + len(rejected))
        ident = str(record.get("id", line))
        kind, _, number = ident.partition(":")
        if subset.lower() == "ties" and (kind not in _TIES_KINDS or not number):
            raise RecordProblem("a Ties id is ref:N or tied:N", "id", ident)
        sizes = {"num_correct": len(chosen), "num_incorrect": len(rejected)}
        pairs = [
            PreferencePair(
                prompt,
                good,
                bad,
                subset,
                {
                    "row": f"{name}:{line}",
                    "id": ident,
                    "correct": i,
                    "incorrect": j,
                    **sizes,
                    "line": line,
                },
            )  # fmt: skip
            for i, good in enumerate(chosen)
            for j, bad in enumerate(rejected)
        ]
        order = np.random.default_rng([seed, line]).permutation(len(pairs))
        return [pairs[k] for k in order]

    return _parse(path, build, strict=strict)
