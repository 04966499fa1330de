"""What the CLI, the TUI, reports and exports read back: runs, their results, a benchmark's
prompts, responses, labels and scores, and a run's preference pairs, for display.

Every query goes through an index: a run's results by ``run_id``, a prompt's responses by
``(policy_key, prompt_id)``, a label or score by its primary key.  Rows come back as tuples,
or as dicts (column → value) where a caller reads whole rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .damage import damaged_value
from .items import chunks, marks

#: the numeric columns of a stored result (a metric's value, a curve's point)
RESULT_NUMBERS = ("value", "stderr", "ci_low", "ci_high")

if TYPE_CHECKING:
    from . import Store


def dict_rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


class Reads:
    def __init__(self, store: Store) -> None:
        self.store = store

    # -- runs -----------------------------------------------------------------------------
    def run(self, run_id: str) -> dict[str, Any] | None:
        rows = dict_rows(self.store.execute("select * from runs where id = ?", [run_id]))
        return rows[0] if rows else None

    def runs(self) -> list[tuple]:
        """(id, title, status, simulated, created_at, recipe_path, prompts, per_prompt, RMs,
        error, pairs) of every run, newest first; prompts and per_prompt are None for a
        pairs-only run (and for a run still in its prompts stage), error for a run that did
        not fail; pairs is 0 for a run without pairs (yet)."""
        return self.store.execute(
            """select r.id, r.title, r.status, r.simulated, r.created_at, r.recipe_path,
                      (select count(*) from selections s where s.selection_key = b.selection_key),
                      b.per_prompt,
                      (select count(*) from run_reward_models m where m.run_id = r.id), r.error,
                      (select count(*) from pair_sets p where p.pair_set_key = r.pair_set_key)
               from runs r left join benchmarks b on b.id = r.benchmark_id
               order by r.created_at desc, r.rowid desc"""
        ).fetchall()

    def run_sources(self, run_id: str) -> list[dict[str, Any]]:
        """The run's provenance rows, in order; none for a run stored before they were."""
        return dict_rows(
            self.store.execute(
                "select * from run_sources where run_id = ? order by position", [run_id]
            )
        )

    def failures(self, run_id: str, stage: str) -> list[tuple[str, str]]:
        """(item_id, error) of the run's failures of ``stage``, in the order recorded."""
        return self.store.execute(
            "select item_id, error from failures where run_id = ? and stage = ? order by id",
            [run_id, stage],
        ).fetchall()

    def reward_models(self, run_id: str) -> list[tuple[str, str]]:
        """(label, rm_key) of the run's RMs in recipe order."""
        return self.store.execute(
            "select label, rm_key from run_reward_models where run_id = ? order by position",
            [run_id],
        ).fetchall()

    def pair_count(self, pair_set_key: str) -> int:
        return self.store.execute(
            "select count(*) from pair_sets where pair_set_key = ?", [pair_set_key]
        ).fetchone()[0]

    def components_named(self, kind: str, name: str) -> list[tuple[str, str]]:
        """(key, options JSON) of every stored component of ``kind`` called ``name``."""
        return self.store.execute(
            "select key, options from components where kind = ? and name = ?", [kind, name]
        ).fetchall()

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
    def metric_rows(self, run_id: str) -> list[dict[str, Any]]:
        """The run's ``metric_results`` rows, in stored order."""
        rows = dict_rows(
            self.store.execute(
                "select * from metric_results where run_id = ? order by rowid", [run_id]
            )
        )
        return self._numbers("metric_results", rows, RESULT_NUMBERS)

    def curve_rows(self, run_id: str) -> list[dict[str, Any]]:
        """The run's ``curves`` rows (one per point), in stored order."""
        rows = dict_rows(
            self.store.execute("select * from curves where run_id = ? order by rowid", [run_id])
        )
        return self._numbers("curves", rows, ("x", *RESULT_NUMBERS))

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

    def per_prompt_values(self, run_id: str, rm_key: str) -> list[tuple[str, str, float]]:
        """(key, prompt_id, value) of one RM's per-prompt results in the run."""
        rows = self.store.execute(
            "select key, prompt_id, value from per_prompt_results where run_id = ? and rm_key = ?",
            [run_id, rm_key],
        ).fetchall()
        for _, _, value in rows:
            if value is not None and not isinstance(value, int | float):
                raise damaged_value(self.store.path, "per_prompt_results.value", value)
        return rows

    # -- a benchmark's contents -------------------------------------------------------------
    def selection_prompts(self, selection_key: str) -> list[tuple[int, str, str, str]]:
        """(position, id, text, meta JSON) of a selection's prompts, in order."""
        return self.store.execute(
            """select s.position, p.id, p.text, p.meta from selections s
               join prompts p on p.id = s.prompt_id
               where s.selection_key = ? order by s.position""",
            [selection_key],
        ).fetchall()

    def labelled_responses(self, benchmark: dict[str, Any], prompt_id: str) -> list[tuple]:
        """(id, sample_index, text, meta JSON, score, samples JSON, cost_usd, prompt_tokens,
        completion_tokens, inclusion probability) of one prompt's benchmark responses and
        their labels, in order: on a budgeted benchmark every response (the label columns NULL
        where the design left it unlabelled), else the labelled ones (probability NULL)."""
        budgeted = benchmark.get("design") is not None
        # on a budgeted benchmark only the drawn responses' labels are its own
        drawn = "and i.drawn = 1" if budgeted else ""
        return self.store.execute(
            f"""select r.id, r.sample_index, r.text, r.meta, l.score, l.samples, l.cost_usd,
                      l.prompt_tokens, l.completion_tokens, i.probability
               from responses r
               left join inclusion i on i.benchmark_id = ? and i.response_id = r.id
               {"left " if budgeted else ""}join oracle_labels l
                 on l.oracle_key = ? and l.response_id = r.id {drawn}
               where r.policy_key = ? and r.prompt_id = ? and r.sample_index < ?
               order by r.sample_index""",
            [
                benchmark["id"],
                benchmark["oracle_key"],
                benchmark["policy_key"],
                prompt_id,
                benchmark["per_prompt"],
            ],
        ).fetchall()

    def full_benchmarks(self, policy_key: str, oracle_key: str, per_prompt: int) -> list[dict]:
        """The stored benchmarks of this policy, oracle and N whose every response is labelled
        (no label design), most prompts first: the pilots a label plan can read."""
        cursor = self.store.execute(
            """select b.*, (select count(*) from selections s where s.selection_key =
                            b.selection_key) as prompts
               from benchmarks b where b.policy_key = ? and b.oracle_key = ?
               and b.per_prompt = ? and b.design is null order by prompts desc, b.id""",
            [policy_key, oracle_key, per_prompt],
        )
        return dict_rows(cursor)

    def label_coverage(self, benchmark: dict[str, Any]) -> tuple[int, int]:
        """(labelled, all) responses of a budgeted benchmark: those its design drew that have
        a label, and all of them (its inclusion table)."""
        return self.store.execute(
            """select count(l.response_id), count(*) from inclusion i
               left join oracle_labels l on l.oracle_key = ? and l.response_id = i.response_id
                 and i.drawn = 1
               where i.benchmark_id = ?""",
            [benchmark["oracle_key"], benchmark["id"]],
        ).fetchone()

    def oracle_range(
        self, benchmark: dict[str, Any]
    ) -> tuple[float | None, float | None, float | None]:
        """(lowest, highest, mean) oracle score of the benchmark's responses (Nones when none
        is labelled)."""
        return self.store.execute(
            """select min(j.score), max(j.score), avg(j.score) from responses r
               join oracle_labels j on j.oracle_key = ? and j.response_id = r.id
               where r.policy_key = ? and r.sample_index < ?
                 and r.prompt_id in (select prompt_id from selections where selection_key = ?)""",
            [
                benchmark["oracle_key"],
                benchmark["policy_key"],
                benchmark["per_prompt"],
                benchmark["selection_key"],
            ],
        ).fetchone()

    def scores_with_labels(
        self, benchmark: dict[str, Any], rm_key: str
    ) -> list[tuple[str, float, float]]:
        """(prompt_id, RM score, oracle score) of every benchmark response both scored and
        labelled.  ``prompt_id in (subquery)`` makes SQLite walk the responses index prompt by
        prompt; a join on selections instead rescans the selection for every response."""
        return self.store.execute(
            """select r.prompt_id, y.score, j.score from responses r
               join rm_scores y on y.rm_key = ? and y.response_id = r.id
               join oracle_labels j on j.oracle_key = ? and j.response_id = r.id
               where r.policy_key = ? and r.sample_index < ?
                 and r.prompt_id in (select prompt_id from selections where selection_key = ?)""",
            [
                rm_key,
                benchmark["oracle_key"],
                benchmark["policy_key"],
                benchmark["per_prompt"],
                benchmark["selection_key"],
            ],
        ).fetchall()

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

    # -- a run's preference pairs -------------------------------------------------------------
    def pair_scores(self, pair_set_key: str, rm_key: str) -> list[tuple]:
        """Every pair of a pair set that ``rm_key`` scored, in order: (position, pair id,
        subset, meta JSON, prompt id, chosen id, rejected id, prompt, chosen, rejected, chosen
        score, rejected score)."""
        return self.store.execute(
            """select s.position, p.id, p.subset, p.meta, p.prompt_id, p.chosen_id,
                      p.rejected_id, q.text, c.text, r.text, sc.score, sr.score
               from pair_sets s join pairs p on p.id = s.pair_id
               join prompts q on q.id = p.prompt_id
               join responses c on c.id = p.chosen_id join responses r on r.id = p.rejected_id
               join rm_scores sc on sc.rm_key = ? and sc.response_id = p.chosen_id
               join rm_scores sr on sr.rm_key = ? and sr.response_id = p.rejected_id
               where s.pair_set_key = ? order by s.position""",
            [rm_key, rm_key, pair_set_key],
        ).fetchall()

    def shifted_pair_scores(
        self, pair_set_key: str, rm_key: str
    ) -> list[tuple[str, str, str, float, float, float]]:
        """Every stored shifted copy of the set's pairs that ``rm_key`` scored: (pair id,
        original pair id, shift target, shift level, chosen score, rejected score)."""
        return self.store.execute(
            """select p.id, p.original_pair_id, p.shift_target, p.shift_level, sc.score, sr.score
               from pairs p
               join rm_scores sc on sc.rm_key = ? and sc.response_id = p.chosen_id
               join rm_scores sr on sr.rm_key = ? and sr.response_id = p.rejected_id
               where p.original_pair_id in
                 (select pair_id from pair_sets where pair_set_key = ?)""",
            [rm_key, rm_key, pair_set_key],
        ).fetchall()

    def pair_texts(self, pair_id: str) -> tuple[str, str, str, str, str] | None:
        """(prompt, chosen, rejected, chosen id, rejected id) of a stored pair."""
        return self.store.execute(
            """select q.text, c.text, r.text, p.chosen_id, p.rejected_id from pairs p
               join prompts q on q.id = p.prompt_id join responses c on c.id = p.chosen_id
               join responses r on r.id = p.rejected_id where p.id = ?""",
            [pair_id],
        ).fetchone()

    # -- paired comparisons (rmaudit.results.comparison) ---------------------------------------
    def stored_per_prompt(
        self, run_id: str, rm_key: str, metric: str, key: str
    ) -> dict[str, float]:
        """prompt id → the per-prompt value of one stored number of ``rm_key``."""
        return dict(
            self.store.execute(
                "select prompt_id, value from per_prompt_results "
                "where run_id = ? and rm_key = ? and metric = ? and key = ?",
                [run_id, rm_key, metric, key],
            ).fetchall()
        )

    def stored_value(self, run_id: str, rm_key: str, metric: str, key: str) -> float | None:
        """One stored number's value (None: not stored, or stored without one)."""
        row = self.store.execute(
            "select value from metric_results "
            "where run_id = ? and rm_key = ? and metric = ? and key = ?",
            [run_id, rm_key, metric, key],
        ).fetchone()
        return None if row is None else row[0]
