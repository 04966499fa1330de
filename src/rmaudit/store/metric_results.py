"""A run's metric results as one RM's one metric at a time, each with the digest of what it
was computed from (``metric_digests``, ``schema.M011``): a rerun whose digest matches stored
results reuses their rows, from this run or from another run of the file, instead of
recomputing them (docs/architecture.md, "Content-addressed, resumable store")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple, dataclass, field
from typing import TYPE_CHECKING

from .json_columns import dumps
from .records import CurvePointRow, MetricValue, PerPromptRow

if TYPE_CHECKING:
    from . import Store

#: each result table's columns, in order; every one starts with (run_id, rm_key, metric)
RESULT_COLUMNS: dict[str, tuple[str, ...]] = {
    "metric_results": (
        "run_id",
        "rm_key",
        "metric",
        "key",
        "label",
        "params",
        "value",
        "stderr",
        "ci_low",
        "ci_high",
        "higher_is_better",
    ),
    "per_prompt_results": ("run_id", "rm_key", "metric", "key", "prompt_id", "value"),
    "curves": (
        "run_id",
        "rm_key",
        "metric",
        "key",
        "label",
        "point",
        "x_label",
        "x",
        "value",
        "stderr",
        "ci_low",
        "ci_high",
    ),
}


@dataclass(frozen=True)
class StoredResults:
    """Where a metric's results with a given digest are stored: the run, and when they were
    computed."""

    run_id: str
    computed_at: str


@dataclass(frozen=True)
class ResultRows:
    """One metric's new rows of each result table, for one RM, written under the run's id."""

    values: tuple[MetricValue, ...] = ()
    per_prompt: tuple[PerPromptRow, ...] = ()
    curve: tuple[CurvePointRow, ...] = ()

    def tables(self, run_id: str) -> dict[str, list[tuple]]:
        """The rows as each table's columns (:data:`RESULT_COLUMNS`) hold them."""
        values = [_value_row(run_id, v) for v in self.values]
        curve = [astuple(point) for point in self.curve]
        return {
            "metric_results": values,
            "per_prompt_results": list(self.per_prompt),
            "curves": curve,
        }


def _value_row(run_id: str, value: MetricValue) -> tuple:
    """``value`` as its ``metric_results`` row, column by column (:data:`RESULT_COLUMNS`)."""
    stored = {
        "run_id": run_id,
        "params": dumps(value.params),
        "higher_is_better": int(bool(value.higher_is_better)),
    }
    columns = RESULT_COLUMNS["metric_results"]
    return tuple(stored[name] if name in stored else getattr(value, name) for name in columns)


@dataclass(frozen=True)
class MetricResults:
    """One metric's results for one RM in a run (``rm_key`` ``""``: run-level), in the order a
    run stores them.  ``rows``: each result table's new rows; empty with
    ``reused`` set, whose stored rows are these results.  ``digest``: what they were computed
    from (None: inputs that cannot be digested, never reused)."""

    rm_key: str
    metric: str
    digest: str | None
    computed_at: str
    rows: ResultRows = field(default_factory=ResultRows)
    reused: StoredResults | None = None


class MetricDigests:
    def __init__(self, store: Store) -> None:
        self.store = store

    def stored(self, run_id: str, rm_key: str, metric: str, digest: str) -> StoredResults | None:
        """Results of this RM and metric computed from ``digest``: this run's if it has them,
        else the latest of another run's."""
        row = self.store.execute(
            "select run_id, computed_at from metric_digests where rm_key = ? and metric = ? "
            "and digest = ? order by run_id = ? desc, computed_at desc limit 1",
            [rm_key, metric, digest, run_id],
        ).fetchone()
        return None if row is None else StoredResults(*row)

    def replace(self, run_id: str, results: Sequence[MetricResults]) -> None:
        """The run's results become ``results``, in their order (inside the caller's
        transaction).  Nothing is written when every one is this run's stored rows."""
        stored = self.store.execute(
            "select rm_key, metric from metric_digests where run_id = ?", [run_id]
        ).fetchall()
        if {(r.rm_key, r.metric) for r in results} == set(stored) and all(
            r.reused is not None and r.reused.run_id == run_id for r in results
        ):
            return
        # read before the run's own rows are deleted: results reused from this run
        rows = [
            r.rows.tables(run_id) if r.reused is None else self._rows(r, run_id) for r in results
        ]
        for table in (*RESULT_COLUMNS, "metric_digests"):
            self.store.execute(f"delete from {table} where run_id = ?", [run_id])
        for table, columns in RESULT_COLUMNS.items():
            self.store.executemany(
                f"insert into {table} ({', '.join(columns)}) "
                f"values ({', '.join('?' * len(columns))})",
                (row for by_table in rows for row in by_table.get(table, ())),
            )
        self.store.executemany(
            "insert into metric_digests (run_id, rm_key, metric, digest, computed_at) "
            "values (?, ?, ?, ?, ?)",
            [(run_id, r.rm_key, r.metric, r.digest, r.computed_at) for r in results],
        )

    def _rows(self, results: MetricResults, run_id: str) -> dict[str, list[tuple]]:
        """The stored rows of reused results, as rows of ``run_id``."""
        assert results.reused is not None
        found = {}
        for table, columns in RESULT_COLUMNS.items():
            stored = self.store.execute(
                f"select {', '.join(columns[1:])} from {table} "
                f"where run_id = ? and rm_key = ? and metric = ? order by rowid",
                [results.reused.run_id, results.rm_key, results.metric],
            ).fetchall()
            found[table] = [(run_id, *row) for row in stored]
        return found
