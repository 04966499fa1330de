"""Whether this process may write a DB file, asked before a command starts its work: a
missing folder, a read-only folder or file is the user's to fix (``BadInput``, exit code 2,
naming the DB file), not a failed run naming the ``.lock`` file beside it."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from rmaudit.errors import BadInput

#: what SQLite says when the file or its folder cannot be written
_NOT_WRITABLE = ("attempt to write a readonly database", "unable to open database file")


def check_writable(path: str) -> None:
    """``BadInput`` naming ``path`` unless this process can write it: the file (if it exists)
    and its folder, where the lock and journal files go beside it."""
    db = Path(path)
    folder = db.parent
    if db.is_dir():
        raise BadInput("is a folder, not a DB file", file=path)
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise BadInput(f"cannot create the DB: its folder {str(folder)!r} {what}", file=path)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise BadInput(
            f"cannot write the DB: its folder {str(folder)!r} is read-only (the DB's lock and "
            f"journal files are written beside it); use another --db",
            file=path,
        )
    if db.exists() and not os.access(db, os.R_OK | os.W_OK):
        raise BadInput(
            "cannot write the DB: the file is read-only; make it writable, or use another --db",
            file=path,
        )


def not_writable(error: Exception, path: str) -> Exception:
    """An error met opening ``path`` for writing, as ``BadInput`` naming the DB when it says
    the file or its folder cannot be written (the checks above raced a change); else itself."""
    if isinstance(
        error, FileNotFoundError | PermissionError | IsADirectoryError | NotADirectoryError
    ):
        reason = os.strerror(error.errno) if error.errno else str(error)
        return BadInput(f"cannot write the DB ({reason}); use another --db", file=path)
    if isinstance(error, sqlite3.OperationalError) and str(error).startswith(_NOT_WRITABLE):
        return BadInput(f"cannot write the DB (SQLite: {error}); use another --db", file=path)
    return error
