"""The SQLite store (DESIGN.md, "Data model"), through sqlite-utils with migrations.

Everything a run produces is keyed by content: prompts by text, responses by
(policy, prompt, sample index), labels by (response, oracle), scores by (response, RM).
Writers insert whole batches inside one transaction with ``ignore=True``, so a killed
run loses at most the batch in flight and a rerun never stores an item twice.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlite_utils
from sqlite_utils import Migrations

from rmaudit.errors import BadInput

SCHEMA_VERSION = 3
MIGRATION_SET = "rmaudit"
migrations = Migrations(MIGRATION_SET)


@migrations()
def m001_initial(db: sqlite_utils.Database) -> None:
    db["runs"].create({
        "id": str, "title": str, "recipe_path": str, "recipe_text": str, "recipe_json": str,
        "benchmark_id": str, "status": str, "simulated": int, "created_at": str,
        "finished_at": str, "rmaudit_version": str, "timings": str, "error": str,
    }, pk="id")
    db["components"].create({
        "key": str, "kind": str, "name": str, "version": int, "options": str, "simulated": int,
    }, pk="key")
    db["prompts"].create({"id": str, "text": str, "meta": str}, pk="id")
    db["selections"].create({"selection_key": str, "position": int, "prompt_id": str},
                            pk=("selection_key", "position"))
    db["benchmarks"].create({
        "id": str, "title": str, "selection_key": str, "policy_key": str, "per_prompt": int,
        "oracle_key": str, "simulated": int, "origin": str, "created_at": str,
    }, pk="id")
    db["responses"].create({
        "id": str, "prompt_id": str, "policy_key": str, "sample_index": int, "text": str,
        "meta": str,
    }, pk="id")
    db["responses"].create_index(["policy_key", "prompt_id", "sample_index"], unique=True)
    db["oracle_labels"].create({
        "response_id": str, "oracle_key": str, "score": float, "samples": str,
        "cost_usd": float, "prompt_tokens": int, "completion_tokens": int,
    }, pk=("response_id", "oracle_key"))
    db["rm_scores"].create({"response_id": str, "rm_key": str, "score": float},
                           pk=("response_id", "rm_key"))
    db["rm_scores"].create_index(["rm_key", "response_id"])
    db["run_reward_models"].create({"run_id": str, "position": int, "label": str, "rm_key": str},
                                   pk=("run_id", "position"))
    db["metric_results"].create({
        "run_id": str, "rm_key": str, "metric": str, "key": str, "label": str, "params": str,
        "value": float,
        "stderr": float, "ci_low": float, "ci_high": float, "higher_is_better": int,
    }, pk=("run_id", "rm_key", "metric", "key"))
    db["curves"].create({
        "run_id": str, "rm_key": str, "metric": str, "key": str, "label": str, "point": int,
        "x_label": str,
        "x": float, "value": float, "stderr": float, "ci_low": float, "ci_high": float,
    }, pk=("run_id", "rm_key", "metric", "key", "point"))
    db["per_prompt_results"].create({
        "run_id": str, "rm_key": str, "metric": str, "key": str, "prompt_id": str,
        "value": float,
    }, pk=("run_id", "rm_key", "metric", "key", "prompt_id"))
    db["failures"].create({
        "id": int, "run_id": str, "stage": str, "item_id": str, "error": str, "created_at": str,
    }, pk="id")
    db["schema_info"].insert({"id": 1, "schema_version": SCHEMA_VERSION}, pk="id")


@migrations()
def m002_preference_pairs(db: sqlite_utils.Database) -> None:
    """Preference pairs (issue 4): the pairs, the ordered pair sets runs audit, and which pair
    set a run audits.  Responses of pair files have no policy (NULL policy_key and
    sample_index: SQLite's unique index treats NULLs as distinct, so they never collide)."""
    db["pairs"].create({
        "id": str, "prompt_id": str, "chosen_id": str, "rejected_id": str, "subset": str,
        "meta": str, "shift_target": str, "shift_level": float, "perturber_key": str,
        "original_pair_id": str,
    }, pk="id")
    db["pairs"].create_index(["original_pair_id"])
    db["pair_sets"].create({"pair_set_key": str, "position": int, "pair_id": str},
                           pk=("pair_set_key", "position"))
    db["runs"].add_column("pair_set_key", str)
    db["failures"].create_index(["run_id", "stage"])
    # m001 wrote the SCHEMA_VERSION of the rmaudit that created the file; say what it is now.
    db["schema_info"].update(1, {"schema_version": 2})


@migrations()
def m003_reward_model_reports(db: sqlite_utils.Database) -> None:
    """What an RM reported about its scoring in a run (e.g. truncated inputs), as JSON."""
    db["run_reward_models"].add_column("report", str)
    db["schema_info"].update(1, {"schema_version": 3})


class Store:
    """An open rmaudit database."""

    def __init__(self, db: sqlite_utils.Database, path: str) -> None:
        self.db = db
        self.path = path

    @classmethod
    def open(cls, path: str | Path, *, create: bool = True) -> "Store":
        """Open (and migrate) an rmaudit DB; a foreign or newer file is ``BadInput``."""
        path = str(path)
        if not create and not Path(path).exists():
            raise BadInput("database does not exist", file=path)
        db = _checked(sqlite3.connect(path, timeout=30), path)
        db.execute("pragma journal_mode=wal")
        db.execute("pragma synchronous=normal")
        migrations.apply(db)
        return cls(db, path)

    @classmethod
    def open_readonly(cls, path: str | Path) -> "Store | None":
        """Open an existing DB without changing it (for plans and viewers); None if absent."""
        path = str(path)
        if not Path(path).exists():
            return None
        uri = Path(path).resolve().as_uri() + "?mode=ro"
        return cls(_checked(sqlite3.connect(uri, uri=True, timeout=30), path), path)

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.db.atomic():
            yield

    # -- components -------------------------------------------------------------------
    def remember_component(self, key: str, identity: dict[str, Any], simulated: bool) -> None:
        self.db["components"].insert({
            "key": key, "kind": identity["kind"], "name": identity["name"],
            "version": identity["version"], "options": json.dumps(identity["options"]),
            "simulated": int(simulated),
        }, ignore=True)

    # -- content-addressed items ------------------------------------------------------
    def existing(self, sql: str, params: Iterable[Any] = ()) -> set:
        """First column of ``sql`` as a set (for "what is already stored")."""
        return {row[0] for row in self.db.execute(sql, list(params))}

    def insert_batch(self, table: str, rows: list[dict[str, Any]]) -> None:
        """Insert one batch atomically; rows already present are left as they are."""
        if rows:
            with self.db.atomic():
                self.db[table].insert_all(rows, ignore=True, batch_size=1000)


def _checked(conn: sqlite3.Connection, path: str) -> sqlite_utils.Database:
    """Refuse files that are not SQLite, not rmaudit's, or from a newer rmaudit."""
    db = sqlite_utils.Database(conn)
    try:
        tables = set(db.table_names())
    except sqlite3.DatabaseError as error:
        raise BadInput(f"not an SQLite database ({error})", file=path) from None
    if tables and "schema_info" not in tables:
        raise BadInput("not an rmaudit database (no schema_info table)", file=path)
    if "schema_info" in tables:
        found = db.execute("select schema_version from schema_info").fetchone()[0]
        if found > SCHEMA_VERSION:
            raise BadInput(f"database schema version {found} is newer than this rmaudit "
                           f"supports ({SCHEMA_VERSION}); upgrade rmaudit", file=path)
    return db


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
