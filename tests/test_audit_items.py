"""``rmaudit audit --write-items FILE``: the texts a model must score for a suite, shifted
copies included, so that scores computed elsewhere from that file alone audit the suite.
Scored here by length, they must give exactly the ``length`` baseline's numbers."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest
from test_audit import write_llmbar

from rmaudit.benchmark.tabular import read_rows


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the audit's DB and results file land here


def write_hh(data: Path, pairs: int = 6) -> None:
    """Both HH test files, multi-turn dialogues whose last assistant turns differ."""
    for subset in ("helpful-base", "harmless-base"):
        path = data / "hh-rlhf" / subset / "test.jsonl.gz"
        path.parent.mkdir(parents=True)
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            for i in range(pairs):
                context = (
                    f"\n\nHuman: {subset} question {i}?\n\nAssistant: Which part?\n\nHuman: All"
                )
                record = {
                    "chosen": f"{context}\n\nAssistant: a careful answer with {i} words more",
                    "rejected": f"{context}\n\nAssistant: no" + " really" * (i % 3),
                }
                handle.write(json.dumps(record) + "\n")


def scored_by_length(items: Path, out: Path) -> Path:
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["prompt", "response", "score"])
        for _, row in read_rows(items):
            writer.writerow([row["prompt"], row["response"], len(row["response"])])
    return out


@pytest.mark.parametrize("name", ["items.csv", "items.jsonl.gz"])
def test_written_items_scored_elsewhere_reproduce_the_length_baseline(rmaudit, tmp_path, name):
    data = tmp_path / "data"
    write_hh(data)
    items = tmp_path / name
    wrote = rmaudit("audit", "--suite", "hh", "--data-dir", str(data), "--write-items", str(items))
    assert wrote.code == 0, wrote.err
    rows = [row for _, row in read_rows(items)]
    # every pair's two responses, unshifted and at the sweep's 15 levels × 3 targets, once each
    assert 12 * 2 < len({r["response_id"] for r in rows}) == len(rows) <= 12 * 2 * 46
    assert {r["suite"] for r in rows} == {"hh"}
    assert "\n\nHuman: helpful-base question 0?\n\nAssistant: Which part?\n\nHuman: All" in {
        r["prompt"] for r in rows
    }  # the shared context is the prompt, the diverging assistant turns the responses
    assert "a careful answer with 0 words more" in {r["response"] for r in rows}
    assert not (tmp_path / "rmaudit-audit.results.json").exists()  # nothing was audited
    scores = scored_by_length(items, tmp_path / "mine.csv")
    done = rmaudit("audit", f"scores:{scores}", "--suite", "hh", "--data-dir", str(data), "--json")
    assert done.code == 0, done.err
    (suite,) = json.loads(done.out)["suites"]
    models = {m["label"]: m["metrics"] for m in suite["models"]}
    for name_, metric in models["length"].items():
        assert models["mine"][name_]["value"] == pytest.approx(metric["value"]), name_


def test_items_of_several_suites_and_a_bad_file_name(rmaudit, tmp_path):
    data = tmp_path / "data"
    pairs = write_llmbar(data)
    write_hh(data)
    bad = rmaudit("audit", "--data-dir", str(data), "--write-items", str(tmp_path / "x.txt"))
    assert bad.code == 2 and "--write-items" in bad.err and "x.txt" in bad.err
    nowhere = rmaudit(
        "audit", "--data-dir", str(data), "--write-items", str(tmp_path / "no" / "x.csv")
    )
    assert nowhere.code == 2 and "no such folder" in nowhere.err
    assert not (tmp_path / "rmaudit-audit.db").exists()
    items = tmp_path / "all.jsonl"
    wrote = rmaudit(
        "audit",
        "--suite",
        "llmbar",
        "--suite",
        "hh",
        "--data-dir",
        str(data),
        "--write-items",
        str(items),
    )
    assert wrote.code == 0, wrote.err
    rows = [row for _, row in read_rows(items)]
    llmbar = {(r["prompt"], r["response"]) for r in rows if r["suite"] == "llmbar"}
    assert llmbar == {(p, text) for p, *responses in pairs for text in responses}
    with_model = rmaudit("audit", "length", "--data-dir", str(data), "--write-items", str(items))
    assert with_model.code == 2 and "--write-items" in with_model.err
