"""Malformed PRMBench and ProcessBench files through ``rmaudit audit``: a line or file that is
not JSON, a row that is no object, a missing field, a label or step of the wrong type, an
empty solution — each exit code 2, one line naming the file (with its line or record), the
field and the value, and the DB absent or, holding an earlier audit of the same files before
the edit, byte-identical with the same rows."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _prm_data import write_prmbench, write_processbench
from _support import table_counts
from test_checked_first import refused, untouched

PRMBENCH_FILE = "prm800k_test_p1_4o_circular.jsonl.gz"
PROCESSBENCH_FILE = "gsm8k.json"


def prmbench_lines(change: Callable[[list[str]], list[str]]) -> Callable[[Path], None]:
    """An edit of PRMBench's circular file (p1), line by line."""

    def edit(data: Path) -> None:
        path = data / "prmbench" / PRMBENCH_FILE
        lines = gzip.decompress(path.read_bytes()).decode().splitlines()
        path.write_bytes(gzip.compress("".join(f"{line}\n" for line in change(lines)).encode()))

    return edit


def prmbench_row(change: Callable[[dict], object]) -> Callable[[Path], None]:
    """An edit of the second row of PRMBench's circular file (p1)."""

    def lines(found: list[str]) -> list[str]:
        row = json.loads(found[1])
        change(row)
        return [found[0], json.dumps(row), *found[2:]]

    return prmbench_lines(lines)


def processbench_text(change: Callable[[str], str]) -> Callable[[Path], None]:
    def edit(data: Path) -> None:
        path = data / "processbench" / PROCESSBENCH_FILE
        path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")

    return edit


def processbench_row(change: Callable[[dict], object]) -> Callable[[Path], None]:
    """An edit of ProcessBench's first gsm8k record."""

    def text(found: str) -> str:
        rows = json.loads(found)
        change(rows[0])
        return json.dumps(rows)

    return processbench_text(text)


P, Q = f"{PRMBENCH_FILE}:2: ", f"{PROCESSBENCH_FILE}:record 1: "
#: "suite: what is wrong" → the edit of the suite's files, what the refusal says
CASES: dict[str, tuple[Callable[[Path], None], tuple[str, ...]]] = {
    "prmbench: a line not JSON": (
        prmbench_lines(lambda lines: [lines[0], '{"idx": 3,', *lines[2:]]),
        (f"{P}invalid JSON",),
    ),
    "prmbench: a row not an object": (
        prmbench_lines(lambda lines: [lines[0], "[1, 2]", *lines[2:]]),
        (f"{P}expected a JSON object (got [1, 2])",),
    ),
    "prmbench: no steps field": (
        prmbench_row(lambda row: row.pop("modified_process")),
        (f"{P}modified_process: missing field",),
    ),
    "prmbench: no erroneous steps field": (
        prmbench_row(lambda row: row.pop("error_steps")),
        (f"{P}error_steps: missing field",),
    ),
    "prmbench: empty steps": (
        prmbench_row(lambda row: row.update(modified_process=[])),
        (f"{P}modified_process", "empty steps"),
    ),
    "prmbench: a step not text": (
        prmbench_row(lambda row: row.update(modified_process=[1, 2])),
        (f"{P}modified_process[0]: expected a string (got 1)",),
    ),
    "prmbench: labels a string": (
        prmbench_row(lambda row: row.update(error_steps="2")),
        (f"{P}error_steps: expected a list of whole numbers (got '2')",),
    ),
    "prmbench: a label a fraction": (
        prmbench_row(lambda row: row.update(error_steps=[1.5])),
        (f"{P}error_steps[0]: expected a whole number ≥ 1 (got 1.5)",),
    ),
    "processbench: a file not JSON": (
        processbench_text(lambda text: text[: len(text) // 2]),
        (f"{PROCESSBENCH_FILE}: invalid JSON",),
    ),
    "processbench: no problem field": (
        processbench_row(lambda row: row.pop("problem")),
        (f"{Q}problem: missing field",),
    ),
    "processbench: empty steps": (
        processbench_row(lambda row: row.update(steps=[])),
        (f"{Q}steps", "empty steps"),
    ),
    "processbench: label a string": (
        processbench_row(lambda row: row.update(label="3")),
        (f"{Q}label: expected a whole number ≥ -1 (got '3')",),
    ),
    "processbench: label past the steps": (
        processbench_row(lambda row: row.update(label=99)),
        (f"{Q}label", "(got 99)"),
    ),
    "processbench: answer flag not a bool": (
        processbench_row(lambda row: row.update(final_answer_correct="yes")),
        (f"{Q}final_answer_correct", "(got 'yes')"),
    ),
}


@pytest.fixture
def data(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_prmbench(tmp_path / "data")
    return write_processbench(tmp_path / "data")


def audit(rmaudit, data: Path, db: Path, suite: str):
    return rmaudit("audit", "random", "--suite", suite, "--data-dir", str(data), "--db", str(db))


@pytest.mark.parametrize("earlier", [False, True], ids=["new DB", "earlier DB"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_malformed_data_file_is_one_line_and_leaves_the_db_alone(
    rmaudit, data, tmp_path, case, earlier
):
    suite = case.split(":")[0]
    edit, needles = CASES[case]
    db = tmp_path / "audit.db"
    if earlier:
        assert audit(rmaudit, data, db, suite).code == 0
    check = untouched(db)
    counts = table_counts(db) if earlier else None
    edit(data)
    line = refused(audit(rmaudit, data, db, suite), *needles)
    assert line.startswith(f"Error: {data / suite}"), line
    check()
    assert (table_counts(db) if earlier else None) == counts
