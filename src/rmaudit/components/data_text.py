"""A data file's text and its JSON, read so that whatever the file holds is ``BadInput``
naming the file (and its line, where it has lines) — never an error Python's readers raise
without a name: a gzip body that does not inflate (zlib's "invalid distance too far back"),
bytes that are not UTF-8, JSON nested deeper than the parser recurses (``RecursionError``),
an integer of over 4,300 digits (Python's limit on converting one: ``ValueError``) or one past
a float's range (``OverflowError`` once a reader takes it as a number).  Every reader of data
files — rows of scores, labels and prompts, pair files, recorded judges' outputs, RewardBench
2's results, step scores, rmaudit's benchmark files — reads through here.

An integer in JSON is refused where no float can hold it (over about 1.8e308): no score,
label or count is that large, and a reader that took it as a number would fail unnamed.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rmaudit.errors import BadInput

#: what reading (and inflating) a file can raise
_UNREADABLE = (OSError, EOFError, UnicodeDecodeError, zlib.error)
#: digits below which every integer is a finite float (10**308 < 1.8e308 < 10**309)
_FINITE_DIGITS = 308


def gzipped(path: Path) -> bool:
    """Whether the file is read through gzip: its name ends in ``.gz``."""
    return path.suffix.lower() == ".gz"


def unreadable(path: Path, error: BaseException) -> BadInput:
    """The one line for a file that cannot be read (or inflated) at all."""
    reason = f"corrupt gzip data: {error}" if isinstance(error, zlib.error) else str(error)
    return BadInput(f"cannot read the file ({reason})", file=str(path))


def read_text(path: Path) -> str:
    """The whole text of the file, inflated where it is gzipped; line endings as they are."""
    try:
        if gzipped(path):
            with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
                return handle.read()
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except _UNREADABLE as error:
        raise unreadable(path, error) from None


def read_bytes(path: Path) -> bytes:
    """The file's bytes, inflated where it is gzipped."""
    try:
        data = path.read_bytes()
        return gzip.decompress(data) if gzipped(path) else data
    except _UNREADABLE as error:
        raise unreadable(path, error) from None


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number from 1, line) as the file is read, for a file too large to hold whole."""
    try:
        raw = gzip.open(path, "rb") if gzipped(path) else open(path, "rb")
        with io.TextIOWrapper(raw, encoding="utf-8") as handle:
            yield from enumerate(handle, start=1)
    except _UNREADABLE as error:
        raise unreadable(path, error) from None


class JSONProblem(ValueError):
    """Why a text is not JSON rmaudit reads: the reason, and where in the text (an offset and
    its line, None where the parser does not say: a number too large, nesting too deep)."""

    def __init__(self, reason: str, position: int | None = None, line: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.position = position
        self.line = line


def _integer(digits: str) -> int:
    if len(digits.lstrip("-")) > _FINITE_DIGITS and math.isinf(float(digits)):
        raise JSONProblem(f"a number too large: an integer of {len(digits.lstrip('-')):,} digits")
    return int(digits)


_DECODER = json.JSONDecoder(parse_int=_integer)


def decode_at(text: str, start: int) -> tuple[Any, int]:
    """The JSON value that starts at offset ``start``, and the offset after it."""
    try:
        return _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as error:
        raise JSONProblem(error.msg, error.pos, error.lineno) from None
    except RecursionError:
        raise JSONProblem("nested deeper than the JSON parser reads") from None


def loads(text: str) -> Any:
    """The JSON value the whole text holds; ``JSONProblem`` where it holds none rmaudit reads."""
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as error:
        raise JSONProblem(error.msg, error.pos, error.lineno) from None
    except RecursionError:
        raise JSONProblem("nested deeper than the JSON parser reads") from None


def parse_json(text: str, where: str, *, whole_file: bool = False) -> Any:
    """:func:`loads`, its problem ``BadInput`` at ``where``: ``file:line`` for a line of JSON
    Lines, else the file (``whole_file``: the line within it said, where the parser knows)."""
    try:
        return loads(text)
    except JSONProblem as problem:
        line = f", line {problem.line}" if whole_file and problem.line is not None else ""
        raise BadInput(f"invalid JSON ({problem.reason}{line})", file=where) from None
