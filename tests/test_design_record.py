"""The label design as one typed record: the ``[oracle]`` budget keys validated into a frozen
``LabelBudget``, stored as a ``LabelDesignRecord`` in ``benchmarks.design`` and read back by the
store alone — also from a DB an older rmaudit wrote."""

from __future__ import annotations

import json
import sqlite3

import pytest
from pydantic import ValidationError

from rmaudit.errors import BadInput
from rmaudit.recipe.budget import LabelBudget
from rmaudit.store import Store
from rmaudit.store.records import BenchmarkRow, LabelDesignRecord

ORACLE = {
    "name": "simulated-judge",
    "samples": 2,
    "budget": 0.25,
    "design": "rm-guided",
    "guide": ["honest"],
    "design_seed": 3,
}


def budget_of(table: dict) -> tuple[object, LabelBudget | None]:
    return LabelBudget.from_oracle_table(
        table, file="r.toml", rm_labels=("honest", "weak"), per_prompt=16
    )


def benchmark(design: LabelDesignRecord | None, benchmark_id: str = "b1") -> BenchmarkRow:
    return BenchmarkRow(benchmark_id, "t", "sel", "pol", 16, "ora", True, "built", "now", design)


def test_the_oracle_table_splits_into_its_options_and_a_frozen_budget():
    oracle, budget = budget_of(ORACLE)
    assert oracle == {"name": "simulated-judge", "samples": 2}
    assert budget is not None and budget.guide == ("honest",) and budget.design_seed == 3
    with pytest.raises(ValidationError):
        budget.budget = 0.5  # type: ignore[misc]
    assert budget_of({"name": "simulated-judge"}) == ({"name": "simulated-judge"}, None)


def test_a_bad_budget_key_is_the_validators_one_line():
    with pytest.raises(BadInput) as found:
        budget_of({**ORACLE, "guide": ["honnest"]})
    assert str(found.value) == (
        "r.toml: oracle.guide: no reward model labelled 'honnest' (did you mean honest?) "
        "(got 'honnest')"
    )


def test_the_design_round_trips_through_the_store_as_its_record(tmp_path):
    _, budget = budget_of(ORACLE)
    assert budget is not None
    record = budget.record(("rmkey1",))
    assert record.identity() == {  # what a budgeted benchmark's key hashes, as before
        "budget": 0.25,
        "labels_per_prompt": None,
        "design": "rm-guided",
        "guide": ["rmkey1"],
        "design_seed": 3,
    }
    store = Store.open(tmp_path / "a.db")
    try:
        store.items.add_benchmark(benchmark(record))
        store.items.add_benchmark(benchmark(None, "b2"))
        assert store.items.benchmark("b1") == benchmark(record)
        assert store.items.benchmark("b2").design is None
        assert store.items.benchmark("b3") is None
    finally:
        store.close()


def test_a_design_an_older_rmaudit_stored_reads_back(tmp_path):
    """0.3 stored the design as ``json.dumps`` of its description, keys unsorted."""
    old = {
        "budget": 0.25,
        "labels_per_prompt": None,
        "design": "uniform",
        "guide": [],
        "design_seed": 0,
        "guide_labels": [],
        "text": "uniform design, 25% of each prompt's responses",
    }
    path = tmp_path / "old.db"
    Store.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute(
        "insert into benchmarks (id, title, selection_key, policy_key, per_prompt, oracle_key, "
        "simulated, origin, created_at, design) values ('b', 't', 's', 'p', 8, 'o', 1, 'built', "
        "'now', ?)",
        [json.dumps(old)],
    )
    conn.commit()
    conn.close()
    store = Store.open(path)
    try:
        design = store.items.benchmark("b").design
    finally:
        store.close()
    assert design == LabelDesignRecord("uniform", 0.25, None, (), 0, (), old["text"])
    assert design.as_json() == old


def test_a_damaged_design_column_names_the_db_and_the_column(tmp_path):
    path = tmp_path / "damaged.db"
    store = Store.open(path)
    store.items.add_benchmark(benchmark(None))
    store.close()
    conn = sqlite3.connect(path)
    conn.execute("update benchmarks set design = '{not json'")
    conn.commit()
    conn.close()
    store = Store.open(path)
    try:
        with pytest.raises(BadInput) as found:
            store.items.benchmark("b1")
    finally:
        store.close()
    message = str(found.value)
    assert message.startswith(f"{path}: benchmarks.design: database is corrupted")
    assert "\n" not in message
