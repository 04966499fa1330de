"""A preference-pair file's records, each with the line it starts on (the formats
:mod:`.parsers` reads): JSON Lines, a JSON array, CSV with a header row (any of them
gzip-compressed), or Parquet."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rmaudit.benchmark.tabular import parquet_rows
from rmaudit.components.data_text import JSONProblem, decode_at, loads, read_text
from rmaudit.errors import BadInput


class Malformed:
    """Stands in for a record whose line could not be decoded."""

    def __init__(self, message: str) -> None:
        self.message = message


def file_records(path: Path) -> Iterator[tuple[int, Any]]:
    """(line the record starts on, record) for every record of the file."""
    if path.name.endswith(".parquet"):
        yield from enumerate(parquet_rows(path), start=1)
        return
    text = read_text(path)
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    if name.endswith(".csv"):
        yield from _csv_records(text)
    elif not name.endswith(".jsonl") and text.lstrip().startswith("["):
        yield from _json_array_records(text, path)
    else:
        yield from _jsonl_records(text)


def _jsonl_records(text: str) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(
        text.split("\n"), start=1
    ):  # not splitlines: JSON strings may hold U+2028
        if not line.strip():
            continue
        try:
            yield number, loads(line)
        except JSONProblem as problem:
            column = "" if problem.position is None else f" at column {problem.position + 1}"
            yield number, Malformed(problem.reason + column)


def _json_array_records(text: str, path: Path) -> Iterator[tuple[int, Any]]:
    position = text.index("[") + 1
    line, counted_to = 1, 0

    def line_at(offset: int) -> int:
        nonlocal line, counted_to
        line += text.count("\n", counted_to, offset)
        counted_to = offset
        return line

    def skip_whitespace() -> None:
        nonlocal position
        while position < len(text) and text[position].isspace():
            position += 1

    skip_whitespace()
    if text[position : position + 1] == "]" and not text[position + 1 :].strip():
        return
    while True:
        skip_whitespace()
        start = position
        try:
            record, position = decode_at(text, start)
        except JSONProblem as problem:
            at = line_at(start if problem.position is None else problem.position)
            raise BadInput(f"invalid JSON array ({problem.reason})", file=f"{path}:{at}") from None
        yield line_at(start), record
        skip_whitespace()
        if text[position : position + 1] == ",":
            position += 1
            continue
        if text[position : position + 1] == "]" and not text[position + 1 :].strip():
            return
        raise BadInput(
            "invalid JSON array (expected ',' or a final ']')", file=f"{path}:{line_at(position)}"
        )


def _csv_records(text: str) -> Iterator[tuple[int, Any]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    next_line = 2  # the header is line 1 (a header spanning lines is not supported)
    try:
        for row in reader:
            start, next_line = next_line, reader.line_num + 1
            if None in row:  # more values than header columns
                yield (
                    start,
                    Malformed(
                        f"{len(row) - 1 + len(row[None])} values for "
                        f"{len(reader.fieldnames or [])} columns"
                    ),
                )
            else:
                yield start, row
    except csv.Error as error:
        yield next_line, Malformed(f"CSV error: {error}")
