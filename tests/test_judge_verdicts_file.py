"""``rmaudit audit verdicts:FILE``: a judge's verdicts recorded elsewhere, imported by the
pairs' texts; bad files are one line, exit 2, nothing stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SUBSETS = (
    "Natural",
    "Adversarial/Neighbor",
    "Adversarial/GPTInst",
    "Adversarial/GPTOut",
    "Adversarial/Manual",
)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def write_llmbar(root: Path) -> list[tuple[str, str, str]]:
    pairs = []
    for subset in SUBSETS:
        records = [
            {
                "input": f"{subset} q{i}?",
                "output_1": f"ok {i}",
                "output_2": "a longer one " * (i + 1),
                "label": 1 + (i + len(subset)) % 2,
            }
            for i in range(3)
        ]
        path = root / "llmbar" / "LLMBar" / subset / "dataset.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(records))
        for r in records:
            good, bad = (r["output_1"], r["output_2"])[:: 1 if r["label"] == 1 else -1]
            pairs.append((r["input"], good, bad))
    return pairs


def longer_rows(pairs) -> list[dict]:
    rows = []
    for prompt, chosen, rejected in pairs:
        for a, b in ((chosen, rejected), (rejected, chosen)):
            verdict = "A" if len(a) > len(b) else "B" if len(b) > len(a) else "C"
            rows.append({"prompt": prompt, "answer_a": a, "answer_b": b, "verdict": verdict})
    return rows


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def audit(rmaudit, tmp_path, file: Path):
    db = tmp_path / "v.db"
    done = rmaudit(
        "audit",
        f"verdicts:{file}",
        "--suite",
        "llmbar",
        "--data-dir",
        str(tmp_path / "data"),
        "--db",
        str(db),
        "--json",
    )
    return done, db


def test_imported_verdicts_of_a_longer_answer_judge(rmaudit, tmp_path):
    pairs = write_llmbar(tmp_path / "data")
    file = write_rows(tmp_path / "longer.jsonl", longer_rows(pairs))
    done, _ = audit(rmaudit, tmp_path, file)
    assert done.code == 0, done.err
    models = {m["label"]: m for m in json.loads(done.out)["suites"][0]["models"]}
    judge = models["longer"]
    assert judge["judge"]["position_bias"]["value"] == 0.0
    assert judge["judge"]["consistency"]["value"] == 1.0
    assert judge["metrics"]["accuracy"]["value"] == models["length"]["metrics"]["accuracy"]["value"]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda rows: rows + [rows[0]], "the pair shown here is also on"),
        (lambda rows: rows[1:], "no row for the pair shown"),
        (
            lambda rows: rows + [{**rows[0], "prompt": "another question"}],
            "a row for a pair this suite does not have",
        ),
        (
            lambda rows: [{**rows[0], "verdict": "maybe"}] + rows[1:],
            "expected a verdict A, B, C or tie",
        ),
    ],
)
def test_a_bad_verdicts_file_is_one_line_and_nothing_is_stored(change, said, rmaudit, tmp_path):
    pairs = write_llmbar(tmp_path / "data")
    file = write_rows(tmp_path / "bad.jsonl", change(longer_rows(pairs)))
    done, db = audit(rmaudit, tmp_path, file)
    assert done.code == 2 and said in done.err, done.err
    assert len(done.err.strip().splitlines()) == 1
    assert not db.exists()
