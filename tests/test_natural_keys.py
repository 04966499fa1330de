"""Scores and labels made elsewhere, matched by natural keys (prompt + response text, the
user's ids) in every file format, with and without gzip; conflicts and misses reported."""

from __future__ import annotations

import csv
import gzip
import io
import json
import sqlite3
import unicodedata

import pytest

from rmaudit.benchmark.keyed_files import text_key
from rmaudit.components import Prompt, Response
from rmaudit.default_plugins.oracles import LabelsFile, LabelsFileOptions
from rmaudit.default_plugins.reward_models import ScoresFile, ScoresFileOptions
from rmaudit.errors import BadInput

#: a generic-layout benchmark: prompt 2 repeats a text (same text, same score is one key) and
#: has one oracle tie pair; the café prompt is written in NFC here and NFD in the scores file
BENCHMARK = [
    {
        "prompt": "Name a colour.",
        "responses": ["Red.", "Blue, obviously.", "Green"],
        "oracle": [1.2, 1.9, 1.5],
        "response_ids": ["a0", "a1", "a2"],
    },
    {
        "prompt": "Où est le café ?",
        "responses": ["Ici.", "Là-bas, à gauche.", "Je ne sais pas."],
        "oracle": [1.6, 1.8, 1.1],
        "response_ids": ["b0", "b1", "b2"],
    },
    {
        "prompt": "Say hi.",
        "responses": ["hi", "hi", "hello there"],
        "oracle": [1.0, 1.3, 1.7],
        "response_ids": ["c0", "c1", "c2"],
    },
]
SCORES = {
    "Red.": 0.1,
    "Blue, obviously.": 0.7,
    "Green": 0.4,
    "Ici.": 0.3,
    "Là-bas, à gauche.": 0.9,
    "Je ne sais pas.": -0.2,
    "hi": 0.5,
    "hello there": 0.6,
}


def write(path, rows, fmt):
    """``rows`` as a .jsonl / .json / .csv / .parquet file, gzip-compressed if the name says."""
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        buffer = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows), buffer)
        data = buffer.getvalue()
    elif fmt == "csv":
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
        data = text.getvalue().encode()
    elif fmt == "json":
        data = json.dumps(rows).encode()
    else:
        data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def text_rows():
    """Scores keyed by text, written as a user's pipeline might: NFD accents, padded prompts."""
    return [
        {
            "prompt": "  " + unicodedata.normalize("NFD", record["prompt"]) + "\n",
            "response": unicodedata.normalize("NFD", response),
            "score": SCORES[response],
        }
        for record in BENCHMARK
        for response in record["responses"]
    ]


RECIPE = """
[benchmark]
name = "benchmark-jsonl"
path = "bench.jsonl"

[[reward_models]]
label = "by-id"
name = "scores-file"
path = "{by_id}"

[[reward_models]]
label = "by-text"
name = "scores-file"
path = "{by_text}"
match = "text"

[[reward_models]]
label = "by-your-id"
name = "scores-file"
path = "{by_user_id}"
match = "id"
id_field = "id"

[[reward_models]]
label = "in-the-file"
name = "benchmark-scores"
path = "bench.jsonl"
rm = "mine"

[[metrics]]
name = "reta"
eta = 0.34
n = 3

[[metrics]]
name = "best-of-n"
report = [2]

[[metrics]]
name = "pairwise-accuracy"
"""


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv", "parquet"])
@pytest.mark.parametrize("gz", ["", ".gz"])
def test_text_and_user_id_keys_reproduce_the_metrics_of_rmaudit_ids(tmp_path, rmaudit, fmt, gz):
    bench = [{**r, "scores": {"mine": [SCORES[t] for t in r["responses"]]}} for r in BENCHMARK]
    write(tmp_path / "bench.jsonl", bench, "jsonl")
    by_text = write(tmp_path / f"by-text.{fmt}{gz}", text_rows(), fmt)
    by_user_id = write(
        tmp_path / f"by-user-id.{fmt}{gz}",
        [
            {"id": i, "score": SCORES[t]}
            for r in BENCHMARK
            for i, t in zip(r["response_ids"], r["responses"], strict=True)
        ],
        fmt,
    )
    # rmaudit's ids are known once the benchmark is stored: a first run with the text scores
    # stores it, then the ids are read back, as a user of the old scores-file had to
    db = tmp_path / "audit.db"
    first = tmp_path / "first.toml"
    first.write_text(
        '[benchmark]\nname = "benchmark-jsonl"\npath = "bench.jsonl"\n\n'
        f'[[reward_models]]\nlabel = "t"\nname = "scores-file"\npath = "{by_text.name}"\n'
        'match = "text"\n\n[[metrics]]\nname = "best-of-n"\nreport = [2]\n'
    )
    assert rmaudit("run", str(first), "--db", str(db)).code == 0
    with sqlite3.connect(db) as con:
        rows = con.execute("select r.id, r.text from responses r").fetchall()
    by_id = write(
        tmp_path / f"by-id.{fmt}{gz}",
        [{"response_id": rid, "score": SCORES[text]} for rid, text in rows],
        fmt,
    )
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(
        RECIPE.format(by_id=by_id.name, by_text=by_text.name, by_user_id=by_user_id.name)
    )
    result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 0, result.err
    with sqlite3.connect(db) as con:
        values = con.execute(
            "select m.key, rm.label, m.value, m.stderr from metric_results m join "
            "run_reward_models rm on rm.run_id = m.run_id and rm.rm_key = m.rm_key "
            "where m.run_id = (select id from runs where recipe_path = ?)",
            (str(recipe),),
        ).fetchall()
    table = {(key, label): (v, se) for key, label, v, se in values}
    assert {key for key, _ in table} == {"reta@0.34", "bon@2", "pairwise_accuracy"}
    for key in ("reta@0.34", "bon@2", "pairwise_accuracy"):
        reference = table[(key, "by-id")]
        for label in ("by-text", "by-your-id", "in-the-file"):
            assert table[(key, label)] == pytest.approx(reference, abs=1e-12, rel=0)


def items(*pairs):
    return [
        (Prompt(f"p{i}", prompt), Response(f"r{i}", f"p{i}", 0, response, {"id": f"u{i}"}))
        for i, (prompt, response) in enumerate(pairs)
    ]


def test_text_keys_normalise_unicode_line_ends_and_outer_whitespace_only():
    assert text_key(" e\u0301\r\nx \t") == "é\nx"
    assert text_key("a  b") != text_key("a b")  # inner whitespace is content
    assert text_key("Hi") != text_key("hi")  # so is case


def test_conflicting_duplicates_are_an_error_naming_both_lines(tmp_path):
    path = write(
        tmp_path / "s.jsonl.gz",
        [
            {"prompt": "P", "response": "A", "score": 1.0},
            {"prompt": "P ", "response": "A", "score": 1.0},  # the same key, the same value: fine
            {"prompt": "P", "response": "B", "score": 2.0},
            {"prompt": "P", "response": "A", "score": 3.0},
        ],
        "jsonl",
    )
    with pytest.raises(
        BadInput,
        match=r"s\.jsonl\.gz:4: score: the same key has two different "
        r"scores \(1\.0 at .*s\.jsonl\.gz:1\) \(got 3\.0\)",
    ):
        ScoresFile(ScoresFileOptions(path=path, match="text"))


def test_misses_are_counted_and_unmatched_rows_reported(tmp_path):
    path = write(
        tmp_path / "labels.csv.gz",
        [
            {"prompt": "P", "response": "A", "label": 1.5},
            {"prompt": "P", "response": "B", "label": 1.25},
            {"prompt": "Q", "response": "C", "label": 1.0},
        ],
        "csv",
    )
    oracle = LabelsFile(LabelsFileOptions(path=path, match="text"))
    assert [label.score for label in oracle.label(items(("P", "A"), ("P", "B")))] == [1.5, 1.25]
    with pytest.raises(
        BadInput,
        match=r"2 of 3 responses have no label in the file \(matching "
        r"by text\); the first: prompt 'P', response 'Z'",
    ):
        oracle.label(items(("P", "A"), ("P", "Z"), ("R", "A")))
    scores = ScoresFile(
        ScoresFileOptions(
            path=write(
                tmp_path / "s.json",
                [
                    {"prompt": "P", "response": "A", "score": 1},
                    {"prompt": "Q", "response": "C", "score": 2},
                ],
                "json",
            ),
            match="text",
        )
    )
    scores.score(items(("P", "A")))
    assert scores.report() == {
        "rows matching no scored response": f"1 (first: {tmp_path}/s.json:record 2)"
    }


def test_non_finite_values_name_the_line(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"response_id": "r", "score": 1}\n{"response_id": "q", "score": NaN}\n')
    with pytest.raises(BadInput, match=r"s\.jsonl:2: score: expected a finite score"):
        ScoresFile(ScoresFileOptions(path=path))


def test_an_error_of_a_default_metric_says_it_is_one(tmp_path, rmaudit):
    write(tmp_path / "bench.jsonl", BENCHMARK, "jsonl")
    recipe = tmp_path / "defaults.toml"
    recipe.write_text(
        '[benchmark]\nname = "benchmark-jsonl"\npath = "bench.jsonl"\n\n'
        '[[reward_models]]\nlabel = "len"\nname = "length"\n'
    )
    result = rmaudit("run", str(recipe), "--db", str(tmp_path / "a.db"))
    assert result.code == 2
    assert (
        "defaults.toml: metrics[0].eta (a default metric: the recipe lists no [[metrics]]): η·n < 1"
    ) in result.err


def test_the_published_schema_describes_what_the_reader_accepts(tmp_path):
    """docs/benchmark-layout.schema.json against the benchmark-jsonl reader: a record valid by
    the schema reads; one the schema rejects, the reader rejects too."""
    from pathlib import Path

    import jsonschema

    from rmaudit.benchmark.layouts import generic

    schema = json.loads(
        (Path(__file__).parents[1] / "docs" / "benchmark-layout.schema.json").read_text(
            encoding="utf-8"
        )
    )
    good = {
        "prompt": "P",
        "id": 7,
        "responses": ["a", "b", "c"],
        "oracle": [1.0, None, 2],
        "response_ids": ["x", "y", 3],
        "scores": {"rm": [0.5, 0.1, None]},
    }
    jsonschema.validate(good, schema)
    path = write(tmp_path / "good.jsonl", [good], "jsonl")
    content, scores = generic(path, title="t")
    assert [r["label"]["score"] for r in content.records[0]["responses"]] == [1.0, 2.0]
    assert scores["rm"] == {("P", "a"): 0.5, ("P", "b"): 0.1}
    for bad in (
        {"prompt": "P", "responses": ["a"]},
        {"prompt": 1, "responses": [], "oracle": []},
        {"prompt": "P", "responses": ["a"], "oracle": ["high"]},
        {"prompt": "P", "responses": "a", "oracle": [1]},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
        with pytest.raises(BadInput):
            generic(write(tmp_path / "bad.jsonl", [bad], "jsonl"), title="t")


def test_misses_are_counted_over_the_whole_stage_not_one_batch(tmp_path, rmaudit):
    write(tmp_path / "bench.jsonl", BENCHMARK, "jsonl")
    kept = [row for row in text_rows() if row["response"] not in ("Red.", "Ici.", "hello there")]
    write(tmp_path / "scores.jsonl", kept, "jsonl")
    recipe = tmp_path / "misses.toml"
    recipe.write_text(
        'batch_size = 1\n\n[benchmark]\nname = "benchmark-jsonl"\n'
        'path = "bench.jsonl"\n\n[[reward_models]]\nname = "scores-file"\n'
        'path = "scores.jsonl"\nmatch = "text"\n\n[[metrics]]\nname = "reta"\n'
        "eta = 0.34\nn = 3\n"
    )
    result = rmaudit("run", str(recipe), "--db", str(tmp_path / "a.db"))
    assert result.code == 2
    assert "3 of 9 responses have no score in the file (matching by text)" in result.err


def test_an_empty_response_text_is_a_key_an_empty_id_is_not(tmp_path):
    """A shift sweep can delete every word of a response: its empty text must be scorable."""
    rows = [{"prompt": "P", "response": "", "response_id": "", "score": 0.5}]
    path = write(tmp_path / "s.csv", rows, "csv")
    by_text = ScoresFile(ScoresFileOptions(path=path, match="text"))
    assert by_text.score(items(("P", ""))) == [0.5]
    with pytest.raises(BadInput, match=r"s\.csv:2: response_id: missing field"):
        ScoresFile(ScoresFileOptions(path=path, match="id"))
