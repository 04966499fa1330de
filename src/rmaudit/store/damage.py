"""A damaged DB file is the user's to fix: SQLite's errors, and stored values of the wrong
kind, become one ``BadInput`` line naming the file (exit code 2), wherever a read meets them."""

from __future__ import annotations

import json
import math
import sqlite3
from datetime import datetime
from functools import cache
from typing import Any

from rmaudit.errors import BadInput

from .schema import MIGRATION_SET, MIGRATIONS

#: what SQLite says, beside a bare ``DatabaseError``, when a file passed the checks on opening
#: and is damaged all the same: tables dropped, text that is not UTF-8 in damaged pages
DAMAGE_SIGNS = ("no such table", "no such column", "could not decode to utf-8")


def corrupted(error: sqlite3.DatabaseError | UnicodeDecodeError, path: str) -> Exception:
    """A damaged file is the user's to fix (``BadInput``); locks, constraints, a full disk and
    the like are not.  Text that is not UTF-8 is damage too, whether SQLite says so or Python
    meets it decoding (the schema table's names)."""
    if isinstance(error, UnicodeDecodeError):
        said = "text that is not UTF-8"
    else:
        said = str(error).partition(" with text ")[0]  # a decoding error quotes the text
    if (
        isinstance(error, sqlite3.DatabaseError)
        and type(error) is not sqlite3.DatabaseError
        and not said.lower().startswith(DAMAGE_SIGNS)
    ):
        return error
    return BadInput(
        f"database is corrupted (SQLite: {said}); restore it from a copy, or "
        f"rerun its recipes into a new DB",
        file=path,
    )


def damaged_value(path: str, field: str, value: Any) -> BadInput:
    """A stored value of the wrong kind (text where a number belongs), found on reading."""
    shown = value[:40] if isinstance(value, str | bytes) else value
    return BadInput(
        "database is corrupted: not a number; restore it from a copy, or rerun its recipes "
        "into a new DB",
        file=path,
        field=field,
        value=shown,
    )


class CheckedCursor(sqlite3.Cursor):
    """A cursor whose rows, like its statements, turn a damaged file into ``BadInput``: SQLite
    reads a page when a row on it is fetched, so damage shows there too."""

    path = ""

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
            raise corrupted(error, self.path) from None

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
            raise corrupted(error, self.path) from None

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        try:
            return super().fetchmany(size)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
            raise corrupted(error, self.path) from None

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
            raise corrupted(error, self.path) from None


def check_schema(conn: sqlite3.Connection, path: str) -> None:
    """``BadInput`` when a table or column the file's own migrations made is missing: a
    dropped table passes SQLite's ``quick_check``, and would otherwise be met only when a
    command reads it, after a run has written its first rows."""
    try:
        found = _columns(conn)
        if "schema_info" not in found or "_sqlite_migrations" not in found:
            return  # a new file, or another program's (schema.check says which)
        applied = frozenset(
            row[0]
            for row in conn.execute(
                "select name from _sqlite_migrations where migration_set = ?", [MIGRATION_SET]
            )
        )
    except (sqlite3.DatabaseError, UnicodeDecodeError) as error:  # damaged text in the schema
        raise corrupted(error, path) from None
    for table, columns in _expected_columns(applied).items():
        if table not in found:
            raise _damaged(f"no such table: {table}", path)
        for column in sorted(columns - found[table]):
            raise _damaged(f"no such column: {table}.{column}", path)


def _damaged(said: str, path: str) -> BadInput:
    return BadInput(
        f"database is corrupted ({said}); restore it from a copy, or rerun its recipes "
        f"into a new DB",
        file=path,
    )


def _columns(conn: sqlite3.Connection) -> dict[str, set[str]]:
    tables = [row[0] for row in conn.execute("select name from sqlite_master where type = 'table'")]
    return {
        table: {row[1] for row in conn.execute(f"pragma table_info([{table}])")} for table in tables
    }


@cache
def _expected_columns(applied: frozenset[str]) -> dict[str, set[str]]:
    """Each table's columns after the migrations ``applied`` (run on an empty in-memory DB)."""
    conn = sqlite3.connect(":memory:")
    try:
        for name, sql in MIGRATIONS:
            if name in applied:
                conn.executescript(sql)
        return _columns(conn)
    except sqlite3.Error:  # not a sequence the migrations make: nothing to compare with
        return {}
    finally:
        conn.close()


#: what a run's status can be (``store/runs.py``)
RUN_STATUSES = ("running", "done", "failed", "interrupted")


def check_run_row(path: str, run: dict[str, Any]) -> None:
    """``BadInput`` naming the run and the field when a stored run's bookkeeping is damaged
    (a status rmaudit never writes, timings that are not a JSON object of numbers, a time that
    is not ISO 8601), which the results would otherwise show as ``null``."""
    problem = _run_row_problem(run)
    if problem is not None:
        field, value = problem
        raise BadInput(
            f"database is corrupted: run {run['id']} has a damaged {field}; restore it from a "
            f"copy, or rerun the run's recipe into a new DB",
            file=path,
            field=f"runs.{field}",
            value=value[:40] if isinstance(value, str | bytes) else value,
        )


def _run_row_problem(run: dict[str, Any]) -> tuple[str, Any] | None:
    status, timings = run.get("status"), run.get("timings")
    if status not in RUN_STATUSES:
        return "status", status
    if run.get("simulated") not in (0, 1):
        return "simulated", run.get("simulated")
    for field in ("created_at", "finished_at"):
        value = run.get(field)
        if (value is not None or field == "created_at") and not _iso_time(value):
            return field, value
    if timings is None:
        return ("timings", None) if status == "done" else None
    try:
        parsed = json.loads(timings) if isinstance(timings, str) else None
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        for v in parsed.values()
    ):
        return "timings", timings
    return None


def _iso_time(value: Any) -> bool:
    try:
        datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return False
    return True
