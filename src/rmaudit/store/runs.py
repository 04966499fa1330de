"""Run bookkeeping: the run's row and RMs, its failures, and its results (metric values,
curves, per-prompt values), which a rerun of the same recipe replaces."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import astuple
from typing import TYPE_CHECKING, Any

from .json_columns import dumps
from .metric_results import MetricDigests, MetricResults
from .records import RUN_COLUMNS, RunFailure, RunRewardModel, RunRow, RunSourceRow, run_columns
from .tables import chunks, marks, utc_now

if TYPE_CHECKING:
    from . import Store


class Runs:
    def __init__(self, store: Store) -> None:
        self.store = store
        #: which inputs each stored metric result was computed from
        self.metric_digests = MetricDigests(store)

    def start(self, run: RunRow, reward_models: Sequence[RunRewardModel]) -> None:
        """Record a run as running (a rerun of the same recipe reuses its row, keeping when
        it was first created, so the runs list keeps its order) with its RMs in recipe order."""
        updates = ", ".join(f"{c} = excluded.{c}" for c in RUN_COLUMNS[1:] if c != "created_at")
        with self.store.transaction():
            self.store.execute(
                f"insert into runs ({', '.join(RUN_COLUMNS)}) values "
                f"({', '.join('?' * len(RUN_COLUMNS))}) on conflict (id) do update set {updates}",
                run_columns(run),
            )
            self.store.execute("delete from run_reward_models where run_id = ?", [run.id])
            self.store.executemany(
                "insert into run_reward_models (run_id, position, label, rm_key) "
                "values (?, ?, ?, ?)",
                [(run.id, i, rm.label, rm.rm_key) for i, rm in enumerate(reward_models)],
            )

    def set_sources(self, run_id: str, rows: Iterable[RunSourceRow]) -> None:
        """Where the run's parts came from, in order (rmaudit.run.provenance)."""
        with self.store.transaction():
            self.store.execute("delete from run_sources where run_id = ?", [run_id])
            self.store.executemany(
                "insert into run_sources (run_id, position, part, entry, simulated, role, kind, "
                "location, digest, note) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(run_id, i, *astuple(row)) for i, row in enumerate(rows)],
            )

    def stop(self, run_id: str, status: str, error: str, finished_at: str) -> None:
        """Mark a run that did not finish ("failed" or "interrupted")."""
        with self.store.transaction():
            self.store.execute(
                "update runs set status = ?, error = ?, finished_at = ? where id = ?",
                [status, error, finished_at, run_id],
            )

    def set_report(self, run_id: str, label: str, report: dict[str, Any]) -> None:
        """What an RM reported about its scoring in the run."""
        with self.store.transaction():
            self.store.execute(
                "update run_reward_models set report = ? where run_id = ? and label = ?",
                [dumps(report), run_id, label],
            )

    def add_failures(self, run_id: str, stage: str, failures: Iterable[RunFailure]) -> None:
        """``failures`` of the run's ``stage``, recorded as made now."""
        at = utc_now()
        with self.store.transaction():
            self.store.executemany(
                "insert into failures (run_id, stage, item_id, error, created_at) "
                "values (?, ?, ?, ?, ?)",
                ((run_id, stage, item, error, at) for item, error in failures),
            )

    def retried(
        self,
        run_id: str,
        stage: str,
        item_ids: Sequence[str],
        failures: Iterable[RunFailure],
    ) -> None:
        """``item_ids`` were attempted again: their earlier failures in this run's ``stage``
        give way to this attempt's ``failures``, which count the attempts so far (so a rerun
        never stores a failure twice, and an item that keeps failing says how often)."""
        ids, at = list(dict.fromkeys(item_ids)), utc_now()
        with self.store.transaction():
            earlier: dict[str, int] = {}
            for chunk in chunks(ids):
                earlier.update(
                    self.store.execute(
                        f"select item_id, max(attempts) from failures where run_id = ? and "
                        f"stage = ? and item_id in ({marks(chunk)}) group by item_id",
                        [run_id, stage, *chunk],
                    ).fetchall()
                )
            self.store.executemany(  # only items that failed before have rows to delete
                "delete from failures where run_id = ? and stage = ? and item_id = ?",
                ((run_id, stage, i) for i in earlier),
            )
            self.store.executemany(
                "insert into failures (run_id, stage, item_id, error, created_at, attempts) "
                "values (?, ?, ?, ?, ?, ?)",
                (
                    (run_id, stage, item, error, at, earlier.get(item, 0) + 1)
                    for item, error in failures
                ),
            )

    def replace_failures(self, run_id: str, stage: str, failures: Iterable[RunFailure]) -> None:
        """This run's failures of ``stage`` become ``failures``."""
        with self.store.transaction():
            self.store.execute(
                "delete from failures where run_id = ? and stage = ?", [run_id, stage]
            )
            self.add_failures(run_id, stage, failures)

    def finish(
        self,
        run_id: str,
        results: Sequence[MetricResults],
        timings: dict[str, float],
        finished_at: str,
    ) -> None:
        """Replace the run's results with these (``store.metric_results``: rows reused stay as
        they are) and mark it done, in one transaction."""
        with self.store.transaction():
            self.metric_digests.replace(run_id, results)
            self.store.execute(
                "update runs set status = 'done', finished_at = ?, timings = ? where id = ?",
                [finished_at, dumps(timings), run_id],
            )
