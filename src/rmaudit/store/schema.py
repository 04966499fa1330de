"""The database schema as a sequence of migrations (docs/architecture.md, "Content-addressed,
resumable store").

Each migration runs once per file, in order (those a file lacks in one transaction), and is recorded
in ``_sqlite_migrations`` (the table sqlite-utils' migration runner kept before rmaudit wrote its
own; DBs made then carry on from where they are).  ``schema_info.schema_version`` says which rmaudit
schema a file has, so an older rmaudit refuses a newer file.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from rmaudit.errors import BadInput

SCHEMA_VERSION = 14
MIGRATION_SET = "rmaudit"

M001_INITIAL = """
create table runs (
   id text primary key, title text, recipe_path text, recipe_text text, recipe_json text,
   benchmark_id text, status text, simulated integer, created_at text, finished_at text,
   rmaudit_version text, timings text, error text);
create table components (
   key text primary key, kind text, name text, version integer, options text, simulated integer);
create table prompts (id text primary key, text text, meta text);
create table selections (
   selection_key text, position integer, prompt_id text, primary key (selection_key, position));
create table benchmarks (
   id text primary key, title text, selection_key text, policy_key text, per_prompt integer,
   oracle_key text, simulated integer, origin text, created_at text);
create table responses (
   id text primary key, prompt_id text, policy_key text, sample_index integer, text text,
   meta text);
create unique index idx_responses_policy_key_prompt_id_sample_index
   on responses (policy_key, prompt_id, sample_index);
create table oracle_labels (
   response_id text, oracle_key text, score real, samples text, cost_usd real,
   prompt_tokens integer, completion_tokens integer, primary key (response_id, oracle_key));
create table rm_scores (
   response_id text, rm_key text, score real, primary key (response_id, rm_key));
create index idx_rm_scores_rm_key_response_id on rm_scores (rm_key, response_id);
create table run_reward_models (
   run_id text, position integer, label text, rm_key text, primary key (run_id, position));
create table metric_results (
   run_id text, rm_key text, metric text, key text, label text, params text, value real,
   stderr real, ci_low real, ci_high real, higher_is_better integer,
   primary key (run_id, rm_key, metric, key));
create table curves (
   run_id text, rm_key text, metric text, key text, label text, point integer, x_label text,
   x real, value real, stderr real, ci_low real, ci_high real,
   primary key (run_id, rm_key, metric, key, point));
create table per_prompt_results (
   run_id text, rm_key text, metric text, key text, prompt_id text, value real,
   primary key (run_id, rm_key, metric, key, prompt_id));
create table failures (
   id integer primary key, run_id text, stage text, item_id text, error text, created_at text);
create table schema_info (id integer primary key, schema_version integer);
insert into schema_info values (1, 1);
"""

# Preference pairs (issue 4): the pairs, the ordered pair sets runs audit, and which pair set a
# run audits.  Responses of pair files have no policy (NULL policy_key and sample_index:
# SQLite's unique index treats NULLs as distinct, so they never collide).
M002_PREFERENCE_PAIRS = """
create table pairs (
   id text primary key, prompt_id text, chosen_id text, rejected_id text, subset text,
   meta text, shift_target text, shift_level real, perturber_key text, original_pair_id text);
create index idx_pairs_original_pair_id on pairs (original_pair_id);
create table pair_sets (
   pair_set_key text, position integer, pair_id text, primary key (pair_set_key, position));
alter table runs add column pair_set_key text;
create index idx_failures_run_id_stage on failures (run_id, stage);
update schema_info set schema_version = 2;
"""

# What an RM reported about its scoring in a run (e.g. truncated inputs), as JSON.
M003_REWARD_MODEL_REPORTS = """
alter table run_reward_models add column report text;
update schema_info set schema_version = 3;
"""

# Scores and labels clustered by the component that made them, in one B-tree each: they were
# rowid tables keyed by (response, component) in random order (scores with a second index),
# so every batch of a stage updated pages all over tables that grow with every run, and a
# stage's cost grew faster than its work.  Now a stage writes, and reads back, its own
# contiguous part; the columns are unchanged.
M004_ITEMS_BY_COMPONENT = """
create table rm_scores_new (
   response_id text, rm_key text, score real, primary key (rm_key, response_id)) without rowid;
insert into rm_scores_new select response_id, rm_key, score from rm_scores
   order by rm_key, response_id;
drop table rm_scores;
alter table rm_scores_new rename to rm_scores;
create table oracle_labels_new (
   response_id text, oracle_key text, score real, samples text, cost_usd real,
   prompt_tokens integer, completion_tokens integer,
   primary key (oracle_key, response_id)) without rowid;
insert into oracle_labels_new select response_id, oracle_key, score, samples, cost_usd,
   prompt_tokens, completion_tokens from oracle_labels order by oracle_key, response_id;
drop table oracle_labels;
alter table oracle_labels_new rename to oracle_labels;
update schema_info set schema_version = 4;
"""

# Where each part of a run came from (rmaudit.run.provenance): files with their SHA-256, models
# with their revision, or the simulated world; one row per source, in recipe order.
M005_RUN_SOURCES = """
create table run_sources (
   run_id text, position integer, part text, entry text, simulated integer, role text,
   kind text, location text, digest text, note text, primary key (run_id, position));
update schema_info set schema_version = 5;
"""

# How many times an item has failed in a run's stage: a rerun that fails it again counts one
# more attempt on its rows instead of adding rows (rmaudit.store.runs.Runs.retried).
M006_FAILURE_ATTEMPTS = """
alter table failures add column attempts integer not null default 1;
update schema_info set schema_version = 6;
"""

# Label budgets (docs/budget.md): a benchmark's label design (JSON; NULL: every response
# labelled) and, for each of its responses, the inclusion probability and whether the design
# drew it: a label another benchmark stored for an undrawn response must not count as drawn.
M007_LABEL_DESIGNS = """
alter table benchmarks add column design text;
create table inclusion (
   benchmark_id text, response_id text, probability real, drawn integer not null,
   primary key (benchmark_id, response_id)) without rowid;
update schema_info set schema_version = 7;
"""

# Pairwise judges (docs/judges.md): one verdict per pair as shown (prompt, first answer, second
# answer), keyed by that showing and the judge, with the judge's reply and what it cost.
M008_JUDGE_VERDICTS = """
create table judge_verdicts (
   rm_key text, shown_key text, prompt_id text, first_id text, second_id text, verdict text,
   p_first real, from_logprobs integer, samples text, reply text, cost_usd real,
   prompt_tokens integer, completion_tokens integer,
   primary key (rm_key, shown_key)) without rowid;
update schema_info set schema_version = 8;
"""

# Scoring checks (docs/real-models.md, "Scoring checks"): per run and RM, the checks a
# model-backed RM ran on a sample of the run's items before scoring (JSON), keyed also by the
# RM and the sample so a rerun reuses them; an RM whose checks were turned off has status
# 'skipped'.
M009_SCORING_CHECKS = """
create table scoring_checks (
   run_id text, label text, rm_key text, sample_key text, status text, checks text,
   primary key (run_id, label));
create index idx_scoring_checks_rm_key_sample_key on scoring_checks (rm_key, sample_key);
update schema_info set schema_version = 9;
"""

# What the source said about each position of a pair set (JSON): a pair is keyed by its texts,
# so one that a source gives twice (RM-Bench's records repeat a response across styles) is
# one row of ``pairs`` holding the first position's meta; RM-Bench's style combination
# belongs to the position.  NULL in sets stored before it: the pairs stage fills it in.
M010_PAIR_SET_META = """
alter table pair_sets add column meta text;
update schema_info set schema_version = 10;
"""

# What each stored metric result was computed from (rmaudit.store.metric_digests): per run, RM
# ('' for run-level) and metric, a digest of the metric's inputs, code and options, and when its
# rows were computed.  A rerun whose digest matches keeps the rows instead of recomputing them;
# results stored before this migration have no digest and are recomputed once.
M011_METRIC_DIGESTS = """
create table metric_digests (
   run_id text, rm_key text, metric text, digest text, computed_at text,
   primary key (run_id, rm_key, metric));
create index idx_metric_digests_rm_key_metric_digest on metric_digests (rm_key, metric, digest);
update schema_info set schema_version = 11;
"""

# Process reward models (docs/prm.md): solutions keyed by their question (a prompt) and their
# steps (a JSON array of the step texts), the ordered solution sets runs audit with each
# position's problem (a prompt: what the metrics cluster by) and what the data says of it
# (JSON: erroneous steps, first error, final answer), one score per step and PRM, clustered by
# the PRM as RM scores are, and which solution set a run audits.
M012_PROCESS_REWARDS = """
create table solutions (id text primary key, prompt_id text, steps text) without rowid;
create table solution_sets (
   solution_set_key text, position integer, solution_id text, problem_id text, ref text,
   subset text, labels text, primary key (solution_set_key, position));
create table step_scores (
   prm_key text, solution_id text, step integer, score real,
   primary key (prm_key, solution_id, step)) without rowid;
alter table runs add column solution_set_key text;
update schema_info set schema_version = 12;
"""

# What a data file's records add up to, once per content (its SHA-256) and kind of summary: a
# recorded judge's counts under its publisher's rule (rmaudit.suites.publisher_figures), so a
# rerun does not read and parse again the files it read before.
M013_FILE_SUMMARIES = """
create table file_summaries (
   digest text, kind text, summary text, primary key (digest, kind)) without rowid;
update schema_info set schema_version = 13;
"""

# A metric's digest names the RM scores it read by the RM's key instead of hashing them
# (rmaudit.run.metric_digest), so a rerun need not read them back: a score changed, deleted or
# replaced in place, by rmaudit or by anyone's SQL, deletes the stored digests of that RM's
# metrics and of every run-level one, and the next run recomputes them.  A score inserted
# for an RM with no stored digest (every score a run makes) costs one index probe.
M014_SCORE_EDITS = """
create trigger rm_scores_inserted after insert on rm_scores
   when exists (select 1 from metric_digests where rm_key = new.rm_key)
   begin delete from metric_digests where rm_key in (new.rm_key, ''); end;
create trigger rm_scores_updated after update on rm_scores
   begin delete from metric_digests where rm_key in (old.rm_key, new.rm_key, ''); end;
create trigger rm_scores_deleted after delete on rm_scores
   begin delete from metric_digests where rm_key in (old.rm_key, ''); end;
update schema_info set schema_version = 14;
"""

MIGRATIONS: tuple[tuple[str, str], ...] = (
    ("m001_initial", M001_INITIAL),
    ("m002_preference_pairs", M002_PREFERENCE_PAIRS),
    ("m003_reward_model_reports", M003_REWARD_MODEL_REPORTS),
    ("m004_items_by_component", M004_ITEMS_BY_COMPONENT),
    ("m005_run_sources", M005_RUN_SOURCES),
    ("m006_failure_attempts", M006_FAILURE_ATTEMPTS),
    ("m007_label_designs", M007_LABEL_DESIGNS),
    ("m008_judge_verdicts", M008_JUDGE_VERDICTS),
    ("m009_scoring_checks", M009_SCORING_CHECKS),
    ("m010_pair_set_meta", M010_PAIR_SET_META),
    ("m011_metric_digests", M011_METRIC_DIGESTS),
    ("m012_process_rewards", M012_PROCESS_REWARDS),
    ("m013_file_summaries", M013_FILE_SUMMARIES),
    ("m014_score_edits", M014_SCORE_EDITS),
)

MIGRATIONS_TABLE = """
create table if not exists _sqlite_migrations (
   id integer primary key, migration_set text, name text, applied_at text);
create unique index if not exists idx__sqlite_migrations_migration_set_name
   on _sqlite_migrations (migration_set, name);
"""


def migrate(conn: sqlite3.Connection, *, stop_before: str | None = None) -> None:
    """Apply the migrations this file lacks (up to ``stop_before``), all in one transaction:
    another process sees the file without a schema or with all of it, never half of it."""
    with _immediate(conn):
        _script(conn, MIGRATIONS_TABLE)
        for name, sql in MIGRATIONS:
            if name == stop_before:
                return
            done = conn.execute(
                "select 1 from _sqlite_migrations where migration_set = ? and name = ?",
                [MIGRATION_SET, name],
            ).fetchone()
            if not done:
                _script(conn, sql)
                conn.execute(
                    "insert into _sqlite_migrations (migration_set, name, applied_at) "
                    "values (?, ?, ?)",
                    [MIGRATION_SET, name, str(datetime.now(UTC))],
                )


def check(conn: sqlite3.Connection, path: str) -> None:
    """Refuse files that are not SQLite, not rmaudit's, or from a newer rmaudit."""
    try:
        tables = {
            row[0] for row in conn.execute("select name from sqlite_master where type = 'table'")
        }
    except sqlite3.DatabaseError as error:
        raise BadInput(f"not an SQLite database ({error})", file=path) from None
    except UnicodeDecodeError:  # damaged pages of the schema table: SQLite, but not readable
        raise BadInput(
            "database is corrupted (its schema table holds text that is not UTF-8); restore "
            "it from a copy, or rerun its recipes into a new DB",
            file=path,
        ) from None
    if tables and "schema_info" not in tables:
        raise BadInput("not an rmaudit database (no schema_info table)", file=path)
    if "schema_info" in tables:
        found = conn.execute("select schema_version from schema_info").fetchone()[0]
        if found > SCHEMA_VERSION:
            raise BadInput(
                f"database schema version {found} is newer than this rmaudit "
                f"supports ({SCHEMA_VERSION}); upgrade rmaudit",
                file=path,
            )


def _script(conn: sqlite3.Connection, sql: str) -> None:
    """Run ``;``-separated statements inside the caller's transaction (``executescript``
    would commit it first); a trigger's body keeps its own ``;``."""
    statement = ""
    for piece in sql.split(";"):
        statement += piece + ";"
        if sqlite3.complete_statement(statement):
            if statement.strip(" \n;"):
                conn.execute(statement)
            statement = ""


class _immediate:
    """``begin immediate`` … ``commit`` (``rollback`` on error) on an autocommit connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("begin immediate")

    def __exit__(self, kind, *_) -> None:
        self.conn.execute("commit" if kind is None else "rollback")
