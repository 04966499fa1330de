"""A database's content, canonically: what the reference test and the main-job benchmark
compare with the content the code wrote before a speed-up (issue 50).

Every table of the file, every row sorted by its primary key (every column where it has
none), every column, every value exactly (a float by its ``float.hex``, so two floats that
differ in the last bit differ here), each table summed up by the SHA-256 of its rows.  Left
out are only the columns that hold when or where a run happened rather than what it computed
(``VOLATILE``): timestamps, stage timings, the Python version, and the metric digests, which
hash rmaudit's own source files on purpose (a changed file recomputes the metrics once).

A table's floats are also kept as values (``floats``), so that where the environment is not
the recorded one (another numpy, another CPU) the test can still compare every other column
exactly and the numbers to a few parts in 10¹²; the recorded environment gets the exact check.
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import sqlite3
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

#: table → columns that record when or where, not what: left out of the comparison
VOLATILE = {
    "_sqlite_migrations": {"applied_at"},
    "runs": {"created_at", "finished_at", "timings", "rmaudit_version"},
    "benchmarks": {"created_at"},
    "failures": {"created_at"},
    "metric_digests": {"digest", "computed_at"},
}


@dataclass
class TableDump:
    """One table's rows: their count, the digest of every kept value, the digest of every
    value but the floats (a float there reads as NULL), and the floats in row order."""

    rows: int
    sha256: str
    sha256_without_floats: str
    floats: list[float] = field(default_factory=list)

    def as_json(self, with_floats: bool) -> dict:
        out: dict = {
            "rows": self.rows,
            "sha256": self.sha256,
            "sha256_without_floats": self.sha256_without_floats,
        }
        if with_floats:  # one line: repr is exact and reads back as the same float
            out["floats"] = " ".join(repr(v) for v in self.floats)
        return out


def _encoded(value: object) -> object:
    if isinstance(value, float):
        return {"float": value.hex()}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    return value


def _table(connection: sqlite3.Connection, table: str) -> TableDump:
    info = connection.execute(f'pragma table_info("{table}")').fetchall()
    columns = [row[1] for row in info if row[1] not in VOLATILE.get(table, set())]
    key = [row[1] for row in sorted(info, key=lambda row: row[5]) if row[5]] or columns
    listed = ", ".join(f'"{c}"' for c in columns)
    order = ", ".join(f'"{c}"' for c in key)
    exact, without = hashlib.sha256(), hashlib.sha256()
    header = json.dumps(columns).encode()
    exact.update(header)
    without.update(header)
    floats: list[float] = []
    count = 0
    for row in connection.execute(f'select {listed} from "{table}" order by {order}'):
        count += 1
        exact.update(json.dumps([_encoded(v) for v in row]).encode() + b"\n")
        without.update(
            json.dumps([None if isinstance(v, float) else _encoded(v) for v in row]).encode()
            + b"\n"
        )
        floats += [v for v in row if isinstance(v, float)]
    return TableDump(count, exact.hexdigest(), without.hexdigest(), floats)


def dump(db: Path) -> dict[str, TableDump]:
    """Every table of ``db`` by name (read-only; the file is left as it is)."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [
            name
            for (name,) in connection.execute(
                "select name from sqlite_master where type = 'table' "
                "and name not like 'sqlite_%' order by name"
            )
        ]
        return {table: _table(connection, table) for table in tables}
    finally:
        connection.close()


def environment() -> dict[str, str]:
    """What the exact figures depend on besides rmaudit's code."""

    def installed(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "absent"

    return {
        "machine": platform.machine(),
        "python": platform.python_version(),
        "numpy": installed("numpy"),
        "scipy": installed("scipy"),
        "cpu": cpu_kernels(),
    }


def cpu_kernels() -> str:
    """The kernels numpy and its BLAS chose for this CPU: the same versions on another CPU
    (AVX-512 or not, another OpenBLAS core) round sums and products differently."""
    from numpy._core._multiarray_umath import __cpu_features__
    from threadpoolctl import threadpool_info

    pools = threadpool_info()
    blas = sorted({f"{pool['internal_api']} {pool.get('architecture')}" for pool in pools})
    simd = [feature for feature, present in __cpu_features__.items() if present]
    return "; ".join([*blas, f"numpy up to {simd[-1]}"])


def same_environment(recorded: dict[str, str]) -> bool:
    """True where numbers can be expected exact: the machine's architecture, the numerical
    libraries and the kernels they chose for the CPU are the recorded ones (the Python patch
    version does not matter)."""
    now = environment()
    return all(now[name] == recorded.get(name) for name in ("machine", "numpy", "scipy", "cpu"))


def differences(recorded: dict[str, dict], found: dict[str, TableDump], exact: bool) -> list[str]:
    """One line per table whose content is not the recorded one; ``exact`` False compares
    the floats to a relative 1e-12 instead of bit for bit."""
    lines = []
    for table in sorted(set(recorded) | set(found)):
        if table not in found or table not in recorded:
            where = "missing" if table not in found else "not in the reference"
            lines.append(f"{table}: {where}")
            continue
        want, got = recorded[table], found[table]
        if want["rows"] != got.rows:
            lines.append(f"{table}: {got.rows} rows, the reference has {want['rows']}")
        elif exact and want["sha256"] != got.sha256:
            lines.append(f"{table}: a value differs (sha256 {got.sha256[:12]}…)")
        elif want["sha256_without_floats"] != got.sha256_without_floats:
            lines.append(f"{table}: a value that is not a float differs")
        elif not exact and "floats" in want and not _close(_floats(want["floats"]), got.floats):
            lines.append(f"{table}: a float differs by more than 1e-12 relative")
    return lines


def _floats(line: str) -> list[float]:
    return [float(v) for v in line.split()]


def _close(want: list[float], got: list[float]) -> bool:
    return len(want) == len(got) and all(_near(a, b) for a, b in zip(want, got, strict=True))


def _near(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), 1.0)
