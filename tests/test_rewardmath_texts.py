"""The texts of RewardMATH's solutions: found in the Hugging Face cache of the hub dataset
``RewardMATH/RewardMATH`` (a snapshot in the schema of the shared sample), not taken from a
sample that lacks problems; with them the ``length`` baseline audits beside the recorded
models.  And RewardBench's math subset, whose PRM results files carry their solutions' steps,
under the names the publisher's three shapes give its two solutions."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from _rewardmath import (
    CORRECT,
    INCORRECT,
    PROBLEMS,
    aggregate,
    classifier,
    direct_texts,
    hub_snapshot,
    publisher,
    rating,
    rewardbench,
    steps_of,
)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))


def audit(rmaudit, data: Path, db: Path, suite: str, *models: str):
    return rmaudit(
        "audit", *models, "--suite", suite, *(() if models else ("--recorded-judges",)),
        "--data-dir", str(data), "--db", str(db), "--json",
    )  # fmt: skip


def models_of(done) -> dict[str, dict]:
    (suite,) = json.loads(done.out)["suites"]
    return {m["label"]: m for m in suite["models"]}


def stored_texts(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("select id, text from responses"))


def test_texts_come_from_the_hub_cache_and_a_sample_is_not_used(rmaudit, tmp_path):
    data = tmp_path / "data"
    classifier(data, "ArmoRM", 1)
    rating(data, "gpt4", 3)
    sample = data / "rewardmath/dataset/benchmark/RewardMATH_direct.json"
    direct_texts(sample, range(2))  # the data folder's sample: 2 of the 12 problems
    done = audit(rmaudit, data, tmp_path / "a.db", "rewardmath")
    assert done.code == 0, done.err
    assert set(models_of(done)) == {"ArmoRM", "gpt4", "random"}  # no texts: no length
    assert "no texts" in done.err
    snapshot = hub_snapshot(tmp_path / "hub")
    direct_texts(snapshot / "RewardMATH_direct.json")
    (snapshot / "RewardMATH_pairwise.json").write_text("not read", encoding="utf-8")
    (snapshot / "dataset_info.json").write_text('{"features": {}}', encoding="utf-8")
    db = tmp_path / "b.db"
    done = audit(rmaudit, data, db, "rewardmath")
    assert done.code == 0, done.err
    models = models_of(done)
    assert set(models) == {"ArmoRM", "gpt4", "random", "length"}
    texts = set(stored_texts(db).values())
    names = [CORRECT, *INCORRECT]
    assert texts == {"\n".join(steps_of(i, j)) for i in range(PROBLEMS) for j in range(len(names))}
    # the length baseline: each solution's characters
    lengths = [[len("\n".join(steps_of(i, j))) for j in range(len(names))] for i in range(PROBLEMS)]
    strict = np.mean([s[0] > max(s[1:]) for s in lengths])
    assert models["length"]["metrics"]["acc"]["value"] == pytest.approx(strict)
    # a model that reads texts can be audited now; without them it is refused, named
    assert audit(rmaudit, data, tmp_path / "c.db", "rewardmath", "length").code == 0


def test_a_model_that_reads_texts_is_refused_without_them(rmaudit, tmp_path):
    data = tmp_path / "data"
    classifier(data, "ArmoRM", 1)
    db = tmp_path / "a.db"
    (tmp_path / "s.jsonl").write_text('{"prompt": "p", "response": "r", "score": 1}\n')
    done = rmaudit(
        "audit", f"scores:{tmp_path / 's.jsonl'}", "--suite", "rewardmath", "--data-dir",
        str(data), "--db", str(db),
    )  # fmt: skip
    assert done.code == 2 and "no texts of its solutions here" in done.err, done.err
    assert not db.exists()


def test_rewardbench_math_reads_every_shape_and_its_prm_files_texts(rmaudit, tmp_path):
    data = tmp_path / "data"
    files = rewardbench(data)
    done = audit(rmaudit, data, tmp_path / "a.db", "rewardbench-math")
    assert done.code == 0, done.err
    models = models_of(done)
    assert set(models) == {"ArmoRM", "beaver", "Math_Shepherd", "length", "random"}
    for label in ("ArmoRM", "beaver"):
        records = json.loads(gzip.decompress(files[label].read_bytes()))
        pairs = []
        for r in records:
            right = [n in (CORRECT, "chosen") for n in r["solution_reference"]].index(True)
            pairs.append((r["score"][right], [r["score"][1 - right]]))
        got = models[label]["publisher"]["overall"]
        assert {k: got[k] for k in ("accuracy", "accuracy_with_ties", "mrr")} == pytest.approx(
            publisher(pairs)
        )
    rows = json.loads(gzip.decompress(files["Math_Shepherd"].read_bytes()))
    by_problem = [rows[2 * i : 2 * i + 2] for i in range(PROBLEMS)]
    got = models["Math_Shepherd"]["publisher"]["aggregations"]["min"]
    pairs = [
        (
            aggregate(c["output"]["step_scores"], "min"),
            [aggregate(r["output"]["step_scores"], "min")],
        )
        for c, r in by_problem
    ]
    assert got["accuracy"] == pytest.approx(publisher(pairs)["accuracy"])
    # the length baseline reads the PRM file's steps: the chosen solution is the shorter here
    chosen = [len("\n".join(steps_of(i, 0))) for i in range(PROBLEMS)]
    rejected = [len("\n".join(steps_of(i, 4))) for i in range(PROBLEMS)]
    assert models["length"]["metrics"]["acc"]["value"] == pytest.approx(
        np.mean([c > r for c, r in zip(chosen, rejected, strict=True)])
    )
