"""CPU time by stage inside one ``rmaudit run``, for ``main_job_stages.py`` (issue 50).

A ``Meter`` charges each thread's CPU time (``time.thread_time``) to the innermost stage it is
in, so a stage's figure is its own work, whichever thread did it: the driver's (inputs made,
rows written) and the worker threads' (the component's calls).  Stages are entered by wrapping
functions found by dotted name, in their module and wherever another module imported them by
name; a name this version lacks is skipped.  The store's statements are also counted, with the
rows they read or wrote, by stage and by table.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

_TABLE = re.compile(r"\b(?:from|into|update|join)\s+\"?(\w+)", re.IGNORECASE)
_WRITES = ("insert", "update", "delete", "replace", "commit", "begin", "savepoint", "release")


class Meter:
    """Per-thread stacks of stages; each moment of a thread's CPU goes to its stack's top."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = defaultdict(float)
        self.statements: dict[tuple[str, str, str], int] = defaultdict(int)
        self.rows: dict[tuple[str, str, str], int] = defaultdict(int)
        self._local = threading.local()
        self._lock = threading.Lock()

    def _state(self) -> Any:
        local = self._local
        if not hasattr(local, "stack"):
            main = threading.current_thread() is threading.main_thread()
            local.stack = ["other" if main else "other (worker threads)"]
            local.mark = time.thread_time()
        return local

    def top(self) -> str:
        return self._state().stack[-1]

    def _charge(self, local: Any) -> None:
        now = time.thread_time()
        with self._lock:
            self.cpu[local.stack[-1]] += now - local.mark
        local.mark = now

    def enter(self, stage: str) -> None:
        local = self._state()
        self._charge(local)
        local.stack.append(stage)

    def leave(self) -> None:
        local = self._state()
        self._charge(local)
        local.stack.pop()

    def settle(self) -> None:
        """Charge this thread's time up to now (call before reading ``cpu``)."""
        self._charge(self._state())

    def wrap(self, stage: str | Callable[..., str], function: Callable) -> Callable:
        @functools.wraps(function)
        def metered(*args: Any, **kwargs: Any) -> Any:
            self.enter(stage(*args, **kwargs) if callable(stage) else stage)
            try:
                return function(*args, **kwargs)
            finally:
                self.leave()

        return metered

    def count(self, kind: str, sql: str, rows: int = 1, statements: int = 1) -> None:
        found = _TABLE.search(sql)
        key = (self.top(), kind, found.group(1) if found else sql.split()[0].lower())
        with self._lock:
            self.statements[key] += statements
            self.rows[key] += rows


def resolve(dotted: str) -> tuple[Any, str, Any] | None:
    """(owner, attribute, value) of ``module.path:Attr.attr``, or None where it is absent."""
    module_name, _, path = dotted.partition(":")
    try:
        owner: Any = importlib.import_module(module_name)
    except ImportError:
        return None
    *parents, name = path.split(".")
    for parent in parents:
        owner = getattr(owner, parent, None)
    if owner is None or not hasattr(owner, name):
        return None
    return owner, name, getattr(owner, name)


def install(meter: Meter, targets: dict[str, str | Callable[..., str]]) -> list[str]:
    """Wrap every target found; the dotted names installed."""
    installed = []
    for dotted, stage in targets.items():
        found = resolve(dotted)
        if found is None:
            continue
        owner, name, original = found
        metered = meter.wrap(stage, original)
        setattr(owner, name, metered)
        if ":" in dotted and "." not in dotted.partition(":")[2]:  # a function: its importers
            for module in list(sys.modules.values()):
                for attribute, value in list(vars(module).items()):
                    if value is original:
                        setattr(module, attribute, metered)
        installed.append(dotted)
    return installed


def count_statements(meter: Meter) -> None:
    """Count the store's statements and rows; time them as "writes" or "reads"."""
    from rmaudit.store import Store
    from rmaudit.store.damage import CheckedCursor

    execute, executemany = Store.execute, Store.executemany

    def metered_execute(self: Any, sql: str, params: Any = ()) -> Any:
        kind = "writes" if sql.lstrip().lower().startswith(_WRITES) else "reads"
        meter.count(kind, sql, rows=0)
        meter.enter(kind)
        try:
            cursor = execute(self, sql, params)
        finally:
            meter.leave()
        cursor.bench_sql = sql
        return cursor

    def metered_executemany(self: Any, sql: str, rows: Any) -> None:
        listed = list(rows)
        meter.count("writes", sql, rows=len(listed))
        meter.enter("writes")
        try:
            executemany(self, sql, listed)
        finally:
            meter.leave()

    Store.execute, Store.executemany = metered_execute, metered_executemany
    for name in ("fetchall", "fetchmany", "fetchone"):
        setattr(CheckedCursor, name, _metered_fetch(meter, getattr(CheckedCursor, name)))
    step = CheckedCursor.__next__

    def counted_next(self: Any) -> Any:  # rows iterated: counted, not timed (one per row)
        row = step(self)
        meter.count("reads", getattr(self, "bench_sql", "?"), rows=1, statements=0)
        return row

    CheckedCursor.__next__ = counted_next


def _metered_fetch(meter: Meter, fetch: Callable) -> Callable:
    def metered(self: Any, *args: Any) -> Any:
        meter.enter("reads")
        try:
            out = fetch(self, *args)
        finally:
            meter.leave()
        rows = len(out) if isinstance(out, list) else int(out is not None)
        meter.count("reads", getattr(self, "bench_sql", "?"), rows=rows, statements=0)
        return out

    return metered
