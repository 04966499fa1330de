"""A table of bad inputs (issue 13): recipes, prompt, pair and score files, import files, DB
files and command-line options.  Each exits 2 with exactly one line on stderr that names the
file (or option) and the problem, no traceback, and leaves the DB absent or byte-identical."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest

BASE = """
title = "fuzz"
[prompts.source]
name = "jsonl"
path = "prompts.jsonl"
[prompts.sampler]
name = "random"
k = 2
[responses]
per_prompt = 4
[responses.policy]
name = "simulated-policy"
[oracle]
name = "simulated-judge"
samples = 2
[[reward_models]]
name = "simulated-rm"
"""
GOOD_PROMPTS = "".join(json.dumps({"prompt": f"Question {i}?"}) + "\n" for i in range(4))
PAIRS = """
title = "pairs"
[pairs.source]
name = "pairs-file"
path = "pairs.jsonl"
[[reward_models]]
name = "simulated-rm"
"""
SCORES = BASE.replace(
    '[[reward_models]]\nname = "simulated-rm"',
    '[[reward_models]]\nname = "scores-file"\npath = "scores.jsonl"',
)


@dataclass
class Case:
    #: files to write beside the recipe: name → text (str) or bytes
    files: dict[str, str | bytes]
    #: the command after "rmaudit"; {recipe}, {db} and {dir} are filled in
    argv: list[str]
    #: text the one line must hold (the file, field or value at fault)
    expect: list[str]
    #: an existing DB to leave byte-identical: "good" (a finished run) or bytes
    db: str | bytes | None = None


def run_case(recipe: str = BASE, **files: str | bytes) -> dict[str, str | bytes]:
    return {"recipe.toml": recipe, "prompts.jsonl": GOOD_PROMPTS, **files}


def edit(old: str, new: str, recipe: str = BASE) -> str:
    assert old in recipe, old
    return recipe.replace(old, new, 1)


RUN = ["run", "{recipe}", "--db", "{db}"]
CASES: dict[str, Case] = {}


def case(name: str, files: dict, expect: list[str], argv: list[str] = RUN, db=None) -> None:
    assert name not in CASES
    CASES[name] = Case(files, argv, expect, db)


# -- recipes ---------------------------------------------------------------------------------
for name, old, new, expect in [
    ("k is true", "k = 2", "k = true", ["prompts.sampler.k", "True"]),
    ("k is false", "k = 2", "k = false", ["prompts.sampler.k"]),
    ("k is a string", "k = 2", 'k = "two"', ["prompts.sampler.k", "'two'"]),
    ("k is negative", "k = 2", "k = -1", ["prompts.sampler.k", "-1"]),
    ("k is a float", "k = 2", "k = 2.5", ["prompts.sampler.k", "2.5"]),
    ("k larger than the pool", "k = 2", "k = 50", ["prompts.sampler.k", "50", "pool of 4"]),
    ("k is a list", "k = 2", "k = [2]", ["prompts.sampler.k"]),
    (
        "k-DPP k above the embedder's dims",
        'name = "random"\nk = 2',
        'name = "kdpp"\nk = 3\n[prompts.embedder]\nname = "tfidf-lsa"\ndims = 2',
        ["prompts.sampler.k", "3", "the embedder gives 2"],
    ),
    ("per_prompt is true", "per_prompt = 4", "per_prompt = true", ["responses.per_prompt"]),
    ("per_prompt is 1", "per_prompt = 4", "per_prompt = 1", ["responses.per_prompt", "1"]),
    (
        "per_prompt is absurd",
        "per_prompt = 4",
        "per_prompt = 1e9",
        ["RMAUDIT_MAX_ITEMS", "responses"],
    ),
    ("per_prompt is NaN", "per_prompt = 4", "per_prompt = nan", ["responses.per_prompt"]),
    ("samples is absurd", "samples = 2", "samples = 1e9", ["RMAUDIT_MAX_ITEMS", "oracle labels"]),
    ("samples is true", "samples = 2", "samples = true", ["oracle.samples"]),
    ("samples is inf", "samples = 2", "samples = inf", ["oracle.samples"]),
    ("batch_size is zero", 'title = "fuzz"', 'title = "fuzz"\nbatch_size = 0', ["batch_size", "0"]),
    ("batch_size is true", 'title = "fuzz"', 'title = "fuzz"\nbatch_size = true', ["batch_size"]),
    ("title is a number", 'title = "fuzz"', "title = 5", ["title", "5"]),
    (
        "unknown top-level key",
        'title = "fuzz"',
        'title = "fuzz"\ntitel = "x"',
        ["titel", "unknown option"],
    ),
    ("unknown sampler", 'name = "random"', 'name = "randum"', ["prompts.sampler.name", "randum"]),
    (
        "unknown option",
        "samples = 2",
        "samples = 2\nsampels = 3",
        ["oracle.sampels", "did you mean"],
    ),
    (
        "a slot's label misspelt",
        '[[reward_models]]\nname = "simulated-rm"',
        '[[reward_models]]\nname = "simulated-rm"\nlable = "mine"',
        ["reward_models[0].lable", "unknown option; did you mean 'label'?", "'mine'"],
    ),
    (
        "a slot's name misspelt",
        '[[reward_models]]\nname = "simulated-rm"',
        '[[reward_models]]\nnmae = "simulated-rm"',
        ["reward_models[0].name", "missing component name ('nmae'?)"],
    ),
    (
        "sampler is a number",
        '[prompts.sampler]\nname = "random"\nk = 2',
        "[prompts.sampler]",
        ["prompts.sampler"],
    ),
    (
        "missing data file",
        'path = "prompts.jsonl"',
        'path = "absent.jsonl"',
        ["prompts.source.path", "absent.jsonl"],
    ),
    (
        "missing responses",
        '[responses]\nper_prompt = 4\n[responses.policy]\nname = "simulated-policy"\n',
        "",
        ["responses"],
    ),
    ("no reward models", '[[reward_models]]\nname = "simulated-rm"', "", ["reward_models"]),
    (
        "empty rm label",
        '[[reward_models]]\nname = "simulated-rm"',
        '[[reward_models]]\nname = "simulated-rm"\nlabel = ""',
        ["reward_models[0].label"],
    ),
    (
        "seed is true",
        '[[reward_models]]\nname = "simulated-rm"',
        '[[reward_models]]\nname = "simulated-rm"\nseed = true',
        ["reward_models[0].seed"],
    ),
    (
        "eta out of range",
        '[[reward_models]]\nname = "simulated-rm"',
        '[[reward_models]]\nname = "simulated-rm"\n[[metrics]]\nname = "reta"\neta = 2.0',
        ["metrics[0].eta", "2.0"],
    ),
    (
        "executor unknown",
        'title = "fuzz"',
        'title = "fuzz"\nexecutor = "slurm"',
        ["executor.name", "slurm"],
    ),
]:
    case(f"recipe: {name}", run_case(edit(old, new)), expect)
case("recipe: malformed TOML", run_case('title = "x'), ["malformed TOML"])
case("recipe: not UTF-8", run_case(b'title = "\xff"\n'), ["cannot read recipe"])
case("recipe: binary", run_case(bytes(range(256))), ["recipe.toml"])
case("recipe: empty", run_case(""), ["reward_models"])
case("recipe: missing", {}, ["recipe file not found"])
case("recipe: a directory", {"recipe.toml/x": "y"}, ["recipe.toml"])

# -- prompt files ----------------------------------------------------------------------------
GZ = edit('path = "prompts.jsonl"', 'path = "prompts.jsonl.gz"')
for name, content, expect in [
    ("empty", "", ["prompts.jsonl", "no prompts"]),
    ("blank lines only", "\n\n\n", ["prompts.jsonl", "no prompts"]),
    ("malformed JSON", '{"prompt": "a"\n', ["prompts.jsonl:1", "invalid JSON"]),
    ("a JSON array line", '["a"]\n', ["prompts.jsonl:1"]),
    ("prompt is a number", '{"prompt": 5}\n', ["prompts.jsonl:1", "5"]),
    ("prompt missing", '{"text": "a"}\n', ["prompts.jsonl:1"]),
    ("prompt empty", '{"prompt": ""}\n', ["prompts.jsonl:1"]),
    ("binary", bytes(range(256)) * 4, ["prompts.jsonl"]),
    ("not UTF-8", b'{"prompt": "caf\xe9"}\n', ["prompts.jsonl", "utf-8"]),
    ("NUL bytes", b"\x00\x00\x00\n", ["prompts.jsonl"]),
    ("one prompt, k = 2", '{"prompt": "only one"}\n', ["prompts.sampler.k", "pool of 1"]),
    (
        "the same prompt twice",
        '{"prompt": "a"}\n{"prompt": "a"}\n',
        ["prompts.sampler.k", "pool of 1"],
    ),
]:
    case(f"prompts: {name}", run_case(**{"prompts.jsonl": content}), expect)
for name, content, expect in [
    ("not gzip", b'{"prompt": "a"}\n', ["prompts.jsonl.gz", "gzip"]),
    ("truncated gzip", gzip.compress(GOOD_PROMPTS.encode())[:20], ["prompts.jsonl.gz"]),
    ("gzip of nothing", gzip.compress(b""), ["prompts.jsonl.gz", "no prompts"]),
    ("gzip of binary", gzip.compress(bytes(range(256))), ["prompts.jsonl.gz"]),
]:
    case(f"prompts: {name}", run_case(GZ, **{"prompts.jsonl.gz": content}), expect)

# -- pair files ------------------------------------------------------------------------------
for name, content, expect in [
    ("empty", "", ["pairs.source", "no pairs"]),
    ("not UTF-8", b'{"prompt": "\xff", "chosen": "a", "rejected": "b"}\n', ["pairs.jsonl"]),
    ("binary", bytes(range(256)) * 2, ["pairs.jsonl"]),
    ("a JSON scalar per line", "5\n6\n", ["pairs.jsonl"]),
]:
    case(f"pairs: {name}", {"recipe.toml": PAIRS, "pairs.jsonl": content}, expect)

# -- score files -----------------------------------------------------------------------------
for name, content, expect in [
    (
        "not UTF-8",
        b'{"response_id": "a", "score": 1.0}\n{"response_id": "\xff", "score": 2}\n',
        ["scores.jsonl"],
    ),
    ("NaN score", '{"response_id": "a", "score": NaN}\n', ["scores.jsonl", "nan"]),
    ("score is a string", '{"response_id": "a", "score": "high"}\n', ["scores.jsonl", "high"]),
    ("score is true", '{"response_id": "a", "score": true}\n', ["scores.jsonl", "True"]),
    ("malformed JSON", '{"response_id": "a", "score": }\n', ["scores.jsonl:1", "invalid JSON"]),
    ("binary", bytes(range(256)) * 2, ["scores.jsonl"]),
]:
    case(f"scores: {name}", run_case(SCORES, **{"scores.jsonl": content}), expect)

# -- import files (rmaudit import) -----------------------------------------------------------
HEADER = {
    "format": "rmaudit-benchmark",
    "format_version": 1,
    "benchmark": {"policy_key": "p", "oracle_key": "o", "title": "t"},
}


def benchmark_lines(**changes) -> str:
    record = {
        "prompt": {"text": "Q?", "meta": {}},
        "responses": [
            {
                "sample_index": i,
                "text": f"A{i}",
                "meta": {},
                "label": {"score": 1.0 + i, "samples": [1.0 + i]},
            }
            for i in range(2)
        ],
    }
    for path, value in changes.items():
        target = record
        *parents, last = path.split(".")
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        target[last] = value
    return json.dumps(HEADER) + "\n" + json.dumps(record) + "\n"


IMPORT = ["import", "{dir}/bench.jsonl", "--db", "{db}"]
for name, content, expect in [
    ("meta is a number", benchmark_lines(**{"prompt.meta": 5}), ["prompt.meta", "5"]),
    ("meta is a list", benchmark_lines(**{"prompt.meta": [1]}), ["prompt.meta"]),
    ("response meta is text", benchmark_lines(**{"responses.0.meta": "x"}), ["responses[0].meta"]),
    (
        "sample_index is text",
        benchmark_lines(**{"responses.0.sample_index": "0"}),
        ["sample_index", "'0'"],
    ),
    (
        "sample_index is true",
        benchmark_lines(**{"responses.1.sample_index": True}),
        ["sample_index"],
    ),
    ("score is text", benchmark_lines(**{"responses.0.label.score": "1"}), ["label.score"]),
    (
        "samples is Infinity",
        benchmark_lines(**{"responses.0.label.samples": float("inf")}).replace("inf", "Infinity"),
        ["label.samples", "inf"],
    ),
    (
        "a sample is Infinity",
        benchmark_lines(**{"responses.0.label.samples": [float("inf")]}).replace("inf", "Infinity"),
        ["label.samples[0]", "inf"],
    ),
    (
        "cost is text",
        benchmark_lines(**{"responses.0.label.cost_usd": "free"}),
        ["label.cost_usd", "free"],
    ),
    (
        "one response",
        json.dumps(HEADER) + "\n" + json.dumps({"prompt": {"text": "Q"}, "responses": []}) + "\n",
        ["responses"],
    ),
    ("wrong format", json.dumps({"format": "other"}) + "\n", ["format", "other"]),
    ("empty file", "", ["bench.jsonl", "empty"]),
    ("not UTF-8", b"\xff\xfe\n", ["bench.jsonl"]),
    ("binary", bytes(range(256)), ["bench.jsonl"]),
]:
    case(f"import: {name}", {"bench.jsonl": content}, expect, IMPORT)

# -- DB files --------------------------------------------------------------------------------
JUNK = bytes(range(256)) * 64
for name, argv in [
    ("runs", ["runs", "--db", "{db}"]),
    ("report", ["report", "{db}"]),
    ("export", ["export", "{dir}/out.jsonl", "--db", "{db}"]),
    ("tui", ["tui", "{db}"]),
    ("run", RUN),
]:
    files = run_case() if name == "run" else {}
    case(f"db: not SQLite ({name})", files, ["audit.db", "not an SQLite database"], argv, db=JUNK)
for name, argv in [
    ("runs", ["runs", "--db", "{db}"]),
    ("report", ["report", "{db}"]),
    ("export", ["export", "{dir}/out.jsonl", "--db", "{db}"]),
]:
    case(f"db: 0 bytes ({name})", {}, ["audit.db", "not an rmaudit database"], argv, db=b"")
    case(f"db: missing ({name})", {}, ["audit.db", "does not exist"], argv)
case(
    "db: corrupted pages (runs)",
    {},
    ["audit.db", "corrupted"],
    ["runs", "--db", "{db}"],
    db="corrupt",
)
case("db: corrupted pages (run)", run_case(), ["audit.db", "corrupted"], RUN, db="corrupt")
# the page of schema_info, which every open reads before anything checks the file's pages
for name, argv in [
    ("run", RUN),
    ("runs", ["runs", "--db", "{db}"]),
    ("compare", ["compare", "{db}"]),
    ("report", ["report", "{db}"]),
]:
    case(
        f"db: schema_info's page corrupted ({name})",
        run_case() if name == "run" else {},
        ["audit.db", "database is corrupted", "malformed"],
        argv,
        db="schema page",
    )
# damaged pages of the schema table: SQLite's error quotes the name, which is not UTF-8 either
for name, argv in [
    ("runs", ["runs", "--db", "{db}"]),
    ("runs --json", ["runs", "{db}", "--json"]),
    ("report", ["report", "{db}"]),
    ("run", RUN),
]:
    case(
        f"db: schema text not UTF-8 ({name})",
        run_case() if name == "run" else {},
        ["audit.db", "database is corrupted", "not UTF-8"],
        argv,
        db="schema text",
    )
case(
    "db: a migration's name not UTF-8 (runs)",
    {},
    ["audit.db", "database is corrupted", "Could not decode to UTF-8"],
    ["runs", "--db", "{db}"],
    db="migration text",
)
for name, argv in [("runs --json", ["runs", "{db}", "--json"]), ("report", ["report", "{db}"])]:
    case(
        f"db: a dropped table ({name})",
        {},
        ["audit.db", "corrupted", "no such table: metric_results"],
        argv,
        db="dropped",
    )
    case(
        f"db: text in a number column ({name})",
        {},
        ["audit.db", "metric_results.value", "not a number", "'garbage'"],
        argv,
        db="garbage",
    )
case(
    "db: another program's SQLite (run)",
    run_case(),
    ["audit.db", "not an rmaudit database"],
    RUN,
    db="foreign",
)
case(
    "db: another program's SQLite (runs)",
    {},
    ["audit.db", "not an rmaudit database"],
    ["runs", "--db", "{db}"],
    db="foreign",
)

# -- command-line options --------------------------------------------------------------------
for name, argv, expect in [
    ("unknown option", [*RUN, "--bogus"], ["--bogus"]),
    ("unknown command", ["rnu"], ["rnu"]),
    (
        "suite misspelt",
        ["audit", "length", "--suite", "llmbr"],
        ["'llmbr': did you mean 'llmbar'?"],
    ),
    (
        "served protocol misspelt",
        ["audit", "http://127.0.0.1:9/", "--rm-protocol", "vlm-pooling"],
        ["'vlm-pooling': did you mean 'vllm-pooling'?"],
    ),
    (
        "regret study kind misspelt",
        ["regret-study", "rank-bin"],
        ["'rank-bin': did you mean 'rank-bins'?"],
    ),
    ("missing argument", ["run"], ["RECIPE"]),
    ("option without value", ["run", "{recipe}", "--db"], ["--db"]),
    ("plugins dir missing", ["--plugins-dir", "{dir}/nowhere", "plugins"], ["--plugins-dir"]),
    ("unknown run id", ["runs", "--db", "{db}", "zzzz"], ["zzzz"]),
    ("fresh over other recipes' runs", [*RUN, "--fresh"], ["--fresh", "--yes"]),
]:
    db = "good" if name in ("unknown run id", "fresh over other recipes' runs") else None
    files = run_case() if "fresh" in name else {}
    if "fresh" in name:
        files["recipe.toml"] = BASE.replace('title = "fuzz"', 'title = "another recipe"')
    case(f"cli: {name}", files, expect, argv, db=db)
for name, source, expect in [
    ("syntax error", "def broken(:\n", ["bad.py", "syntax error"]),
    ("raises", "raise RuntimeError('boom')\n", ["bad.py", "boom"]),
    (
        "misspelled hook",
        "from rmaudit import hookimpl\n@hookimpl\ndef register_reward_model(register):\n    pass\n",
        ["bad.py", "register_reward_model", "register_reward_models"],
    ),
]:
    case(
        f"cli: plugin that {name}",
        {"plugins/bad.py": source},
        expect,
        ["--plugins-dir", "{dir}/plugins", "run", "{recipe}", "--db", "{db}"],
    )

assert len(CASES) >= 60, len(CASES)


@pytest.fixture(scope="module")
def finished_db(tmp_path_factory) -> Path:
    """A DB holding one finished run of BASE."""
    from rmaudit.cli import main

    folder = tmp_path_factory.mktemp("finished")
    (folder / "recipe.toml").write_text(BASE)
    (folder / "prompts.jsonl").write_text(GOOD_PROMPTS)
    with pytest.raises(SystemExit) as done:
        main(["run", str(folder / "recipe.toml"), "--db", str(folder / "audit.db")])
    assert done.value.code == 0
    return folder / "audit.db"


def _prepare_db(kind: str | bytes, path: Path, finished: Path) -> None:
    if isinstance(kind, bytes):
        path.write_bytes(kind)
    elif kind == "good":
        shutil.copy(finished, path)
    elif kind == "corrupt":
        shutil.copy(finished, path)
        with open(path, "r+b") as file:
            file.seek(3 * 4096)
            file.write(b"\x13" * 2000)
    elif kind == "schema page":
        shutil.copy(finished, path)
        conn = sqlite3.connect(path)
        page_size = conn.execute("pragma page_size").fetchone()[0]
        (root,) = conn.execute("select rootpage from sqlite_master where name = 'schema_info'")
        conn.close()
        with open(path, "r+b") as file:
            file.seek((root[0] - 1) * page_size)
            file.write(b"garbage!" * (page_size // 8))
    elif kind in ("dropped", "garbage"):
        shutil.copy(finished, path)
        conn = sqlite3.connect(path)
        with conn:
            if kind == "dropped":
                conn.execute("drop table metric_results")
            else:
                conn.execute("update metric_results set value = 'garbage'")
        conn.close()
    elif kind == "schema text":
        shutil.copy(finished, path)
        conn = sqlite3.connect(path)
        conn.execute("pragma writable_schema = on")
        conn.execute(
            "update sqlite_master set name = cast(x'6dff6d' as text) where name = "
            "(select name from sqlite_master where type = 'index' order by name limit 1)"
        )
        conn.commit()
        conn.close()
    elif kind == "migration text":
        shutil.copy(finished, path)
        conn = sqlite3.connect(path)
        conn.execute("update _sqlite_migrations set name = cast(x'6dff' as text) where rowid = 2")
        conn.commit()
        conn.close()
    elif kind == "foreign":
        conn = sqlite3.connect(path)
        conn.execute("create table notes (body text)")
        conn.commit()
        conn.close()


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_exits_2_with_one_line_and_leaves_the_db_alone(
    name, tmp_path, rmaudit, finished_db, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    given = CASES[name]
    for file, content in given.files.items():
        path = tmp_path / file
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    db = tmp_path / "audit.db"
    if given.db is not None:
        _prepare_db(given.db, db, finished_db)
    before = db.read_bytes() if db.exists() else None
    argv = [a.format(recipe=tmp_path / "recipe.toml", db=db, dir=tmp_path) for a in given.argv]

    result = rmaudit(*argv)

    assert result.code == 2, result
    lines = result.err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.err
    assert "Traceback" not in result.err
    for fragment in given.expect:
        assert fragment in lines[0], (fragment, lines[0])
    after = db.read_bytes() if db.exists() else None
    assert after == before, "the DB was created or changed"
    for suffix in ("-wal", "-shm", "-journal", ".lock"):
        assert not Path(f"{db}{suffix}").exists(), suffix


def test_a_run_that_meets_damaged_text_exits_2_naming_the_db(tmp_path, rmaudit, finished_db):
    """Damage SQLite's quick_check passes (text that is no longer UTF-8) is found when the run
    reads it — here a new RM scores the damaged response (a rerun with nothing to do reads no
    response text): one line naming the file, exit code 2, as for damaged pages."""
    db = tmp_path / "audit.db"
    shutil.copy(finished_db, db)
    conn = sqlite3.connect(db)
    text = conn.execute("select text from responses limit 1").fetchone()[0].encode()
    assert conn.execute("pragma quick_check").fetchone()[0] == "ok"
    conn.close()
    data = db.read_bytes()
    at = data.index(text)
    db.write_bytes(data[:at] + b"\xff" * len(text) + data[at + len(text) :])
    another_rm = '[[reward_models]]\nlabel = "another"\nname = "simulated-rm"\nnoise = 0.5\n'
    (tmp_path / "recipe.toml").write_text(BASE + another_rm)
    (tmp_path / "prompts.jsonl").write_text(GOOD_PROMPTS)

    result = rmaudit("run", str(tmp_path / "recipe.toml"), "--db", str(db))

    assert result.code == 2, result
    progress = ("━", " eta ")  # the progress bars, drawn before the stage that meets it
    (line,) = [
        line
        for line in result.err.splitlines()
        if line.strip() and not any(p in line for p in progress)
    ]
    assert line.startswith(f"Error: {db}: database is corrupted"), line
    assert "Could not decode to UTF-8" in line and "\xff" not in line and "\ufffd" not in line
