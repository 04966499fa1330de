"""One writer per database file (docs/architecture.md, "Many processes, one DB").

A process that opens a DB for writing first takes an exclusive ``flock`` on ``DB.lock`` and
writes its pid there, and holds it until it closes the DB: two runs on one file write one
after the other, never interleaved (SQLite would serialise their transactions, but a stage
keeps its write transaction open for up to a second, so a second writer starved and gave up
with "database is locked").  Readers take no lock: the DB is in WAL mode while written, so
they never block a writer nor wait for one.  The kernel drops the lock when its process
dies, so a killed run leaves nothing to clean up.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable

from rmaudit.errors import WriterBusy

__all__ = ["WriterBusy", "WriterLock"]


class WriterLock:
    """The exclusive right to write one DB file; release it with :meth:`release`."""

    #: how often a waiting writer tries again (seconds)
    POLL_SECONDS = 0.1

    def __init__(self, path: str, fd: int) -> None:
        self.path, self._fd = path, fd

    @classmethod
    def acquire(
        cls, db_path: str, waiting: Callable[[int | None], None] | None = None
    ) -> WriterLock:
        """Take the lock of ``db_path``.  Held by another process: with ``waiting`` None,
        raise :class:`WriterBusy`; else call ``waiting(pid)`` once and wait for it."""
        path, told = f"{db_path}.lock", False
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                if waiting is None:
                    raise WriterBusy(db_path, _holder(path)) from None
                if not told:
                    waiting(_holder(path))
                    told = True
                time.sleep(cls.POLL_SECONDS)
                continue
            # the holder we waited for may have unlinked the file after we opened it
            if _same_file(fd, path):
                os.ftruncate(fd, 0)
                os.write(fd, str(os.getpid()).encode())
                return cls(path, fd)
            os.close(fd)

    def release(self) -> None:
        """Remove the lock file, then drop the lock (so a waiter never holds a removed file)."""
        if self._fd < 0:
            return
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.close(self._fd)
        self._fd = -1


def _holder(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as file:
            return int(file.read().strip() or 0) or None
    except (OSError, ValueError):
        return None


def _same_file(fd: int, path: str) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False
