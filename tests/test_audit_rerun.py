"""An audit rerun with nothing to do (``benchmarks/bench_audit_rerun.py`` times it): it prints
what the first run printed, reads every data file again (an edited record changes the result,
checked against brute force over the edited files), and a data file gone bad is still exit 2
with the DB byte-identical.  The mirror is made up here: LLMBar's layout (pairs) and
reward-bench's best-of-n layout (an imported benchmark); nothing reads the shared data."""

from __future__ import annotations

import gzip
import json
import statistics
from pathlib import Path

import pytest
from test_alpacaeval_source import brute_pairwise
from test_audit import LLMBAR_FOLDERS, brute_accuracy, write_llmbar
from test_audit_alpacaeval import BON, reward_bench_layout

SUITES = ("--suite", "llmbar", "--suite", "alpacaeval-bon16")


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    """The made-up mirror, audited once: (data folder, DB, the LLMBar pairs, the first run)."""
    monkeypatch.chdir(tmp_path)  # the audit's results file lands in the current folder
    data = tmp_path / "data"
    pairs = write_llmbar(data)
    reward_bench_layout(data)
    return data, tmp_path / "audit.db", pairs


def audit(rmaudit, data: Path, db: Path, *flags: str):
    return rmaudit(
        "audit", "length", "random", *SUITES, "--data-dir", str(data), "--db", str(db), *flags
    )


def metrics_of(result: dict, suite: str, model: str = "length") -> dict[str, float]:
    (found,) = [s for s in result["suites"] if s["suite"] == suite]
    (chosen,) = [m for m in found["models"] if m["label"] == model]
    return {name: cell["value"] for name, cell in chosen["metrics"].items()}


def test_an_idle_rerun_prints_what_the_first_run_printed(rmaudit, mirror):
    data, db, _ = mirror
    first = audit(rmaudit, data, db)
    assert first.code == 0, first.err
    again = audit(rmaudit, data, db)
    assert again.code == 0, again.err
    assert "new work: none" in again.err and "new work: 5 prompts" in first.err
    assert again.out == first.out
    third = audit(rmaudit, data, db, "--json")
    assert third.code == 0, third.err
    stored = json.loads(db.with_suffix(".results.json").read_text(encoding="utf-8"))
    assert json.loads(third.out) == stored


def test_an_edited_pair_record_is_read_again_and_changes_the_accuracy(rmaudit, mirror):
    data, db, pairs = mirror
    assert audit(rmaudit, data, db).code == 0
    before = metrics_of(json.loads(audit(rmaudit, data, db, "--json").out), "llmbar")
    assert before["accuracy"] == pytest.approx(brute_accuracy(pairs))
    # one record of one subset flips its label: the length RM's credit on it flips
    path = data / "llmbar" / "LLMBar" / LLMBAR_FOLDERS[0] / "dataset.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    records[0]["label"] = 3 - records[0]["label"]
    path.write_text(json.dumps(records), encoding="utf-8")
    edited = write_llmbar_pairs(data)
    assert brute_accuracy(edited) != brute_accuracy(pairs)
    after = audit(rmaudit, data, db, "--json")
    assert after.code == 0, after.err
    assert after.err.count("new work: none") == 1  # the other suite's
    assert metrics_of(json.loads(after.out), "llmbar")["accuracy"] == pytest.approx(
        brute_accuracy(edited)
    )


def write_llmbar_pairs(data: Path) -> list[tuple[str, str, str]]:
    """Every (prompt, chosen, rejected) of the mirror's LLMBar files as they are now."""
    pairs = []
    for folder in LLMBAR_FOLDERS:
        path = data / "llmbar" / "LLMBar" / folder / "dataset.json"
        for r in json.loads(path.read_text(encoding="utf-8")):
            good, bad = (r["output_1"], r["output_2"])[:: 1 if r["label"] == 1 else -1]
            pairs.append((r["input"], good, bad))
    return pairs


def test_an_edited_annotation_is_read_again_and_changes_the_pairwise_accuracy(rmaudit, mirror):
    data, db, _ = mirror
    assert audit(rmaudit, data, db).code == 0
    before = metrics_of(json.loads(audit(rmaudit, data, db, "--json").out), "alpacaeval-bon16")
    # the first annotation file's first record now prefers its output far more
    path = (
        data
        / BON
        / "annotations_ref_GPT35t"
        / ("tulu-2-dpo-13b.0.weighted_alpaca_eval_gpt4_turbo.annotations.json.gz")
    )
    rows = json.loads(gzip.decompress(path.read_bytes()))
    rows[0]["preference"] = 2.0 if rows[0]["preference"] < 1.5 else 1.0
    path.write_bytes(gzip.compress(json.dumps(rows).encode()))
    after = audit(rmaudit, data, db, "--json")
    assert after.code == 0, after.err
    assert after.err.count("new work: none") == 1  # the other suite's
    found = metrics_of(json.loads(after.out), "alpacaeval-bon16")
    pairwise = [brute_pairwise(rows) for rows in truth_of(data)]
    expected = statistics.fmean(p for p in pairwise if p is not None)
    assert found["pairwise acc"] == pytest.approx(expected, abs=1e-12)
    assert found["pairwise acc"] != pytest.approx(before["pairwise acc"], abs=1e-12)


def truth_of(data: Path) -> list[list[tuple[int, float]]]:
    """Per prompt, (length, preference) of each labelled output, read back from the files."""
    folder = data / BON
    labelled: dict[str, list[tuple[int, float]]] = {}
    for path in sorted((folder / "annotations_ref_GPT35t").iterdir()):
        for row in json.loads(gzip.decompress(path.read_bytes())):
            labelled.setdefault(row["instruction"], []).append(
                (len(row["output_2"]), row["preference"])
            )
    return list(labelled.values())


@pytest.mark.parametrize(
    "bad",
    [
        f"llmbar/LLMBar/{LLMBAR_FOLDERS[1]}/dataset.json",
        f"{BON}/annotations_ref_GPT35t/"
        "tulu-2-dpo-13b.1.weighted_alpaca_eval_gpt4_turbo.annotations.json.gz",
    ],
    ids=["pairs", "benchmark"],
)
def test_a_data_file_gone_bad_after_a_run_is_exit_2_and_the_db_unchanged(rmaudit, mirror, bad):
    data, db, _ = mirror
    assert audit(rmaudit, data, db).code == 0
    assert audit(rmaudit, data, db).code == 0  # idle: what the plan trusts is all stored
    before = db.read_bytes()
    path = data / bad
    text = b'[{"instruction": "cut short'
    path.write_bytes(gzip.compress(text) if path.name.endswith(".gz") else text)
    refused = audit(rmaudit, data, db)
    assert refused.code == 2, refused.err
    assert path.name in refused.err and len(refused.err.strip().splitlines()) == 1
    assert db.read_bytes() == before
