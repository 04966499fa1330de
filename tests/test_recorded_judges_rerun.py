"""A rerun of ``rmaudit audit --recorded-judges`` reads no recorded file it has read before —
the judges' verdicts are stored under keys that hold their files' digests, and each file's
publisher counts by its digest (``file_summaries``) — and prints what the first run printed;
an edited file is read again and changes the audit, and a run killed before it stored the
counts reads the files again and prints the same."""

from __future__ import annotations

import gzip
import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from _recorded import (
    LLMBAR_SUBSETS,
    judgebench_outputs,
    judgebench_pairs,
    llmbar_dataset,
    llmbar_winners,
    matches_statistics,
    write_evaluator,
)

from rmaudit.default_plugins import recorded_judges

JUDGES = ("Judge/Vanilla", "Other/CoT")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")


@pytest.fixture
def reads(monkeypatch) -> list[Path]:
    """Every recorded file a judge reads, as it reads it."""
    found: list[Path] = []
    llmbar, judgebench = recorded_judges.read_results, recorded_judges.read_outputs

    def read_results(path: Path):
        found.append(path)
        return llmbar(path)

    def read_outputs(path: Path, scores: bool = False):
        found.append(path)
        return judgebench(path, scores=scores)

    monkeypatch.setattr(recorded_judges, "read_results", read_results)
    monkeypatch.setattr(recorded_judges, "read_outputs", read_outputs)
    return found


def _llmbar(data: Path) -> dict[str, list]:
    records = llmbar_dataset(data)
    for judge, seed in zip(JUDGES, (0, 3), strict=True):
        for folder, _ in LLMBAR_SUBSETS:
            winners = llmbar_winners(records[folder], seed)
            write_evaluator(data, folder, judge, records[folder], winners)
    return records


def _judgebench(data: Path) -> None:
    pairs = judgebench_pairs(data)
    judgebench_outputs(data, pairs, "arena_hard", "judge-model")
    judgebench_outputs(data, pairs, "reward_model", "org_rm", scores=True)


def audit(rmaudit, data: Path, db: Path, suite: str, *args: str):
    flags = ["--recorded-judges", "--suite", suite, "--data-dir", str(data), "--db", str(db)]
    done = rmaudit("audit", *flags, *args)
    assert done.code == 0, done.err
    return done


def _without_db(text: str) -> dict:
    return {k: v for k, v in json.loads(text).items() if k != "db"}


@pytest.mark.parametrize(("suite", "files"), [("llmbar", 10), ("judgebench", 2)])
def test_a_rerun_reads_no_recorded_file_and_prints_the_same(suite, files, rmaudit, tmp_path, reads):
    data, db = tmp_path / "data", tmp_path / "a.db"
    (_llmbar if suite == "llmbar" else _judgebench)(data)
    first = audit(rmaudit, data, db, suite)
    assert len(set(reads)) == files
    reads.clear()
    again = audit(rmaudit, data, db, suite)
    as_json = audit(rmaudit, data, db, suite, "--json")
    assert again.out == first.out and reads == []
    fresh = audit(rmaudit, data, tmp_path / "b.db", suite, "--json")
    assert _without_db(as_json.out) == _without_db(fresh.out)


def test_an_edited_result_file_is_read_again_and_changes_the_audit(rmaudit, tmp_path, reads):
    data, db = tmp_path / "data", tmp_path / "a.db"
    records = _llmbar(data)
    before = _models(audit(rmaudit, data, db, "llmbar", "--json"))
    # the judge now right in both orders on every Natural pair
    right = [(str(r["label"]),) * 2 for r in records["Natural"]]
    edited = write_evaluator(data, "Natural", JUDGES[0], records["Natural"], right)
    reads.clear()
    after = _models(audit(rmaudit, data, db, "llmbar", "--json"))
    assert {p.parent.relative_to(data / "llmbar/LLMBar") for p in reads} == {
        Path(folder) / "evaluators" / JUDGES[0] for folder, _ in LLMBAR_SUBSETS
    }
    statistics = json.loads(gzip.decompress((edited.parent / "statistics.json.gz").read_bytes()))
    publisher = after[JUDGES[0]]["publisher"]["subsets"]
    assert matches_statistics(publisher["llmbar-natural"], statistics)
    assert publisher["llmbar-natural"]["accuracy"] == 1.0
    assert after[JUDGES[0]]["judge"]["judge_accuracy[llmbar-natural]"]["value"] == 1.0
    assert before[JUDGES[0]]["judge"]["judge_accuracy[llmbar-natural]"]["value"] < 1.0
    for folder, subset in LLMBAR_SUBSETS[1:]:
        assert publisher[subset] == before[JUDGES[0]]["publisher"]["subsets"][subset], folder
    assert after[JUDGES[1]]["publisher"] == before[JUDGES[1]]["publisher"]


def test_a_run_killed_before_it_stored_the_counts_reads_the_files_again(rmaudit, tmp_path, reads):
    data, db = tmp_path / "data", tmp_path / "a.db"
    _llmbar(data)
    first = audit(rmaudit, data, db, "llmbar")
    # what a run killed after it stored its verdicts and metrics, before the counts, leaves
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("delete from file_summaries")
    reads.clear()
    again = audit(rmaudit, data, db, "llmbar")
    assert again.out == first.out and len(set(reads)) == 10
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("select count(*) from file_summaries").fetchone() == (10,)
    reads.clear()
    assert audit(rmaudit, data, db, "llmbar").out == first.out and reads == []


def _models(done) -> dict[str, dict]:
    return {m["label"]: m for m in json.loads(done.out)["suites"][0]["models"]}
