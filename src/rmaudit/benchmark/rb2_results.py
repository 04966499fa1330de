"""A model's per-item scores as RewardBench 2 publishes them (hf.co/datasets/allenai/
reward-bench-2-results, ``eval-set-scores/<org>/<model>.json``), matched to the rows of
RewardBench 2's data file, so the scores key by prompt and completion text as any RM's do.

reward-bench writes the file as one JSON object of columns (``datasets``' ``to_dict``): ``id``,
``subset``, ``num_correct``, ``scores`` (per row, the score of each completion, the chosen ones
first: a number or a one-number list), ``results``, ``text`` (the completions as the model read
them), and ``model``; a file of one JSON object per row (JSON Lines, a JSON array, Parquet)
with the same fields is read too.  Only ``subset``, ``id`` and ``scores`` are used: a row's
``results`` is not (for the Ties rows it holds a best-of-4 credit, not the Ties score:
reward-bench #255).

Rows are matched within each subset in order (the k-th Factuality row of the file is the k-th
Factuality row of the data): ids are not a key, as most published files give the first ten
Factuality rows the ids 30-39 (reward-bench #273).  A Ties row's id must match (the Ties score
groups by it); other ids that differ are counted.  A generative judge's file, which holds its
four-way verdicts and no scores outside Ties, is refused.  A completion that two rows share
(the same prompt and text) keeps its first score, and the rows whose score for it differs are
counted.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmaudit.components.data_text import parse_json, read_text
from rmaudit.errors import BadInput

from .keyed_files import KeyedValues, KeyFields, text_key
from .tabular import json_rows, read_rows


@dataclass(frozen=True)
class ResultRow:
    """One row of a results file: where it is, its subset and id, and its scores."""

    where: str
    subset: str
    id: str
    scores: tuple[float, ...]


@dataclass
class Aligned:
    """The file's scores by (prompt, completion) text, and what matching them found."""

    table: KeyedValues
    model: str
    ids_differing: list[str] = field(default_factory=list)
    scores_differing: list[str] = field(default_factory=list)


def read_results(path: Path) -> tuple[list[ResultRow], str]:
    """The file's rows and its ``model`` (empty where it names none)."""
    records, model = _records(path)
    rows = []
    for where, record in records:
        subset, ident = (_field(record, name, where) for name in ("subset", "id"))
        scores = record.get("scores")
        if scores is None:
            raise BadInput(
                "no scores: rmaudit needs each completion's score (a generative judge's file "
                "holds its four-way verdicts instead)",
                file=where,
                field="scores",
            )
        if not isinstance(scores, list) or not scores:
            raise BadInput("expected a list of scores", file=where, field="scores", value=scores)
        rows.append(
            ResultRow(
                where,
                str(subset),
                str(ident),
                tuple(_score(s, where, f"scores[{i}]") for i, s in enumerate(scores)),
            )
        )
    if not rows:
        raise BadInput("no rows in the file", file=str(path))
    return rows, model


def _records(path: Path) -> tuple[Iterator[tuple[str, dict[str, Any]]], str]:
    """The file's rows, from its columns (one JSON object) or its records."""
    name = path.name.lower().removesuffix(".gz")
    if not name.endswith(".json"):
        return read_rows(path), ""
    loaded = parse_json(read_text(path), str(path), whole_file=True)
    if isinstance(loaded, list):
        return json_rows(path, loaded), ""
    if not isinstance(loaded, dict) or not isinstance(loaded.get("scores"), list):
        raise BadInput(
            "expected reward-bench's columns (a JSON object with a 'scores' list) or a JSON "
            "array of rows",
            file=str(path),
        )
    columns = {k: v for k, v in loaded.items() if isinstance(v, list)}
    size = len(columns["scores"])
    for key, values in columns.items():
        if len(values) != size:
            raise BadInput(
                f"column of {len(values)} values beside {size} scores", file=str(path), field=key
            )
    records = (
        (f"{path}:row {i + 1}", {key: values[i] for key, values in columns.items()})
        for i in range(size)
    )
    return records, str(loaded.get("model") or "")


def _field(record: dict[str, Any], name: str, where: str) -> Any:
    if record.get(name) is None:
        raise BadInput(f"missing field (fields found: {', '.join(record)})", file=where, field=name)
    return record[name]


def _score(raw: Any, where: str, name: str) -> float:
    """A score: a finite number, or a list of one (some models' pipelines give those)."""
    value = raw[0] if isinstance(raw, list) and len(raw) == 1 else raw
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadInput("expected a finite score", file=where, field=name, value=raw)
    return float(value)


def align(path: Path, rows: list[ResultRow], model: str, data: list[dict[str, Any]]) -> Aligned:
    """The scores of ``rows`` keyed by the prompt and completion texts of the data rows they
    match (module docstring); a file that does not match the data is BadInput."""
    mine: dict[str, list[ResultRow]] = {}
    theirs: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        mine.setdefault(row.subset, []).append(row)
    for record in data:
        theirs.setdefault(str(record.get("subset")), []).append(record)
    for subset in sorted(set(mine) | set(theirs)):
        have, want = len(mine.get(subset, [])), len(theirs.get(subset, []))
        if have != want:
            raise BadInput(
                f"{have} rows of subset {subset!r}, where the RewardBench 2 data has {want}",
                file=str(path),
                field="subset",
            )
    aligned = Aligned(KeyedValues(path, KeyFields("text")), model)
    for subset, records in theirs.items():
        for row, record in zip(mine[subset], records, strict=True):
            _add(aligned, row, record, subset.lower() == "ties")
    return aligned


def _add(aligned: Aligned, row: ResultRow, record: dict[str, Any], ties: bool) -> None:
    completions = [*(record.get("chosen") or []), *(record.get("rejected") or [])]
    ident = str(record.get("id"))
    if row.id != ident:
        if ties:
            raise BadInput(
                f"the Ties row here is {ident!r} in the RewardBench 2 data (the Ties score "
                "groups rows by id)",
                file=row.where,
                field="id",
                value=row.id,
            )
        aligned.ids_differing.append(f"{row.where}: {row.id!r} for {ident!r}")
    if len(row.scores) != len(completions):
        raise BadInput(
            f"{len(row.scores)} scores for the {len(completions)} completions of the "
            f"RewardBench 2 row {ident!r}",
            file=row.where,
            field="scores",
        )
    table = aligned.table
    prompt = text_key(str(record.get("prompt")))
    for completion, score in zip(completions, row.scores, strict=True):
        key = (prompt, text_key(completion))
        if key not in table.values:
            table.values[key] = score
            table.where[key] = row.where
        elif table.values[key] != score:
            aligned.scores_differing.append(row.where)
