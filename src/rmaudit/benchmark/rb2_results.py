"""A model's per-item scores as RewardBench 2 publishes them (hf.co/datasets/allenai/
reward-bench-2-results, ``eval-set-scores/<org>/<model>.json``), matched to the rows of
RewardBench 2's data file (:class:`~rmaudit.benchmark.pairs.rewardbench2.RB2Row`) by row id
and position, never by text: each published score becomes the score of the response id of the
completion at its place, so two rows that share a completion keep their own scores.

reward-bench writes the file as one JSON object of columns (``datasets``' ``to_dict``): ``id``,
``subset``, ``num_correct``, ``scores`` (per row, the score of each completion, the chosen ones
first: a number or a one-number list), ``results``, ``text`` (the completions as the model read
them), and ``model``; a file of one JSON object per row (JSON Lines, a JSON array, Parquet)
with the same fields is read too.  Only ``subset``, ``id`` and ``scores`` are used: a row's
``results`` is not (for the Ties rows it holds a best-of-4 credit, not the Ties score:
reward-bench #255).

Within each subset the k-th row of the file is the k-th row of the data, its id checked:

* an id that is no row's of the subset, or that the file's subset holds twice, cannot be a key
  — most published files give the first ten Factuality rows the ids 30-39, the ids of ten
  later rows (reward-bench #273) — so the row is matched by its position and counted;
* an id the file holds once that names another row of the data means the rows are in another
  order (rotated, sorted): the subset is matched by id where its ids are unique on both sides
  and the same, and refused otherwise.

A Ties row's id must match (the Ties score groups rows by it).  A generative judge's file,
which holds its four-way verdicts and no scores outside Ties, is refused.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmaudit.components.data_text import parse_json, read_text
from rmaudit.errors import BadInput
from rmaudit.metrics.rewardbench2 import is_ties

from .keyed_files import KeyedValues, KeyFields
from .pairs.rewardbench2 import RB2Data, RB2Row
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
    """The file's scores by the response id of the completion at their place, and what
    matching them found."""

    table: KeyedValues
    model: str
    ids_differing: list[str] = field(default_factory=list)
    #: the subsets whose rows the file holds in another order, matched by id
    matched_by_id: list[str] = field(default_factory=list)


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


def align(path: Path, rows: list[ResultRow], model: str, data: RB2Data) -> Aligned:
    """The scores of ``rows`` keyed by the response ids of the data rows they match (module
    docstring); a file that does not match the data is BadInput."""
    if data.rejected:
        first = data.rejected[0]
        line = first.where.rpartition(":")[2]  # its file: the error's
        why = f"{first.field}: {first.reason}" if first.field else first.reason
        raise BadInput(
            f"{len(data.rejected)} rows of the RewardBench 2 data are rejected (first: line "
            f"{line}, {why}): published scores are matched by each row's "
            "position in its subset, which a rejected row would shift",
            file=str(data.path),
        )
    mine: dict[str, list[ResultRow]] = {}
    theirs: dict[str, list[RB2Row]] = {}
    for row in rows:
        mine.setdefault(row.subset, []).append(row)
    for record in data.rows:
        theirs.setdefault(record.subset, []).append(record)
    for subset in sorted(set(mine) | set(theirs)):
        have, want = len(mine.get(subset, [])), len(theirs.get(subset, []))
        if have != want:
            raise BadInput(
                f"{have} rows of subset {subset!r}, where the RewardBench 2 data has {want}",
                file=str(path),
                field="subset",
            )
    aligned = Aligned(KeyedValues(path, KeyFields("rmaudit-id")), model)
    for subset, records in theirs.items():
        for row, record in _matched(aligned, subset, mine[subset], records):
            _add(aligned, row, record)
    return aligned


def _matched(
    aligned: Aligned, subset: str, rows: list[ResultRow], records: list[RB2Row]
) -> list[tuple[ResultRow, RB2Row]]:
    """Each file row of one subset with its data row: by position, or by id where the file
    holds the rows in another order (module docstring)."""
    held = Counter(row.id for row in rows)
    place = {record.id: k for k, record in reversed(list(enumerate(records)))}
    moved = [
        k
        for k, (row, record) in enumerate(zip(rows, records, strict=True))
        if row.id != record.id and held[row.id] == 1 and row.id in place
    ]
    if moved:
        ids = [record.id for record in records]
        if len(set(ids)) == len(ids) and set(held) == set(ids) and max(held.values()) == 1:
            aligned.matched_by_id.append(subset)
            by_id = dict(zip(ids, records, strict=True))
            return [(row, by_id[row.id]) for row in rows]
        row = rows[moved[0]]
        raise BadInput(
            f"row {moved[0] + 1} of subset {subset!r} has the id of the data's row "
            f"{place[row.id] + 1} there, not {records[moved[0]].id!r}: the rows are in "
            "another order, and their ids are not unique to match them by",
            file=row.where,
            field="id",
            value=row.id,
        )
    for row, record in zip(rows, records, strict=True):
        if row.id == record.id:
            continue
        if is_ties(subset):
            raise BadInput(
                f"the Ties row here is {record.id!r} in the RewardBench 2 data (the Ties score "
                "groups rows by id)",
                file=row.where,
                field="id",
                value=row.id,
            )
        aligned.ids_differing.append(f"{row.where}: {row.id!r} for {record.id!r}")
    return list(zip(rows, records, strict=True))


def _add(aligned: Aligned, row: ResultRow, record: RB2Row) -> None:
    """Each of the row's scores as the score of the response at its place."""
    if len(row.scores) != len(record.response_ids):
        raise BadInput(
            f"{len(row.scores)} scores for the {len(record.response_ids)} completions of the "
            f"RewardBench 2 row {record.id!r}",
            file=row.where,
            field="scores",
        )
    table = aligned.table
    for k, (rid, score) in enumerate(zip(record.response_ids, row.scores, strict=True)):
        table.values[(rid,)] = score
        table.where[(rid,)] = f"{row.where} scores[{k}]"
