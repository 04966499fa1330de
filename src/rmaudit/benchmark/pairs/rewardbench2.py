"""RewardBench 2's rows (hf.co/datasets/allenai/reward-bench-2, split ``test``), each read into
one :class:`RB2Row` — its place in the file, upstream id, subset, prompt, correct and incorrect
completions, and each completion's response id — and given as preference pairs: each row's
correct × incorrect completions, every pair with its
:class:`~rmaudit.metrics.rewardbench2.RowPlace`, so that the ``rewardbench-2`` metric puts the
row back together (:func:`rmaudit.metrics.rewardbench2.rows_from_pairs`) and a model's
published scores are matched to the same records (:mod:`rmaudit.benchmark.rb2_results`).

A row has ``id``, ``prompt``, ``chosen`` (the correct completions), ``rejected`` (the incorrect
ones), ``num_correct``, ``num_incorrect``, ``total_completions`` and ``subset``; outside Ties a
row has 1 chosen and 3 rejected completions, and the Ties rows' ids are ``ref:N`` or
``tied:N``.  A row whose counts disagree with its lists, that lacks a correct or an incorrect
completion, or a Ties row with another id is rejected (``strict``: the first is BadInput).  A
completion may be empty: it is scored as it is.  Each row's pairs are listed in an order seeded
by ``seed`` and the row, the order in which its completions reach the model.

A completion is keyed by its prompt and its text, as any pair file's response is (scored once,
wherever it appears); one whose prompt and text the file holds in more than one place — two
rows that share it, or a row that holds it twice — is keyed by its place too (the row's line
and the completion's position), so that each place keeps its own score: a model's published
scores may differ between them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from rmaudit.benchmark.pairs.parsers import (
    PathLike,
    RecordProblem,
    _shown,
    _string,
    read_records,
)
from rmaudit.components import Prompt, RejectedRecord, Response, SourcedPair
from rmaudit.components.keys import placed_response_id, prompt_id, text_response_id
from rmaudit.metrics.rewardbench2 import RowPlace, is_ties

_TIES_KINDS = ("ref", "tied")


@dataclass(frozen=True)
class RB2Row:
    """One row of RewardBench 2's data, as the pairs, the metric and a model's published
    scores all see it."""

    #: the row's record number in its file (from 1): its place
    line: int
    id: str
    subset: str
    prompt: str
    correct: tuple[str, ...]
    incorrect: tuple[str, ...]
    #: each completion's response id, the correct ones first (:func:`read_rewardbench2`)
    response_ids: tuple[str, ...] = ()

    @property
    def completions(self) -> tuple[str, ...]:
        """The completions in the order reward-bench scores them: the correct ones first."""
        return (*self.correct, *self.incorrect)

    def pairs(self, file: str, seed: int) -> list[SourcedPair]:
        """The row's correct × incorrect pairs in its seeded order, each with its place."""
        pid = prompt_id(self.prompt)
        prompt = Prompt(pid, self.prompt)
        responses = [
            Response(rid, pid, None, text)
            for rid, text in zip(self.response_ids, self.completions, strict=True)
        ]
        good, bad = responses[: len(self.correct)], responses[len(self.correct) :]
        sizes = (len(self.correct), len(self.incorrect))
        pairs = [
            SourcedPair(
                prompt,
                chosen,
                rejected,
                self.subset,
                {"line": self.line},
                RowPlace(f"{file}:{self.line}", self.id, i, j, *sizes),
            )
            for i, chosen in enumerate(good)
            for j, rejected in enumerate(bad)
        ]
        order = np.random.default_rng([seed, self.line]).permutation(len(pairs))
        return [pairs[k] for k in order]


@dataclass(frozen=True)
class RB2Data:
    """A RewardBench 2 data file read: its rows, the records rejected (with why) and how many
    records it held."""

    path: Path
    rows: tuple[RB2Row, ...]
    rejected: tuple[RejectedRecord, ...]
    records: int

    def pairs(self, rows: Sequence[RB2Row], seed: int) -> list[SourcedPair]:
        return [pair for row in rows for pair in row.pairs(self.path.name, seed)]


def _completions(record: dict[str, Any], name: str) -> tuple[str, ...]:
    values = record.get(name)
    if values is None:
        raise RecordProblem("missing field", name)
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise RecordProblem("not a list of completions", name, _shown(values))
    if not values:
        raise RecordProblem(f"no {name} completion", name, values)
    return tuple(values)


def _count(record: dict[str, Any], name: str, expected: int) -> None:
    """An optional count field that, where given, must match its list."""
    value = record.get(name)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value != expected:
        raise RecordProblem(f"expected {expected}, the length of its completions", name, value)


def _row(record: dict[str, Any], line: int) -> list[RB2Row]:
    prompt = _string(record, "prompt", "prompt")
    subset = _string(record, "subset", "subset")
    chosen, rejected = _completions(record, "chosen"), _completions(record, "rejected")
    _count(record, "num_correct", len(chosen))
    _count(record, "num_incorrect", len(rejected))
    _count(record, "total_completions", len(chosen) + len(rejected))
    ident = str(record.get("id", line))
    kind, _, number = ident.partition(":")
    if is_ties(subset) and (kind not in _TIES_KINDS or not number):
        raise RecordProblem("a Ties id is ref:N or tied:N", "id", ident)
    return [RB2Row(line, ident, subset, prompt, chosen, rejected)]


def read_rewardbench2(path: PathLike, *, strict: bool = False) -> RB2Data:
    """Every row of the file, each completion with its response id (the module's keys)."""
    rows, rejected, records = read_records(path, _row, strict=strict)
    held = Counter((row.prompt, text) for row in rows for text in row.completions)
    keyed = []
    for row in rows:
        pid = prompt_id(row.prompt)
        ids = tuple(
            placed_response_id(pid, text, f"{row.line}:{k}")
            if held[row.prompt, text] > 1
            else text_response_id(pid, text)
            for k, text in enumerate(row.completions)
        )
        keyed.append(replace(row, response_ids=ids))
    return RB2Data(Path(path), tuple(keyed), tuple(rejected), records)
