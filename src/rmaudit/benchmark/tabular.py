"""Rows of a data file — JSON Lines, JSON (an array of objects), CSV or Parquet, optionally
gzip-compressed — each with where it came from (``file:line``, ``file:record N`` for JSON,
``file:row N`` for Parquet), for field-mapped sources and files of scores or labels; read
through :mod:`rmaudit.components.data_text`, so any file is rows or one line naming it."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rmaudit.components.data_text import gzipped, parse_json, read_bytes, read_text
from rmaudit.errors import BadInput

#: the formats :func:`read_rows` reads, by the name's ending (``.gz`` aside)
FORMATS = {".csv": "csv", ".parquet": "parquet", ".json": "json", ".jsonl": "jsonl"}


def file_format(path: Path) -> str:
    """ "jsonl", "json", "csv" or "parquet", from the name (``.gz`` aside); JSON Lines otherwise."""
    name = path.name.lower().removesuffix(".gz")
    return next((fmt for ending, fmt in FORMATS.items() if name.endswith(ending)), "jsonl")


def read_rows(path: Path, fmt: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    fmt = fmt or file_format(path)
    if fmt == "parquet":
        yield from _parquet_rows(path)
        return
    text = read_text(path)
    if fmt == "csv":
        yield from _csv_rows(path, text)
        return
    if fmt == "json":
        yield from json_rows(path, parse_json(text, str(path), whole_file=True))
        return
    for number, line in enumerate(
        text.split("\n"), start=1
    ):  # not splitlines: JSON strings may hold U+2028
        if not line.strip():
            continue
        where = f"{path}:{number}"
        record = parse_json(line, where)
        if not isinstance(record, dict):
            raise BadInput("expected a JSON object", file=where, value=record)
        yield where, record


def _csv_rows(path: Path, text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        for row in reader:
            yield f"{path}:{reader.line_num}", row
    except csv.Error as error:  # a field over the csv module's limit, a NUL byte, ...
        raise BadInput(f"invalid CSV ({error})", file=f"{path}:{reader.line_num + 1}") from None


def json_rows(path: Path, records: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """The rows of a JSON array of objects, as parsed (AlpacaEval's ``model_outputs.json`` and
    ``annotations.json``)."""
    if not isinstance(records, list):
        raise BadInput(
            "expected a JSON array of objects", file=str(path), value=type(records).__name__
        )
    for number, record in enumerate(records, start=1):
        where = f"{path}:record {number}"
        if not isinstance(record, dict):
            raise BadInput("expected a JSON object", file=where, value=record)
        yield where, record


def _parquet_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for number, row in enumerate(parquet_rows(path), start=1):
        yield f"{path}:row {number}", row


def parquet_rows(path: Path) -> list[dict[str, Any]]:
    """Every row of a Parquet file (gzipped when it ends in .gz); a missing pyarrow or a file
    that is not Parquet is BadInput."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise BadInput(
            "reading Parquet needs pyarrow: pip install 'rmaudit[parquet]'", file=str(path)
        ) from None
    source = io.BytesIO(read_bytes(path)) if gzipped(path) else path
    try:
        table = pq.read_table(source)
    except Exception as error:  # pyarrow raises several types for a file that is not Parquet
        raise BadInput(f"cannot read the Parquet file ({error})", file=str(path)) from None
    return table.to_pylist()
