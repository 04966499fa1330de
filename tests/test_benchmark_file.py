"""Export a benchmark, import it elsewhere, audit an RM on it with no oracle at all."""

from __future__ import annotations

import gzip
import json
import sqlite3

import pytest
from _support import metric_rows, table_counts


@pytest.mark.parametrize("name", ["bench.jsonl", "bench.jsonl.gz"])
def test_export_import_round_trip_gives_the_same_metrics(name, rmaudit, write_recipe, tmp_path):
    source_db, other_db = tmp_path / "a.db", tmp_path / "b.db"
    assert rmaudit("run", str(write_recipe()), "--db", str(source_db)).code == 0
    out = tmp_path / name
    exported = rmaudit("export", str(out), "--db", str(source_db))
    assert exported.code == 0, exported.err
    opener = gzip.open if name.endswith(".gz") else open
    with opener(out, "rt") as handle:
        lines = handle.read().splitlines()
    assert len(lines) == 1 + 8 and json.loads(lines[0])["format"] == "rmaudit-benchmark"

    imported = rmaudit("import", str(out), "--db", str(other_db))
    assert imported.code == 0, imported.err
    counts = table_counts(other_db)
    assert counts["responses"] == counts["oracle_labels"] == 8 * 16
    assert rmaudit("import", str(out), "--db", str(other_db)).code == 0
    assert table_counts(other_db) == counts, "importing twice stores nothing twice"

    recipe = write_recipe(
        f'''
        title = "small simulated audit"
        [benchmark]
        file = "{out.name}"

        [[reward_models]]
        label = "honest"
        name = "simulated-rm"
        seed = 1

        [[metrics]]
        name = "reta"
        eta = 0.25

        [[metrics]]
        name = "best-of-n"
        report = [4]
    ''',
        name="audit.toml",
    )
    result = rmaudit("run", str(recipe), "--db", str(other_db))
    assert result.code == 0, result.err
    assert "oracle labels" not in result.err
    original = {(rm, k): v for rm, _, k, v, _ in metric_rows(source_db) if rm == "honest"}
    audited = {(rm, k): v for rm, _, k, v, _ in metric_rows(other_db)}
    for key in (("honest", "reta@0.25"), ("honest", "bon@4")):
        assert audited[key] == pytest.approx(original[key], rel=1e-12)


@pytest.mark.parametrize("changed", ["label", "text"])
@pytest.mark.parametrize("how", ["import", "run"])
def test_a_file_that_conflicts_with_stored_rows_is_refused_and_the_db_is_unchanged(
    changed, how, rmaudit, write_recipe, tmp_path
):
    db = tmp_path / "a.db"
    assert rmaudit("run", str(write_recipe()), "--db", str(db)).code == 0
    out = tmp_path / "bench.jsonl"
    assert rmaudit("export", str(out), "--db", str(db)).code == 0
    header, *records = [json.loads(line) for line in out.read_text().splitlines()]
    response = records[3]["responses"][5]  # same keys as the stored row, another value
    if changed == "label":
        response["label"]["score"] += 1.0
    else:
        response["text"] += " (edited)"
    out.write_text("".join(json.dumps(r) + "\n" for r in [header, *records]))
    before = db.read_bytes()

    if how == "import":
        result = rmaudit("import", str(out), "--db", str(db))
    else:
        recipe = write_recipe(
            f'''
            [benchmark]
            file = "{out.name}"

            [[reward_models]]
            name = "simulated-rm"
        ''',
            name="audit.toml",
        )
        result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 2, result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    field = "text" if changed == "text" else "label.score"
    assert f"{out}: records[3].responses[5].{field}: the DB holds another" in result.err
    assert db.read_bytes() == before


BENCHMARK_AUDIT = """
title = "audit of an exported benchmark"
[benchmark]
file = "{file}"

[[reward_models]]
label = "honest"
name = "simulated-rm"
seed = 1
"""


def test_an_export_imported_back_into_its_own_db_adds_nothing(rmaudit, write_recipe, tmp_path):
    db, out = tmp_path / "audit.db", tmp_path / "bench.jsonl"
    assert rmaudit("run", str(write_recipe()), "--db", str(db)).code == 0
    assert rmaudit("export", str(out), "--db", str(db)).code == 0
    (benchmark_id,) = [row[0] for row in sqlite3.connect(db).execute("select id from benchmarks")]
    before = table_counts(db)

    imported = rmaudit("import", str(out), "--db", str(db))

    assert imported.code == 0, imported.err
    assert imported.out.strip() == f"benchmark {benchmark_id} is already in {db}: nothing new"
    assert table_counts(db) == before
    # a recipe auditing the export on that DB audits the stored benchmark: no second one
    recipe = write_recipe(BENCHMARK_AUDIT.format(file=out.name), name="audit.toml")
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    audited = sqlite3.connect(db).execute(
        "select benchmark_id from runs where title = ?", ["audit of an exported benchmark"]
    )
    assert audited.fetchall() == [(benchmark_id,)]
    after = table_counts(db)
    for table in ("benchmarks", "selections", "prompts", "responses", "oracle_labels"):
        assert after[table] == before[table], table


def test_a_prompt_record_given_twice_is_refused_naming_both_lines(rmaudit, write_recipe, tmp_path):
    """Every metric would count the prompt twice; the file is refused, nothing is written."""
    source, out = tmp_path / "source.db", tmp_path / "bench.jsonl"
    assert rmaudit("run", str(write_recipe()), "--db", str(source)).code == 0
    assert rmaudit("export", str(out), "--db", str(source)).code == 0
    lines = out.read_text().splitlines()
    repeated = tmp_path / "repeated.jsonl"
    repeated.write_text("\n".join([*lines, lines[2]]) + "\n")
    text = json.loads(lines[2])["prompt"]["text"]
    db = tmp_path / "other.db"

    result = rmaudit("import", str(repeated), "--db", str(db))

    assert result.code == 2, result
    (line,) = result.err.splitlines()
    # line numbers count from 1, the header being line 1
    assert line.startswith(
        f"Error: {repeated}:{len(lines) + 1}: prompt.text: the same prompt as line 3"
    ), line
    assert text[:20] in line
    assert not db.exists()
