"""What the CLI, the TUI, reports and exports read back: runs, their results, a benchmark's
prompts, responses, labels and scores, and a run's preference pairs, for display.

Every query goes through an index: a run's results by ``run_id``, a prompt's responses by
``(policy_key, prompt_id)``, a label or score by its primary key.  Rows come back as named,
typed records (:mod:`.records`).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .damage import damaged_value
from .item_records import LabelledResponse, ScoredLabel, SelectionPrompt
from .json_columns import json_list, json_object
from .metric_results import RESULT_COLUMNS
from .pair_reads import PairReads
from .records import (
    BENCHMARK_COLUMNS,
    RUN_COLUMNS,
    BenchmarkRow,
    CurvePointRow,
    MetricValue,
    PerPromptRow,
    RunFailure,
    RunListing,
    RunRewardModel,
    RunRow,
    RunSourceRow,
    benchmark_row,
    run_row,
)
from .tables import chunks, marks

#: the numeric columns of a stored result (a metric's value, a curve's point)
RESULT_NUMBERS = ("value", "stderr", "ci_low", "ci_high")
#: the lowest, highest and mean oracle score of a benchmark (Nones: none labelled)
OracleRange = tuple[float | None, float | None, float | None]

if TYPE_CHECKING:
    from . import Store


def dict_rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


class Reads(PairReads):
    def __init__(self, store: Store) -> None:
        self.store = store

    # -- runs -----------------------------------------------------------------------------
    def run(self, run_id: str) -> RunRow:
        """A stored run (its id resolved first: ``KeyError`` for one not stored)."""
        rows = dict_rows(
            self.store.execute(f"select {', '.join(RUN_COLUMNS)} from runs where id = ?", [run_id])
        )
        if not rows:
            raise KeyError(f"run {run_id} is not stored")
        return run_row(rows[0], self.store.path)

    def run_as_stored(self, run_id: str) -> dict[str, Any] | None:
        """A run's columns as stored, unconverted (None: not stored): what the check for a
        damaged run row reads (``store.damage.check_run_row``)."""
        rows = dict_rows(
            self.store.execute(f"select {', '.join(RUN_COLUMNS)} from runs where id = ?", [run_id])
        )
        return rows[0] if rows else None

    def runs(self) -> list[RunListing]:
        """Every run, newest first."""
        rows = self.store.execute(
            """select r.id, r.title, r.status, r.simulated, r.created_at, r.recipe_path,
                      (select count(*) from selections s where s.selection_key = b.selection_key),
                      b.per_prompt,
                      (select count(*) from run_reward_models m where m.run_id = r.id), r.error,
                      (select count(*) from pair_sets p where p.pair_set_key = r.pair_set_key),
                      (select count(*) from solution_sets o
                       where o.solution_set_key = r.solution_set_key)
               from runs r left join benchmarks b on b.id = r.benchmark_id
               order by r.created_at desc, r.rowid desc"""
        ).fetchall()
        return [RunListing._make((*row[:3], bool(row[3]), *row[4:])) for row in rows]

    def run_sources(self, run_id: str) -> list[RunSourceRow]:
        """The run's provenance rows, in order; none for a run stored before they were."""
        columns = ", ".join(RunSourceRow.__dataclass_fields__)
        rows = dict_rows(
            self.store.execute(
                f"select {columns} from run_sources where run_id = ? order by position", [run_id]
            )
        )
        return [RunSourceRow(**{**row, "simulated": bool(row["simulated"])}) for row in rows]

    def failures(self, run_id: str, stage: str) -> list[RunFailure]:
        """The run's failures of ``stage``, in the order recorded."""
        rows = self.store.execute(
            "select item_id, error from failures where run_id = ? and stage = ? order by id",
            [run_id, stage],
        ).fetchall()
        return [RunFailure._make(row) for row in rows]

    def reward_models(self, run_id: str) -> list[RunRewardModel]:
        """The run's RMs in recipe order."""
        rows = self.store.execute(
            "select label, rm_key from run_reward_models where run_id = ? order by position",
            [run_id],
        ).fetchall()
        return [RunRewardModel._make(row) for row in rows]

    def benchmark_ids(self) -> list[str]:
        """Every stored benchmark, the one a run used (or that was stored) last first."""
        return [
            row[0]
            for row in self.store.execute(
                "select b.id from benchmarks b left join runs r on r.benchmark_id = b.id "
                "group by b.id order by max(coalesce(r.created_at, b.created_at)) desc"
            )
        ]

    # -- results ----------------------------------------------------------------------------
    def metric_rows(self, run_id: str) -> list[MetricValue]:
        """The run's ``metric_results`` rows, in stored order (read once while the file is
        unchanged: every view of a run starts from them)."""
        return list(
            self.store.remembered(("metric rows", run_id), lambda: self._metric_rows(run_id))
        )

    def _metric_rows(self, run_id: str) -> list[MetricValue]:
        columns = RESULT_COLUMNS["metric_results"][1:]
        rows = dict_rows(
            self.store.execute(
                f"select {', '.join(columns)} from metric_results where run_id = ? order by rowid",
                [run_id],
            )
        )
        path = self.store.path
        return [
            MetricValue(
                **{
                    **row,
                    **{n: math.nan if row[n] is None else row[n] for n in RESULT_NUMBERS},
                    "params": json_object(row["params"], path, "metric_results.params"),
                    "higher_is_better": bool(row["higher_is_better"]),
                }
            )
            for row in self._numbers("metric_results", rows, RESULT_NUMBERS)
        ]

    def curve_rows(self, run_id: str) -> list[CurvePointRow]:
        """The run's ``curves`` rows (one per point), in stored order."""
        columns = ", ".join(CurvePointRow.__dataclass_fields__)
        rows = dict_rows(
            self.store.execute(
                f"select {columns} from curves where run_id = ? order by rowid", [run_id]
            )
        )
        return [
            CurvePointRow(**row) for row in self._numbers("curves", rows, ("x", *RESULT_NUMBERS))
        ]

    def _numbers(
        self, table: str, rows: list[dict[str, Any]], columns: Sequence[str]
    ) -> list[dict[str, Any]]:
        """``rows``, once their numeric columns are checked to hold numbers (or NULL): SQLite
        stores whatever a damaged or hand-edited file holds."""
        for row in rows:
            for column in columns:
                value = row[column]
                if value is not None and not isinstance(value, int | float):
                    raise damaged_value(self.store.path, f"{table}.{column}", value)
        return rows

    def per_prompt_keys(self, run_id: str) -> set[str]:
        return {
            row[0]
            for row in self.store.execute(
                "select distinct key from per_prompt_results where run_id = ?", [run_id]
            )
        }

    def per_prompt_values(self, run_id: str, rm_key: str) -> list[PerPromptRow]:
        """One RM's per-prompt results in the run."""
        columns = ", ".join(PerPromptRow._fields)
        rows = self.store.execute(
            f"select {columns} from per_prompt_results where run_id = ? and rm_key = ?",
            [run_id, rm_key],
        ).fetchall()
        self._per_prompt_numbers(r[5] for r in rows)
        return [PerPromptRow._make((*r[:5], math.nan if r[5] is None else r[5])) for r in rows]

    def _per_prompt_numbers(self, values: Iterable[Any]) -> None:
        """Per-prompt values are finite numbers, or NULL (a NaN stored by a version that kept
        the prompts a metric skipped): text or an infinity is a damaged file."""
        for value in values:
            if value is not None and not (isinstance(value, int | float) and math.isfinite(value)):
                raise damaged_value(self.store.path, "per_prompt_results.value", value)

    # -- a benchmark's contents -------------------------------------------------------------
    def selection_prompts(self, selection_key: str) -> list[SelectionPrompt]:
        """A selection's prompts, in order."""
        rows = self.store.execute(
            """select s.position, p.id, p.text, p.meta from selections s
               join prompts p on p.id = s.prompt_id
               where s.selection_key = ? order by s.position""",
            [selection_key],
        ).fetchall()
        path = self.store.path
        return [
            SelectionPrompt(position, pid, text, json_object(meta, path, "prompts.meta"))
            for position, pid, text, meta in rows
        ]

    def labelled_responses(self, benchmark: BenchmarkRow, prompt_id: str) -> list[LabelledResponse]:
        """One prompt's benchmark responses and their labels, in order: on a budgeted benchmark
        every response (the label columns None where the design left it unlabelled), else the
        labelled ones (inclusion probability None)."""
        budgeted = benchmark.design is not None
        # on a budgeted benchmark only the drawn responses' labels are its own
        drawn = "and i.drawn = 1" if budgeted else ""
        rows = self.store.execute(
            f"""select r.id, r.sample_index, r.text, r.meta, l.score, l.samples, l.cost_usd,
                      l.prompt_tokens, l.completion_tokens, i.probability
               from responses r
               left join inclusion i on i.benchmark_id = ? and i.response_id = r.id
               {"left " if budgeted else ""}join oracle_labels l
                 on l.oracle_key = ? and l.response_id = r.id {drawn}
               where r.policy_key = ? and r.prompt_id = ? and r.sample_index < ?
               order by r.sample_index""",
            [
                benchmark.id,
                benchmark.oracle_key,
                benchmark.policy_key,
                prompt_id,
                benchmark.per_prompt,
            ],
        ).fetchall()
        path = self.store.path
        for row in rows:  # a label rmaudit stored holds a number; unlabelled rows join none
            if not isinstance(row[4], int | float) and not (budgeted and row[4] is None):
                raise damaged_value(path, "oracle_labels.score", row[4])
        return [
            LabelledResponse._make(
                (
                    *row[:3],
                    json_object(row[3], path, "responses.meta"),
                    row[4],
                    json_list(row[5], path, "oracle_labels.samples"),
                    *row[6:],
                )
            )
            for row in rows
        ]

    def full_benchmarks(
        self, policy_key: str, oracle_key: str, per_prompt: int
    ) -> list[BenchmarkRow]:
        """The stored benchmarks of this policy, oracle and N whose every response is labelled
        (no label design), most prompts first: the pilots a label plan can read."""
        columns = ", ".join(f"b.{c}" for c in BENCHMARK_COLUMNS)
        cursor = self.store.execute(
            f"""select {columns} from benchmarks b where b.policy_key = ? and b.oracle_key = ?
               and b.per_prompt = ? and b.design is null
               order by (select count(*) from selections s where s.selection_key =
                         b.selection_key) desc, b.id""",
            [policy_key, oracle_key, per_prompt],
        )
        return [
            benchmark_row(dict(zip(BENCHMARK_COLUMNS, row, strict=True)), self.store.path)
            for row in cursor.fetchall()
        ]

    def label_coverage(self, benchmark: BenchmarkRow) -> tuple[int, int]:
        """(labelled, all) responses of a budgeted benchmark: those its design drew that have
        a label, and all of them (its inclusion table)."""
        return self.store.execute(
            """select count(l.response_id), count(*) from inclusion i
               left join oracle_labels l on l.oracle_key = ? and l.response_id = i.response_id
                 and i.drawn = 1
               where i.benchmark_id = ?""",
            [benchmark.oracle_key, benchmark.id],
        ).fetchone()

    def oracle_range(self, benchmark: BenchmarkRow) -> OracleRange:
        """(lowest, highest, mean) oracle score of the benchmark's responses (Nones when none
        is labelled), read once while the file is unchanged (the summary and its leaderboard
        both print it).  Under a label design the mean is the responses' mean as the design
        estimates it: the labels its design drew, each weighted by 1/π (Hájek's ratio form of
        Horvitz & Thompson 1952; Särndal et al., "Model Assisted Survey Sampling", 1992,
        Sec. 5.7), not the plain mean of whichever responses have a label."""
        return self.store.remembered(
            ("oracle range", benchmark.id), lambda: self._oracle_range(benchmark)
        )

    def _oracle_range(self, benchmark: BenchmarkRow) -> OracleRange:
        if benchmark.design is not None:
            return self.store.execute(
                """select min(j.score), max(j.score),
                          sum(j.score / i.probability) / sum(1.0 / i.probability)
                   from inclusion i
                   join oracle_labels j on j.oracle_key = ? and j.response_id = i.response_id
                   where i.benchmark_id = ? and i.drawn = 1""",
                [benchmark.oracle_key, benchmark.id],
            ).fetchone()
        return self.store.execute(
            """select min(j.score), max(j.score), avg(j.score) from responses r
               join oracle_labels j on j.oracle_key = ? and j.response_id = r.id
               where r.policy_key = ? and r.sample_index < ?
                 and r.prompt_id in (select prompt_id from selections where selection_key = ?)""",
            [
                benchmark.oracle_key,
                benchmark.policy_key,
                benchmark.per_prompt,
                benchmark.selection_key,
            ],
        ).fetchone()

    def scores_with_labels(self, benchmark: BenchmarkRow, rm_key: str) -> list[ScoredLabel]:
        """Every benchmark response the RM scored, with its label: on a budgeted benchmark every
        scored response, labelled only where its design drew it (a label stored for another
        benchmark is not this one's), else the labelled ones.  ``prompt_id in (subquery)``
        makes SQLite walk the responses index prompt by prompt; a join on selections instead
        rescans the selection for every response."""
        if benchmark.design is not None:
            rows = self.store.execute(
                """select r.prompt_id, y.score, j.score, i.probability from inclusion i
                   join responses r on r.id = i.response_id
                   join rm_scores y on y.rm_key = ? and y.response_id = i.response_id
                   left join oracle_labels j on j.oracle_key = ?
                     and j.response_id = i.response_id and i.drawn = 1
                   where i.benchmark_id = ?""",
                [rm_key, benchmark.oracle_key, benchmark.id],
            ).fetchall()
            return [ScoredLabel._make(row) for row in rows]
        rows = self.store.execute(
            """select r.prompt_id, y.score, j.score, null from responses r
               join rm_scores y on y.rm_key = ? and y.response_id = r.id
               join oracle_labels j on j.oracle_key = ? and j.response_id = r.id
               where r.policy_key = ? and r.sample_index < ?
                 and r.prompt_id in (select prompt_id from selections where selection_key = ?)""",
            [
                rm_key,
                benchmark.oracle_key,
                benchmark.policy_key,
                benchmark.per_prompt,
                benchmark.selection_key,
            ],
        ).fetchall()
        return [ScoredLabel._make(row) for row in rows]

    def scores_of(self, rm_key: str, response_ids: Sequence[str]) -> dict[str, float]:
        """The RM's stored scores of those of ``response_ids`` it scored."""
        found: dict[str, float] = {}
        for chunk in chunks(list(response_ids)):
            found.update(
                self.store.execute(
                    f"select response_id, score from rm_scores where rm_key = ? "
                    f"and response_id in ({marks(chunk)})",
                    [rm_key, *chunk],
                ).fetchall()
            )
        return found

    # -- paired comparisons (rmaudit.results.comparison) ---------------------------------------
    def stored_per_prompt(
        self, run_id: str, rm_key: str, metric: str, key: str
    ) -> dict[str, float]:
        """prompt id → the per-prompt value of one stored number of ``rm_key`` (a prompt the
        metric skipped, stored as NULL by older versions, left out)."""
        values = dict(
            self.store.execute(
                "select prompt_id, value from per_prompt_results "
                "where run_id = ? and rm_key = ? and metric = ? and key = ?",
                [run_id, rm_key, metric, key],
            ).fetchall()
        )
        self._per_prompt_numbers(values.values())
        return {prompt: value for prompt, value in values.items() if value is not None}

    def stored_value(self, run_id: str, rm_key: str, metric: str, key: str) -> float | None:
        """One stored number's value (None: not stored, or stored without one)."""
        row = self.store.execute(
            "select value from metric_results "
            "where run_id = ? and rm_key = ? and metric = ? and key = ?",
            [run_id, rm_key, metric, key],
        ).fetchone()
        return None if row is None else row[0]
