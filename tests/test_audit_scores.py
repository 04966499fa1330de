"""Scores computed elsewhere, in a file whose columns have other names: ``rmaudit audit
scores:FILE --columns ...`` maps them, and a missing column says which ones the file has."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from test_audit import brute_accuracy, write_llmbar


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the audit's DB and results file land here


def alpaca_style(path: Path, pairs) -> Path:
    """Each response scored by its length, under AlpacaEval-style column names."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["instruction", "output", "reward"])
        for prompt, *responses in pairs:
            for text in responses:
                writer.writerow([prompt, text, len(text)])
    return path


def test_a_missing_column_names_the_columns_found_and_writes_nothing(rmaudit, tmp_path):
    data = tmp_path / "data"
    scores = alpaca_style(tmp_path / "mine.csv", write_llmbar(data))
    done = rmaudit("audit", f"scores:{scores}", "--suite", "llmbar", "--data-dir", str(data))
    assert done.code == 2
    (line,) = done.err.strip().splitlines()
    assert f"{scores}:2" in line
    assert "no column 'prompt' (columns found: instruction, output, reward)" in line
    assert not (tmp_path / "rmaudit-audit.db").exists()
    assert not (tmp_path / "rmaudit-audit.results.json").exists()


def test_columns_map_a_files_own_names(rmaudit, tmp_path):
    data = tmp_path / "data"
    pairs = write_llmbar(data)
    scores = alpaca_style(tmp_path / "mine.csv", pairs)
    done = rmaudit(
        "audit",
        f"scores:{scores}",
        "--suite",
        "llmbar",
        "--data-dir",
        str(data),
        "--columns",
        "prompt=instruction, response=output,score=reward",
        "--json",
    )
    assert done.code == 0, done.err
    (suite,) = json.loads(done.out)["suites"]
    mine = next(m for m in suite["models"] if m["label"] == "mine")
    assert mine["metrics"]["accuracy"]["value"] == pytest.approx(brute_accuracy(pairs))


@pytest.mark.parametrize(
    ("columns", "shown"),
    [
        ("prompt=instruction,answer=output", "answer=output"),
        ("score", "score"),
        ("score=reward,,", "score=reward,,"),
    ],
)
def test_a_bad_columns_entry_is_one_line(rmaudit, tmp_path, columns, shown):
    data = tmp_path / "data"
    scores = alpaca_style(tmp_path / "mine.csv", write_llmbar(data))
    done = rmaudit(
        "audit",
        f"scores:{scores}",
        "--suite",
        "llmbar",
        "--data-dir",
        str(data),
        "--columns",
        columns,
    )
    assert done.code == 2
    (line,) = done.err.strip().splitlines()
    assert "--columns" in line and shown in line
    assert not (tmp_path / "rmaudit-audit.db").exists()


def test_columns_without_a_scores_file_is_refused(rmaudit, tmp_path):
    data = tmp_path / "data"
    write_llmbar(data)
    done = rmaudit(
        "audit", "length", "--suite", "llmbar", "--data-dir", str(data), "--columns", "score=reward"
    )
    assert done.code == 2 and "--columns" in done.err
