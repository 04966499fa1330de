"""Export a benchmark, import it elsewhere, audit an RM on it with no oracle at all."""

from __future__ import annotations

import gzip
import json

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
