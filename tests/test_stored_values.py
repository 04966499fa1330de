"""A metric's value is one record both ways: the ``MetricValue`` a run stores in
``metric_results`` is what the store reads back, field for field — NaN as SQL NULL and back,
the ``higher_is_better`` that holds, and a reused result's rows copied under the new run."""

from __future__ import annotations

import math
import sqlite3
from dataclasses import fields, replace

import numpy as np

from rmaudit.components import RUN_LEVEL, MetricValue
from rmaudit.store import Store
from rmaudit.store.metric_results import MetricResults, ResultRows, StoredResults
from rmaudit.store.records import RunRow

STORED = (
    MetricValue(
        "accuracy",
        "accuracy",
        0.75,
        0.125,
        0.5,
        1.0,
        {"approximate": "few pairs", "subsets": ["a", "b"]},
        higher_is_better=True,
        rm_key="rm1",
        metric="pairs",
    ),
    # undefined: no value, no ± (NULL in SQL); an override of the metric's direction
    MetricValue(
        "fpr@95",
        "FPR@95",
        math.nan,
        params={"undefined": "one class"},
        higher_is_better=False,
        rm_key="rm1",
        metric="pairs",
    ),
    MetricValue("kendall", "Kendall τ", -0.25, 0.5, -1.0, 0.5, {}, None, True, RUN_LEVEL, "study"),
)


def _start(store: Store, run_id: str) -> None:
    store.runs.start(
        RunRow(
            run_id, "t", None, None, {}, None, None, "running", False,
            "2026-01-01T00:00:00", None, None, None, None,
        ),
        [],
    )  # fmt: skip


def _same(found: MetricValue, stored: MetricValue) -> None:
    for f in fields(MetricValue):
        a, b = getattr(found, f.name), getattr(stored, f.name)
        if isinstance(b, float) and math.isnan(b):
            assert isinstance(a, float) and math.isnan(a), f.name
        else:
            assert a == b, f.name


def _results(values: tuple[MetricValue, ...]) -> list[MetricResults]:
    owners = dict.fromkeys((v.rm_key, v.metric) for v in values)
    return [
        MetricResults(
            rm_key,
            metric,
            "digest",
            "2026-01-01T00:00:00",
            ResultRows(tuple(v for v in values if (v.rm_key, v.metric) == (rm_key, metric))),
        )
        for rm_key, metric in owners
    ]


def test_a_stored_value_is_read_back_as_it_was_written(tmp_path):
    store = Store.open(tmp_path / "values.db")
    try:
        _start(store, "run")
        store.runs.finish("run", _results(STORED), {}, "2026-01-01T00:00:01")
        found = store.read.metric_rows("run")
        assert len(found) == len(STORED)
        for value, stored in zip(found, STORED, strict=True):
            _same(value, stored)
        assert found[0].approximate == "few pairs" and found[0].undefined == ""
        assert found[1].undefined == "one class" and found[1].approximate == ""
    finally:
        store.close()
    conn = sqlite3.connect(tmp_path / "values.db")
    try:  # the column a NaN is stored in is NULL, the direction 0 or 1
        rows = conn.execute(
            "select run_id, key, value, stderr, higher_is_better from metric_results order by rowid"
        ).fetchall()
    finally:
        conn.close()
    assert rows == [
        ("run", "accuracy", 0.75, 0.125, 1),
        ("run", "fpr@95", None, None, 0),
        ("run", "kendall", -0.25, 0.5, 1),
    ]


def test_a_reused_value_is_read_back_under_the_new_run(tmp_path):
    store = Store.open(tmp_path / "values.db")
    try:
        _start(store, "first")
        store.runs.finish("first", _results(STORED), {}, "2026-01-01T00:00:01")
        _start(store, "second")
        reused = [
            replace(r, rows=ResultRows(), reused=StoredResults("first", r.computed_at))
            for r in _results(STORED)
        ]
        store.runs.finish("second", reused, {}, "2026-01-01T00:00:02")
        for value, stored in zip(store.read.metric_rows("second"), STORED, strict=True):
            _same(value, stored)
    finally:
        store.close()


def test_a_value_with_per_prompt_values_is_read_back_without_them(tmp_path):
    store = Store.open(tmp_path / "values.db")
    try:
        _start(store, "run")
        written = replace(STORED[0], per_prompt=np.array([1.0, 0.0]))
        store.runs.finish("run", _results((written,)), {}, "2026-01-01T00:00:01")
        (found,) = store.read.metric_rows("run")
        _same(found, STORED[0])
    finally:
        store.close()
