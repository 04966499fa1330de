"""A speed-up changes no stored number: the README's main job, cut small, writes the database
content the code wrote before (issue 50).

``expected_db.json`` holds what commit ``commit`` wrote for ``SMALL_RECIPE`` — every table,
every row, every value but when and where the run happened (``_db_dump.VOLATILE``), the run
key among them — recorded by ``record_reference.py`` before the speed-up it guards.  On the
recorded environment (machine, numpy, scipy, the kernels they chose for the CPU) every value
must be the same bit for bit; on another one every value but the floats still must, and the
floats to 1e-12 relative.
The full main job is compared the same way by ``benchmarks/bench_main_job.py``.

To regenerate (only for a change meant to alter stored content, never to make this pass
after a change that was not):

    git stash; python tests/reference/record_reference.py; git stash pop   # on the old code
"""

from __future__ import annotations

import math
import shutil
import sqlite3

import pytest
from _db_dump import differences, dump, same_environment
from _reference_runs import SMALL_RECIPE, recorded, run_small

RECORDED = recorded()
TABLES = RECORDED["small"]["tables"]


@pytest.fixture(scope="module")
def small_db(tmp_path_factory):
    return run_small(tmp_path_factory.mktemp("reference"))


def test_the_small_main_job_writes_the_recorded_content(small_db):
    assert RECORDED["small"]["recipe"] == SMALL_RECIPE, "not the recorded recipe: record anew"
    exact = same_environment(RECORDED["environment"])
    assert differences(TABLES, dump(small_db), exact) == []


def test_the_comparison_sees_one_last_bit_and_one_row(small_db, tmp_path):
    """The check itself can fail: one score moved to the next float, then a prompt removed,
    are each reported for their table (and only theirs, with the digests the edit deletes) —
    against this machine's own run, so that it holds on any CPU."""
    own = {name: table.as_json(with_floats=True) for name, table in dump(small_db).items()}
    db = tmp_path / "changed.db"
    shutil.copy(small_db, db)
    connection = sqlite3.connect(db)
    with connection:
        rm_key, response_id, score = connection.execute(
            "select rm_key, response_id, score from rm_scores limit 1"
        ).fetchone()
        connection.execute(
            "update rm_scores set score = ? where rm_key = ? and response_id = ?",
            (math.nextafter(score, math.inf), rm_key, response_id),
        )
    # the edit also deletes the digests of that RM's metrics and the run-level ones
    # (schema.M014), so the next run recomputes them
    assert [line.split(":")[0] for line in differences(own, dump(db), exact=True)] == [
        "metric_digests",
        "rm_scores",
    ]
    loosely = differences(own, dump(db), exact=False)  # the score within 1e-12 of the reference
    assert [line.split(":")[0] for line in loosely] == ["metric_digests"]
    with connection:
        connection.execute("delete from prompts where id = (select min(id) from prompts)")
    connection.close()
    lines = differences(own, dump(db), exact=True)
    assert [line.split(":")[0] for line in lines] == ["metric_digests", "prompts", "rm_scores"]
    assert lines[1] == "prompts: 11 rows, the reference has 12"
