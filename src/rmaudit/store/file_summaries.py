"""What a data file's records add up to, stored once per content (``file_summaries``, schema
``M013``): keyed by the SHA-256 of the file's bytes and the kind of summary (a recorded
judge's counts under its publisher's rule), so a rerun reads no file it has summed up before,
and an edited file, whose digest is another, is read again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .json_columns import dumps, json_object
from .tables import chunks, marks

if TYPE_CHECKING:
    from . import Store


class FileSummaries:
    def __init__(self, store: Store) -> None:
        self.store = store

    def of(self, kind: str, digests: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The stored summaries of ``kind`` of these files (by digest), those stored."""
        found: dict[str, dict[str, Any]] = {}
        for chunk in chunks(list(dict.fromkeys(digests))):
            rows = self.store.execute(
                f"select digest, summary from file_summaries where kind = ? "
                f"and digest in ({marks(chunk)})",
                [kind, *chunk],
            ).fetchall()
            found.update(
                (digest, json_object(summary, self.store.path, "file_summaries.summary"))
                for digest, summary in rows
            )
        return found

    def add(self, kind: str, summaries: Mapping[str, dict[str, Any]]) -> None:
        """Store each file's summary of ``kind`` (digest → JSON object), once."""
        with self.store.transaction():
            self.store.executemany(
                "insert or ignore into file_summaries (digest, kind, summary) values (?, ?, ?)",
                [(digest, kind, dumps(summary)) for digest, summary in summaries.items()],
            )
