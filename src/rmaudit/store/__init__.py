"""The SQLite store: the only place rmaudit writes or reads SQL (docs/architecture.md,
"Content-addressed, resumable store").

Everything a run produces is keyed by content: prompts by text, responses by (policy, prompt,
sample index), labels by (response, oracle), scores by (response, RM).  Writers insert with
``insert or ignore``, so a rerun never stores an item twice.

A stage's batches are written inside :meth:`Store.grouped_writes`: each batch is atomic (a
savepoint), and the batches share a transaction that commits every ``GROUP_ROWS`` rows or
``GROUP_SECONDS`` seconds, whichever comes first, and when the stage ends or fails.  So the number
of commits does not follow the recipe's ``batch_size``, and a killed run loses at most the last
second of work (or the batch in flight, when a batch takes longer).  Scores and labels are clustered
by the component that made them (``schema.M004``), so a stage's writes land in its own part of the
tables and cost the same however much else the file holds.

Only the standard library is imported here: ``rmaudit runs`` and the TUI open a store fast.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from rmaudit.errors import BadInput

from .access import check_writable, not_writable
from .damage import CheckedCursor, check_schema, corrupted
from .file_summaries import FileSummaries
from .items import Items
from .json_columns import dumps
from .lock import WriterBusy, WriterLock
from .read import Reads
from .runs import Runs
from .schema import MIGRATION_SET, MIGRATIONS, SCHEMA_VERSION, check, migrate
from .solutions import Solutions
from .tables import chunks, utc_now
from .verdicts import Verdicts

__all__ = ["SCHEMA_VERSION", "Store", "WriterBusy", "dumps", "utc_now"]

T = TypeVar("T")

#: a grouped transaction commits once it holds this many changed rows …
GROUP_ROWS = 50_000
#: … or is this old (seconds), checked after each batch
GROUP_SECONDS = 1.0
#: page cache of a writing connection (KiB): holds the index pages a stage's writes touch
CACHE_KIB = 64 * 1024
#: how long a statement waits for a lock another connection holds (seconds): writers are one
#: at a time (``lock.WriterLock``), so only a checkpoint or a mode switch can make it wait
BUSY_SECONDS = 30


def _wait_silently(pid: int | None) -> None:
    """The default ``waiting`` of :meth:`Store.open`: wait for the other writer, say nothing."""


class Store:
    """An open rmaudit database: ``items`` (what stages store), ``runs`` (run bookkeeping and
    results), ``read`` (what the CLI, TUI and report show), ``solutions`` (what runs of
    process reward models store), ``file_summaries`` (what data files add up to)."""

    def __init__(self, conn: sqlite3.Connection, path: str, lock: WriterLock | None = None) -> None:
        self._conn = conn
        self.path = path
        self._lock = lock  # held by a store open for writing
        self._savepoints = 0
        self._grouped = False  # inside grouped_writes
        self._committed = 0.0  # when grouped writes last committed (time.monotonic)
        self._changes_at_begin = 0  # total_changes when the open transaction began
        self._held = False  # inside hold(): nothing commits before commit_held()
        #: what :meth:`remembered` keeps, and the file's state it was computed on
        self._remembered: dict[Hashable, Any] = {}
        self._remembered_on: tuple[int, int] | None = None
        #: the key list ``temp.asked`` holds (:meth:`asked`): its length and hash
        self._asked: tuple[int, int] | None = None
        self.items = Items(self)
        self.runs = Runs(self)
        self.read = Reads(self)
        self.verdicts = Verdicts(self)
        self.solutions = Solutions(self)
        self.file_summaries = FileSummaries(self)

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        create: bool = True,
        waiting: Callable[[int | None], None] | None = _wait_silently,
    ) -> Store:
        """Open (and migrate) an rmaudit DB for writing; a foreign or newer file is
        ``BadInput``.  One writer at a time: while another process writes the file, call
        ``waiting(its pid)`` and wait for it, or with ``waiting=None`` raise ``WriterBusy``."""
        path = str(path)
        if not create and not Path(path).exists():
            raise BadInput("database does not exist", file=path)
        check_writable(path)
        if Path(path).exists():  # a foreign or damaged file is refused before it is written
            existing = cls(_connect(Path(path).resolve().as_uri() + "?mode=ro", path), path)
            try:
                existing.check_integrity()
            finally:
                existing.close()
        try:
            lock = WriterLock.acquire(path, waiting)
        except OSError as error:
            raise not_writable(error, path) from None
        try:
            try:
                conn = _connect(path, path)
            except sqlite3.OperationalError as error:
                raise not_writable(error, path) from None
            try:
                _wal(conn)
                conn.execute("pragma synchronous = normal")
                conn.execute(f"pragma cache_size = -{CACHE_KIB}")
                migrate(conn)
                # each batch is a savepoint, whose journal of the pages it changes is kept in
                # memory rather than in a temporary file (a third of a stage's write time);
                # after the migrations, whose copies of whole tables may sort more than fits
                conn.execute("pragma temp_store = memory")
            except sqlite3.DatabaseError as error:
                conn.close()
                refused = not_writable(error, path)
                raise (corrupted(error, path) if refused is error else refused) from None
            except BaseException:
                conn.close()
                raise
        except BaseException:
            lock.release()
            raise
        return cls(conn, path, lock)

    @classmethod
    def open_readonly(cls, path: str | Path) -> Store | None:
        """Open an existing DB without changing it (for plans and viewers); None if absent.
        A DB no process writes is in rollback-journal mode (see :meth:`close`), so reading
        it leaves no ``-wal``/``-shm`` files behind."""
        path = str(path)
        if not Path(path).exists():
            return None
        return cls(_connect(Path(path).resolve().as_uri() + "?mode=ro", path), path)

    def close(self) -> None:
        """Close; a writer also checkpoints and leaves the file in rollback-journal mode
        (one file, which read-only openers can read without creating ``-wal``/``-shm``), or
        in WAL mode if a reader is still connected (it would have to wait for that one)."""
        if self._lock is not None:
            try:
                self.execute("pragma busy_timeout = 0")
                self.execute("pragma journal_mode = delete")
            except sqlite3.OperationalError:
                pass  # a reader is connected: the file stays in WAL mode
        self._conn.close()
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def check_integrity(self) -> None:
        """``BadInput`` if SQLite's ``quick_check`` finds damaged pages (it reads them all), or
        a table or column of the file's schema is missing (``damage.check_schema``)."""
        try:
            found = [row[0] for row in self._conn.execute("pragma quick_check(3)")]
        except sqlite3.DatabaseError as error:
            found = [str(error)]
        if found != ["ok"]:
            raise BadInput(
                f"database is corrupted (SQLite quick_check: {'; '.join(found)}); "
                f"restore it from a copy, or rerun its recipes into a new DB",
                file=self.path,
            )
        self.check_schema()

    def check_schema(self) -> None:
        """``BadInput`` if a table or column of the file's schema is missing (cheap: the
        schema alone, no pages read)."""
        check_schema(self._conn, self.path)

    def birth_mark(self) -> tuple[int, int, str] | None:
        """What tells this file from another that took its place: its device and inode, and
        when its schema was first made (None: not an rmaudit file yet)."""
        try:
            row = self.execute(
                "select applied_at from _sqlite_migrations where migration_set = ? and name = ?",
                [MIGRATION_SET, MIGRATIONS[0][0]],
            ).fetchone()
            found = Path(self.path).stat()
        except (sqlite3.Error, OSError):
            return None
        return None if row is None else (found.st_dev, found.st_ino, row[0])

    def tables(self) -> set[str]:
        return {
            row[0] for row in self.execute("select name from sqlite_master where type = 'table'")
        }

    def remembered(self, key: Hashable, compute: Callable[[], T]) -> T:
        """What ``compute()`` returns, computed once while the file is unchanged: values
        derived from what is stored (a comparison's per-unit values), which every view of one
        command shares.  Any write — by this connection (its ``total_changes``) or another
        (SQLite's ``data_version``) — forgets them all; a value computed while one happened is
        not kept."""
        state = self._state()
        if state != self._remembered_on:
            self._remembered, self._remembered_on = {}, state
        if key in self._remembered:
            return self._remembered[key]
        value = compute()
        if self._state() == state:
            self._remembered[key] = value
        return value

    def asked(self, keys: list[str]) -> str | None:
        """The name of a temporary table (column ``key``) holding exactly ``keys``, filled once
        per key list, so "which of these are stored" can be counted in SQL before any row is
        read back; None inside a transaction, whose rollback would empty it unseen.  The
        file is not written: temporary tables live in the connection."""
        if self._conn.in_transaction:
            return None
        fingerprint = (len(keys), hash(tuple(keys)))
        if fingerprint != self._asked:
            self._conn.execute(
                "create temp table if not exists asked (key text primary key) without rowid"
            )
            self._conn.execute("delete from temp.asked")
            for chunk in chunks(keys):  # a statement of many rows: a fifth of executemany's time
                values = ", ".join(["(?)"] * len(chunk))
                self._conn.execute(f"insert into temp.asked values {values}", chunk)
            self._asked = fingerprint
        return "temp.asked"

    def _state(self) -> tuple[int, int]:
        return self._conn.total_changes, self.execute("pragma data_version").fetchone()[0]

    # -- transactions -----------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All of the block or none of it.  Inside another transaction (or a stage's
        :meth:`grouped_writes`) it is a savepoint of that one and commits with it."""
        if not self._conn.in_transaction:
            self.execute("begin immediate")
            self._changes_at_begin = self._conn.total_changes
            if not self._grouped:
                try:
                    yield
                except BaseException:
                    self.execute("rollback")
                    raise
                self.execute("commit")
                return
        name = f"batch{self._savepoints}"
        self._savepoints += 1
        self.execute(f"savepoint {name}")
        try:
            yield
        except BaseException:
            self.execute(f"rollback to {name}")
            self.execute(f"release {name}")
            raise
        finally:
            self._savepoints -= 1
        self.execute(f"release {name}")
        if (
            self._grouped
            and self._savepoints == 0
            and (
                self._conn.total_changes - self._changes_at_begin >= GROUP_ROWS
                or time.monotonic() - self._committed >= GROUP_SECONDS
            )
        ):
            self._commit()

    @contextmanager
    def grouped_writes(self) -> Iterator[None]:
        """Let the transactions of the block (one per batch) share commits: one commits once
        it holds ``GROUP_ROWS`` changed rows, or ``GROUP_SECONDS`` after the last commit (so a
        stage whose batches each take longer commits every batch, as it comes).  What is
        complete is committed when the block ends, also when it fails."""
        if self._grouped:  # already grouped by an enclosing block
            yield
            return
        self._grouped, self._committed = True, time.monotonic()
        try:
            yield
        finally:
            self._grouped = False
            self._commit()

    def hold(self) -> None:
        """Hold every write from now on in one transaction, which :meth:`commit_held` commits
        and :meth:`rollback_held` drops: what ``--strict`` writes before the scoring checks
        that may stop it (responses the run generates) reaches the file only once they pass.
        A process killed meanwhile leaves the file as it was (SQLite rolls the transaction
        back), at the cost of the work held."""
        self._commit()
        self.execute("begin immediate")
        self._changes_at_begin = self._conn.total_changes
        self._held = True

    @property
    def held(self) -> bool:
        """Whether writes are held (:meth:`hold`): none of them has reached the file yet."""
        return self._held

    def commit_held(self) -> None:
        """Commit what :meth:`hold` held, and let writes commit as they come again."""
        if self._held:
            self._held = False
            self._commit()

    def rollback_held(self) -> None:
        """Drop everything written since :meth:`hold` (nothing when not holding)."""
        if self._held:
            self._held = False
            if self._conn.in_transaction:
                self.execute("rollback")

    def _commit(self) -> None:
        if self._conn.in_transaction and not self._held:
            self.execute("commit")
        self._committed = time.monotonic()

    # -- every statement goes through these two -----------------------------------------
    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        cursor = self._conn.cursor(CheckedCursor)
        cursor.path = self.path
        try:
            return cursor.execute(sql, params)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
            raise self._corrupted(error) from None

    def executemany(self, sql: str, rows: Any) -> None:
        try:
            self._conn.executemany(sql, rows)
        except sqlite3.DatabaseError as error:
            raise self._corrupted(error) from None

    def _corrupted(self, error: sqlite3.DatabaseError | UnicodeDecodeError) -> Exception:
        return corrupted(error, self.path)


def _wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL; the switch ignores the busy timeout while a reader of the
    rollback-journal file holds its lock, so try again for ``BUSY_SECONDS``."""
    deadline = time.monotonic() + BUSY_SECONDS
    while True:
        try:
            conn.execute("pragma journal_mode = wal")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _connect(target: str, path: str) -> sqlite3.Connection:
    """An autocommit connection (transactions are explicit), checked to be an rmaudit DB."""
    conn = sqlite3.connect(
        target,
        uri=target.startswith("file:"),
        timeout=BUSY_SECONDS,
        isolation_level=None,
        check_same_thread=True,
    )
    try:
        check(conn, path)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as error:  # schema_info's page damaged
        conn.close()
        raise corrupted(error, path) from None
    except BaseException:
        conn.close()
        raise
    return conn
