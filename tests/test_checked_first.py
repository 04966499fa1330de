"""Nothing is written before everything checkable is checked (issue 30.6): each input below
used to be refused only after the DB was written (a failed run row, a stored benchmark); now
it is exit 2, one line naming file, field and value, and the DB is absent or byte-identical."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from _support import HANG_S, SMALL_RECIPE


@pytest.fixture(scope="module")
def earlier_db(tmp_path_factory) -> Path:
    """A DB holding one complete run of the small simulated recipe."""
    from rmaudit.cli import main

    folder = tmp_path_factory.mktemp("earlier")
    recipe = folder / "recipe.toml"
    recipe.write_text(SMALL_RECIPE.replace("{extra_rms}", ""), encoding="utf-8")
    db = folder / "earlier.db"
    with pytest.raises(SystemExit) as done:
        main(["run", str(recipe), "--db", str(db)])
    assert done.value.code == 0
    return db


@pytest.fixture(params=["new DB", "earlier DB"])
def db(request, tmp_path, earlier_db) -> Path:
    """Where the refused command writes: no file yet, or a copy of an earlier run's DB."""
    path = tmp_path / "audit.db"
    if request.param == "earlier DB":
        shutil.copyfile(earlier_db, path)
    return path


def untouched(db: Path):
    """A check that ``db`` (and its lock and journal files) is as it was when called."""
    before = db.read_bytes() if db.exists() else None

    def check() -> None:
        assert (db.read_bytes() if db.exists() else None) == before, "the DB was written"
        leftovers = [db.with_name(db.name + s) for s in ("-wal", "-shm", "-journal", ".lock")]
        assert not [p for p in leftovers if p.exists()], leftovers

    return check


def refused(result, *expected: str) -> str:
    """The command's one line on stderr, after checking exit 2 and ``expected`` in it."""
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert result.code == 2, result.err
    assert len(lines) == 1, lines
    for part in expected:
        assert part in lines[0], lines[0]
    return lines[0]


def jsonl_prompts_recipe(folder: Path, prompts: list[dict], replace: dict[str, str]) -> Path:
    (folder / "prompts.jsonl").write_text(
        "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in prompts), encoding="utf-8"
    )
    text = SMALL_RECIPE.replace("{extra_rms}", "").replace(
        'name = "simulated-helpful"', 'name = "jsonl"\npath = "prompts.jsonl"'
    )
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new, 1)
    recipe = folder / "recipe.toml"
    recipe.write_text(text, encoding="utf-8")
    return recipe


def test_a_kdpp_on_embeddings_of_rank_below_k_is_refused_before_the_db(rmaudit, tmp_path, db):
    """Six prompts with the same words (told apart by line separators only) embed to rank 1."""
    prompts = [{"prompt": "apple pear plum" + "\u2028" * i} for i in range(1, 7)]
    recipe = jsonl_prompts_recipe(
        tmp_path, prompts, {'name = "random"\nk = 8': 'name = "kdpp"\nk = 3'}
    )
    check = untouched(db)
    result = rmaudit("run", str(recipe), "--db", str(db))
    refused(
        result,
        f"{recipe}: prompts.sampler.embeddings: expected embeddings of rank ≥ k = 3",
        "got rank 1",
    )
    check()


def test_a_judge_template_showing_a_reference_the_prompts_lack_is_refused_before_the_db(
    rmaudit, tmp_path, db
):
    pytest.importorskip("openai", reason="the api extra (the openai SDK) is not installed")
    prompts = [{"prompt": f"Question {i}?"} for i in range(10)]
    prompts[3]["reference"] = "Only this one has a reference."
    oracle = '[oracle]\nname = "simulated-judge"\nsamples = 3'
    judge = (
        '[oracle]\nname = "llm-judge"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "judge"\n'
        'template = "reta-single"'
    )
    recipe = jsonl_prompts_recipe(tmp_path, prompts, {oracle: judge, "k = 8": "k = 10"})
    check = untouched(db)
    result = rmaudit("run", str(recipe), "--db", str(db))
    refused(result, f"{recipe}: oracle: template reta-single shows a reference answer, but prompt")
    check()


# -- rmaudit audit: scores files and suite data, checked against every suite's items ----------
@pytest.fixture
def audit_data(tmp_path, monkeypatch, rmaudit, request):
    """LLMBar and HH fixture data; ``request.param``: the DB is new, or holds an audit."""
    from test_audit import length_scores, write_llmbar
    from test_audit_items import write_hh

    monkeypatch.chdir(tmp_path)  # the audit's results file lands here
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    data = tmp_path / "data"
    pairs = write_llmbar(data)
    write_hh(data)
    db = tmp_path / "audit.db"
    if request.param == "earlier DB":
        done = rmaudit(
            "audit", "length", "--suite", "llmbar", "--data-dir", str(data), "--db", str(db)
        )
        assert done.code == 0, done.err
        (tmp_path / "audit.results.json").unlink()
    return data, pairs, length_scores(tmp_path / "lengths.jsonl", pairs), db


both_dbs = pytest.mark.parametrize("audit_data", ["new DB", "earlier DB"], indirect=True)


@both_dbs
def test_a_scores_file_missing_rows_is_refused_before_the_db(rmaudit, audit_data):
    data, _, scores, db = audit_data
    rows = scores.read_text(encoding="utf-8").splitlines(keepends=True)
    scores.write_text("".join(rows[:-5]), encoding="utf-8")
    check = untouched(db)
    done = rmaudit(
        "audit", f"scores:{scores}", "--suite", "llmbar", "--data-dir", str(data), "--db", str(db)
    )
    refused(done, f"{scores}", f"5 of {len(rows)} responses have no score in the file")
    check()
    assert not db.with_name("audit.results.json").exists()


@both_dbs
def test_a_scores_file_matching_nothing_is_refused_before_the_db(rmaudit, audit_data, tmp_path):
    data, _, _, db = audit_data
    other = tmp_path / "other.csv"
    other.write_text("prompt,response,score\nNot a prompt,Not a response,1.0\n", encoding="utf-8")
    check = untouched(db)
    done = rmaudit(
        "audit", f"scores:{other}", "--suite", "llmbar", "--data-dir", str(data), "--db", str(db)
    )
    refused(done, f"{other}", "responses have no score in the file")
    check()


@both_dbs
def test_a_scores_file_of_one_suite_without_suite_names_that_suite_early(rmaudit, audit_data):
    """Without --suite every suite found is audited: the scores file (LLMBar's items) does not
    cover HH's, and the refusal names the suite it does match."""
    data, _, scores, db = audit_data
    check = untouched(db)
    done = rmaudit("audit", f"scores:{scores}", "--data-dir", str(data), "--db", str(db))
    lines = [line for line in done.err.splitlines() if not line.startswith("skipped suite")]
    refused(
        type(done)(done.code, done.out, "\n".join(lines)),
        f"{scores}",
        "have no score in the file",
        "suite hh: the file matches the items of suite llmbar",
        "--suite llmbar",
    )
    check()


@both_dbs
def test_an_audit_whose_records_are_all_rejected_is_refused_before_the_db(rmaudit, audit_data):
    data, _, _, db = audit_data
    for path in (data / "llmbar").rglob("dataset.json"):
        records = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps([{**r, "label": 7} for r in records]), encoding="utf-8")
    check = untouched(db)
    done = rmaudit("audit", "length", "--suite", "llmbar", "--data-dir", str(data), "--db", str(db))
    refused(done, "the pair source gave no pairs", "records rejected")
    check()


@both_dbs
def test_a_scores_file_missing_its_score_column_is_refused_before_the_db(rmaudit, audit_data):
    data, _, scores, db = audit_data
    rows = [json.loads(line) for line in scores.read_text(encoding="utf-8").splitlines()]
    rows[3].pop("score")
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    check = untouched(db)
    done = rmaudit(
        "audit", f"scores:{scores}", "--suite", "llmbar", "--data-dir", str(data), "--db", str(db)
    )
    refused(done, f"{scores}:4", "score")
    check()


# -- the DB itself: schema damage, and files this process cannot write ------------------------
@both_dbs
@pytest.mark.parametrize("table", ["responses", "metric_results"])
def test_a_dropped_table_is_refused_before_an_audit_writes(rmaudit, audit_data, table):
    """A dropped table passes SQLite's quick_check: it used to flip the audit's done run to
    failed, or (responses) store three suites again before the error."""
    data, _, scores, db = audit_data
    if not db.exists():
        done = rmaudit(
            "audit", "length", "--suite", "llmbar", "--data-dir", str(data), "--db", str(db)
        )
        assert done.code == 0, done.err
    conn = sqlite3.connect(db)
    conn.execute(f"drop table {table}")
    conn.commit()
    conn.close()
    check = untouched(db)
    done = rmaudit("audit", "length", "--suite", "llmbar", "--data-dir", str(data), "--db", str(db))
    refused(done, f"{db}: database is corrupted (no such table: {table})")
    check()
    assert rmaudit("runs", "--db", str(db)).code == 2


#: root without the capabilities that let it ignore file modes: permissions as a user has them
AS_A_USER = [
    "setpriv",
    "--bounding-set",
    "-dac_override,-dac_read_search",
    "--inh-caps",
    "-dac_override,-dac_read_search",
]


def run_as_a_user(*argv: str) -> subprocess.CompletedProcess:
    """The CLI in a subprocess that file modes bind (tests often run as root, which they do not
    bind: then as root without its CAP_DAC_OVERRIDE, as a user is)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip(
                "running as root, and setpriv (util-linux) is missing to drop CAP_DAC_OVERRIDE"
            )
        prefix = AS_A_USER
    return subprocess.run(
        [*prefix, sys.executable, "-m", "rmaudit", *argv],
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )


@pytest.mark.parametrize(
    "where", ["read-only DB", "read-only folder", "read-only folder, new DB", "missing folder"]
)
def test_a_db_that_cannot_be_written_is_exit_2_naming_it(where, tmp_path, write_recipe, earlier_db):
    folder = tmp_path / "dbs"
    folder.mkdir()
    db = folder / ("new.db" if "new DB" in where else "audit.db")
    if where == "missing folder":
        db = tmp_path / "no" / "such" / "dir" / "x.db"
    elif "new DB" not in where:
        shutil.copyfile(earlier_db, db)
    check = untouched(db)
    if where == "read-only DB":
        db.chmod(0o444)
    elif "read-only folder" in where:
        folder.chmod(0o555)
    try:
        done = run_as_a_user("run", str(write_recipe()), "--db", str(db))
    finally:
        folder.chmod(0o755)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith(f"Error: {db}: cannot "), lines
    assert ".lock" not in lines[0] and "Traceback" not in done.stderr
    check()


def test_a_benchmark_file_missing_an_rms_scores_is_refused_before_the_db(rmaudit, tmp_path, db):
    """The ``benchmark-scores`` RM reads one key of each record's ``scores``: a record without
    it used to be found when the run scored, after the benchmark was stored."""
    records = [
        {
            "prompt": f"Question {i}?",
            "responses": [f"a{i}", f"bb{i}"],
            "oracle": [1.0, 2.0],
            "scores": {"mine": [0.1, 0.2]},
        }
        for i in range(4)
    ]
    records[2]["scores"] = {"other": [0.3, 0.4]}
    (tmp_path / "bench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    recipe = tmp_path / "bench.toml"
    recipe.write_text(
        '[benchmark]\nname = "benchmark-jsonl"\npath = "bench.jsonl"\n\n[[reward_models]]\n'
        'label = "mine"\nname = "benchmark-scores"\npath = "bench.jsonl"\nrm = "mine"\n\n'
        '[[metrics]]\nname = "pairwise-accuracy"\n'
    )
    check = untouched(db)
    result = rmaudit("run", str(recipe), "--db", str(db))
    refused(result, "bench.jsonl", "scores.mine", "2 of 8 responses have no score for 'mine'")
    check()


# -- a benchmark file's header, validated as a recipe is -------------------------------------
@pytest.mark.parametrize(
    "change, said",
    [
        (
            {"per_prompt": -3},
            "benchmark.per_prompt: Input should be greater than or equal to 1 (got -3)",
        ),
        ({"per_prompt": "16"}, "benchmark.per_prompt: Input should be a valid integer (got '16')"),
        ({"title": None}, "benchmark.title: Input should be a valid string (got None)"),
        ({"simulated": "yes"}, "benchmark.simulated: Input should be a valid boolean (got 'yes')"),
        ({"design": {"design": "uniformm"}}, "benchmark.design.design: expected design 'uniform'"),
    ],
    ids=["per_prompt -3", "per_prompt text", "title null", "simulated text", "design misspelt"],
)
def test_a_benchmark_file_header_is_validated_like_a_recipe(
    change, said, rmaudit, tmp_path, earlier_db, db
):
    exported = tmp_path / "exported.jsonl"
    assert rmaudit("export", str(exported), "--db", str(earlier_db)).code == 0
    header, *records = exported.read_text(encoding="utf-8").splitlines()
    edited = json.loads(header)
    edited["benchmark"].update(change)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([json.dumps(edited), *records]) + "\n", encoding="utf-8")
    check = untouched(db)
    refused(rmaudit("import", str(bad), "--db", str(db)), f"{bad}:1: {said}")
    check()


# -- damaged run rows: one line naming the run and the field, never a silent null ------------
@pytest.mark.parametrize(
    "damage, field, shown",
    [
        ("status = NULL", "status", "None"),
        ("status = 'dnoe'", "status", "'dnoe'"),
        ("timings = NULL", "timings", "None"),
        ("timings = 'not json'", "timings", "'not json'"),
        ("""timings = '{"total": "slow"}'""", "timings", """'{"total": "slow"}'"""),
        ("created_at = 'yesterday'", "created_at", "'yesterday'"),
        ("finished_at = X'00ff'", "finished_at", "b'\\x00\\xff'"),
        ("simulated = 'maybe'", "simulated", "'maybe'"),
    ],
)
@pytest.mark.parametrize("command", [["--json"], [], ["RUN"]], ids=["--json", "list", "RUN"])
def test_a_damaged_run_row_is_one_line_naming_the_run_and_the_field(
    damage, field, shown, command, rmaudit, tmp_path, earlier_db
):
    db = tmp_path / "damaged.db"
    shutil.copyfile(earlier_db, db)
    conn = sqlite3.connect(db)
    (run_id,) = conn.execute("select id from runs").fetchone()
    conn.execute(f"update runs set {damage}")
    conn.commit()
    conn.close()
    check = untouched(db)
    argv = [run_id if part == "RUN" else part for part in command]
    done = rmaudit("runs", str(db), *argv)
    assert "null" not in done.out
    refused(done, f"{db}: runs.{field}: ", f"run {run_id} has a damaged {field}", f"(got {shown})")
    check()


@both_dbs
def test_write_items_with_every_record_rejected_is_refused_before_the_db(
    rmaudit, audit_data, tmp_path
):
    data, _, _, db = audit_data
    for path in (data / "llmbar").rglob("dataset.json"):
        records = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps([{**r, "label": 7} for r in records]), encoding="utf-8")
    check = untouched(db)
    items = tmp_path / "items.jsonl"
    done = rmaudit(
        "audit",
        "--suite",
        "llmbar",
        "--data-dir",
        str(data),
        "--db",
        str(db),
        "--write-items",
        str(items),
    )
    refused(done, "the pair source gave no pairs", "records rejected")
    check()
    assert not items.exists()
