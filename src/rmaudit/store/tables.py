"""What the store's groups of tables share: writes that are atomic, when a row was written, and
"which of these keys are stored" asked in chunks of keys or read as a component's whole range."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import Store

#: keys per ``in (…)`` lookup: below SQLite's oldest limit on query parameters (999)
CHUNK = 900
#: a component's stored rows are read whole, not looked up by key, up to this many times as
#: many as a stage asks about
RANGE_READ = 3
#: from this many keys, how many are stored is counted first, in SQL (``Store.asked``): a
#: stage that has them all, or none, reads none back
COUNT_FIRST = 2_000


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def chunks(keys: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(keys), CHUNK):
        yield keys[start : start + CHUNK]


def marks(chunk: Sequence[Any]) -> str:
    return ", ".join("?" * len(chunk))


class Table:
    """A group of the store's tables (:class:`~.items.Items`, :class:`~.solutions.Solutions`,
    :class:`~.verdicts.Verdicts`)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def _insert(self, sql: str, rows: Iterable[tuple]) -> None:
        with self.store.transaction():
            self.store.executemany(sql, rows)

    def _any(self, table: str, where: str, value: str) -> bool:
        """Whether ``table`` has a row ``where`` holds (one ``?``: ``value``)."""
        sql = f"select 1 from {table} where {where} limit 1"
        return self.store.execute(sql, [value]).fetchone() is not None

    def _counted(self, join: str, fixed: list[Any], unique: list[str]) -> set[str] | None:
        """``unique`` where every one is found by ``join`` (a table joined to the asked keys,
        ``a.key``), the empty set where none is, None where some are or it cannot count."""
        asked = self.store.asked(unique) if len(unique) >= COUNT_FIRST else None
        if asked is None:
            return None
        (found,) = self.store.execute(
            f"select count(*) from {asked} a join {join}", fixed
        ).fetchone()
        return set(unique) if found == len(unique) else set() if found == 0 else None

    def _stored(
        self, sql: str, fixed: list[Any], keys: Sequence[str], table: str | None = None
    ) -> set[str]:
        """Those of ``keys`` that ``sql`` (ending in ``in (``, given the marks) finds; keys of
        ``table`` (its ``id``) are counted first, where there are many."""
        unique = list(dict.fromkeys(keys))
        if table is not None:
            counted = self._counted(f"{table} t on t.id = a.key", [], unique)
            if counted is not None:
                return counted
        found: set[str] = set()
        for chunk in chunks(unique):
            # fetchall: one call per chunk, not a Python-level __next__ per row
            rows = self.store.execute(f"{sql} ({marks(chunk)})", [*fixed, *chunk]).fetchall()
            found.update(row[0] for row in rows)
        return found

    def _stored_by(
        self, table: str, column: str, key: str, ids: Sequence[str], item: str = "response_id"
    ) -> set[str]:
        """Those of ``ids`` whose ``item`` ``table`` holds under the component ``key`` (its
        first key column, so the component's rows are contiguous): all of that range read at
        once where it holds at most ``RANGE_READ`` times as many rows as asked about (a third
        of the time of looking each up), else looked up by chunks; counted first where they
        are many (all stored, or none: nothing read back)."""
        unique = list(dict.fromkeys(ids))
        counted = self._counted(f"{table} t on t.{column} = ? and t.{item} = a.key", [key], unique)
        if counted is not None:
            return counted
        (held,) = self.store.execute(
            f"select count(*) from {table} where {column} = ?", [key]
        ).fetchone()
        if held > RANGE_READ * len(unique):
            return self._stored(
                f"select {item} from {table} where {column} = ? and {item} in",
                [key],
                unique,
            )
        rows = self.store.execute(
            f"select {item} from {table} where {column} = ?", [key]
        ).fetchall()
        return {row[0] for row in rows}.intersection(unique)
