"""Values (RM scores, oracle labels) computed elsewhere, read from a file and matched to
rmaudit's responses by a key the user has: prompt text + response text, the user's own
response ids, or rmaudit's response ids (docs/bring-your-own-data.md, "How keys match").

Texts are matched after :func:`text_key`: Unicode NFC, line endings as ``\\n``, leading and
trailing whitespace removed; everything else (inner whitespace, case, punctuation) is content
and must be equal.  A key given twice with the same value is one row; with different values
it is an error naming both lines, never "the last one wins".
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rmaudit.benchmark.tabular import read_rows
from rmaudit.components import Prompt, Response
from rmaudit.errors import BadInput

#: "text": prompt text + response text; "id": the user's response ids (a response's
#: ``meta["id"]``, as a benchmark file gave it); "rmaudit-id": rmaudit's response ids.
KeyKind = Literal["text", "id", "rmaudit-id"]
Key = tuple[str, ...]


#: items per call of a component that looks its values up in a file: all of a stage's at once,
#: so a miss is counted over every response the stage needs, not one batch
ALL_AT_ONCE = 1 << 30


def text_key(text: str) -> str:
    """A text as natural keys compare it: NFC, ``\\r\\n`` and ``\\r`` as ``\\n``, stripped."""
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n")).strip()


def response_key(kind: KeyKind, prompt: Prompt, response: Response) -> Key:
    """The key a response of a run has under ``kind``."""
    if kind == "text":
        return text_key(prompt.text), text_key(response.text)
    if kind == "id":
        return (str(response.meta.get("id", "")),)
    return (response.id,)


@dataclass(frozen=True)
class KeyFields:
    """Which fields of a row hold the key and the value."""

    kind: KeyKind
    prompt: str = "prompt"
    response: str = "response"
    id: str = "response_id"
    value: str = "score"

    def names(self) -> tuple[str, ...]:
        return (self.prompt, self.response) if self.kind == "text" else (self.id,)


@dataclass
class KeyedValues:
    """A file's values by key, with the line each key was first read from."""

    path: Path
    fields: KeyFields
    values: dict[Key, float] = field(default_factory=dict)
    where: dict[Key, str] = field(default_factory=dict)
    #: keys looked up so far (to report the rows that matched nothing)
    used: set[Key] = field(default_factory=set)

    def lookup(
        self, items: Sequence[tuple[Prompt, Response]], what: str, *, record: bool = True
    ) -> list[float]:
        """The value of every item; a missing one is an error that counts them all.
        ``record``: count the keys as used (for :meth:`unmatched`); a plan's check does not."""
        keys = [response_key(self.fields.kind, p, r) for p, r in items]
        missing = [i for i, key in enumerate(keys) if key not in self.values]
        if missing:
            prompt, response = items[missing[0]]
            raise BadInput(
                f"{len(missing):,} of {len(items):,} responses have no {what} in the "
                f"file (matching by {self.fields.kind}); the first: prompt "
                f"{_short(prompt.text)}, response {_short(response.text)}",
                file=str(self.path),
                field=", ".join(self.fields.names()),
            )
        if record:
            self.used.update(keys)
        return [self.values[key] for key in keys]

    def check_ids(self, ids: Sequence[str], what: str) -> None:
        """``BadInput`` counting the response ids (keys of ``"rmaudit-id"``) without a row,
        for responses whose texts are not made yet."""
        missing = [rid for rid in ids if (rid,) not in self.values]
        if missing:
            raise BadInput(
                f"{len(missing):,} of {len(ids):,} responses have no {what} in the file "
                f"(matching by {self.fields.kind}); the first: response id {missing[0]}",
                file=str(self.path),
                field=self.fields.id,
            )

    def unmatched(self) -> tuple[int, str | None]:
        """How many rows matched no response looked up so far, and the first one's line."""
        rest = [key for key in self.values if key not in self.used]
        return len(rest), (self.where[rest[0]] if rest else None)


def read_keyed_values(path: Path, fields: KeyFields, what: str) -> KeyedValues:
    """Read ``path`` (.jsonl, .json, .csv, .parquet, each optionally .gz) into values by key."""
    table = KeyedValues(Path(path), fields)
    for where, row in read_rows(Path(path)):
        # a text may be empty (a shift sweep's perturbed copy can be); an id may not
        empty_ok = fields.kind == "text"
        key = tuple(_key_part(row, name, where, empty_ok) for name in fields.names())
        if fields.kind == "text":
            key = tuple(text_key(part) for part in key)
        value = _finite(row, fields.value, where, what)
        if key in table.values:
            if table.values[key] != value:
                raise BadInput(
                    f"the same key has two different {what}s ({table.values[key]!r} "
                    f"at {table.where[key]})",
                    file=where,
                    field=fields.value,
                    value=value,
                )
            continue
        table.values[key] = value
        table.where[key] = where
    if not table.values:
        raise BadInput(f"no {what}s in the file", file=str(path))
    return table


def _column(row: dict[str, Any], name: str, where: str) -> Any:
    """The row's ``name`` field; a file without that column is told which columns it has."""
    if name not in row:
        found = ", ".join(map(str, row)) or "none"
        raise BadInput(f"no column {name!r} (columns found: {found})", file=where, field=name)
    return row[name]


def _key_part(row: dict[str, Any], name: str, where: str, empty_ok: bool) -> str:
    value = _column(row, name, where)
    if value is None or (value == "" and not empty_ok):
        raise BadInput("missing field", file=where, field=name)
    if isinstance(value, (dict, list)):
        raise BadInput("expected a string or a number", file=where, field=name, value=value)
    return str(value)


def _finite(row: dict[str, Any], name: str, where: str, what: str) -> float:
    raw = _column(row, name, where)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise BadInput(
            "expected a number", file=where, field=name, value=raw if raw is not None else ...
        ) from None
    if isinstance(raw, bool) or not math.isfinite(value):
        raise BadInput(f"expected a finite {what}", file=where, field=name, value=raw)
    return value


def _short(text: str, limit: int = 60) -> str:
    shown = text if len(text) <= limit else text[:limit] + "…"
    return repr(shown)
