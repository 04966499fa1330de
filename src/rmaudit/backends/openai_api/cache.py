"""A persistent cache of API replies, so no request is paid for twice, across runs too.

One SQLite file (by default ``requests.sqlite`` in ``$RMAUDIT_CACHE_DIR``, else in the user cache
directory that ``platformdirs`` gives: ``$XDG_CACHE_HOME/rmaudit`` or ``~/.cache/rmaudit`` on Linux,
``~/Library/Caches/rmaudit`` on macOS, ``%LOCALAPPDATA%\\rmaudit\\Cache`` on Windows), shared by
every recipe and database on the machine: the same request to the same server and model is the same
reply whichever run asks.  Keys are hashes of (base URL, endpoint, request body, sample index);
request headers, and so the API key, are never part of a key or a value.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from platformdirs import user_cache_path

CACHE_FILE_NAME = "requests.sqlite"


def default_cache_path() -> Path:
    folder = os.environ.get("RMAUDIT_CACHE_DIR") or user_cache_path("rmaudit", appauthor=False)
    return Path(folder) / CACHE_FILE_NAME


class RequestCache:
    """Reply bodies by request key; every ``put`` is committed at once, so a killed run keeps
    every reply it received."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # one connection used from the event loop's thread, which may not be the creator's
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._lock = threading.Lock()
        self._initialise()

    def _initialise(self) -> None:
        """Switch to WAL and create the table.  Several processes (Ray workers) may open a new
        cache at once; switching the journal mode ignores SQLite's busy timeout, so retry."""
        deadline = time.monotonic() + 30
        while True:
            try:
                self._conn.execute("pragma journal_mode=wal")
                # WAL without an fsync per commit: a killed process loses nothing, a power cut
                # at most the last replies (which a rerun pays for again)
                self._conn.execute("pragma synchronous=normal")
                self._conn.execute(
                    "create table if not exists replies (key text primary key, "
                    "endpoint text not null, body text not null)"
                )
                self._conn.commit()
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute("select body from replies where key = ?", [key]).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, endpoint: str, body: dict[str, Any]) -> None:
        with self._lock:
            self._conn.execute(
                "insert or ignore into replies (key, endpoint, body) values (?, ?, ?)",
                [key, endpoint, json.dumps(body)],
            )
            self._conn.commit()

    def close(self) -> None:
        self._conn.close()
