"""RM-Bench's easy / normal / hard accuracies compared between models on the paired difference,
checked against an independent recomputation from the raw RM-Bench records: each record's 3 ×
3 style pairs credited from the models' stored scores looked up by text, the level's pairs
selected by their styles in the record, and the difference's ± from statsmodels'
cluster-robust OLS by prompt.

The records repeat a response across styles (RM-Bench's do: a concise answer that is already
plain text), so one pair stands at two positions of the pair set with two styles: the store
keeps each position's style (schema 10), and a file stored before it says why it cannot compare
until the suite is rerun."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

LEVELS = {"easy": 1, "normal": 0, "hard": -1}  # sign of chosen style − rejected style


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def write_records(data: Path) -> list[dict]:
    """Six records per domain; in every other record the concise chosen answer repeats as the
    detailed one, and some prompts appear in two domains."""
    records = []
    for n, domain in enumerate(("chat", "code", "safety-refuse", "safety-response")):
        mine = []
        for i in range(6):
            chosen = [f"good {domain} {i} " + "x" * (k * 7 + (i * 5) % 11) for k in range(3)]
            if i % 2:
                chosen[1] = chosen[0]
            rejected = [f"bad {domain} {i} " + "y" * (k * 6 + (3 * n + i) % 13) for k in range(3)]
            prompt = f"prompt {i}" if i < 2 else f"{domain} prompt {i}"
            mine.append(
                {
                    "id": i,
                    "subset": domain,
                    "prompt": prompt,
                    "chosen": chosen,
                    "rejected": rejected,
                }
            )
        path = data / "rm-bench" / f"{domain}_filtered.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(mine), encoding="utf-8")
        records += mine
    return records


def stored_scores(db: str) -> dict[str, dict[tuple[str, str], float]]:
    """model label → (prompt, response text) → its stored score."""
    conn = sqlite3.connect(db)
    rows = conn.execute(
        """select m.label, q.text, r.text, s.score from run_reward_models m
           join rm_scores s on s.rm_key = m.rm_key join responses r on r.id = s.response_id
           join prompts q on q.id = r.prompt_id"""
    ).fetchall()
    conn.close()
    scores: dict[str, dict[tuple[str, str], float]] = {}
    for label, prompt, text, score in rows:
        scores.setdefault(label, {})[(prompt, text)] = score
    return scores


def level_credits(records, scores, level: str) -> tuple[np.ndarray, list[str]]:
    """Each pair of the level: 1 where the model scores chosen above rejected (a tie is a
    loss), with its prompt."""
    credit, prompts = [], []
    for record in records:
        for i, good in enumerate(record["chosen"]):
            for j, bad in enumerate(record["rejected"]):
                if np.sign(i - j) == LEVELS[level]:
                    key = record["prompt"]
                    credit.append(float(scores[(key, good)] > scores[(key, bad)]))
                    prompts.append(key)
    return np.array(credit), prompts


def compare(rmaudit, db: str) -> dict[str, dict]:
    done = rmaudit("compare", db, "--json", *(f"--metric=rm_bench_{level}" for level in LEVELS))
    assert done.code == 0, done.err
    return {c["key"]: c for c in json.loads(done.out)["comparisons"]}


def test_rm_bench_levels_are_paired_and_match_cluster_robust_ols(rmaudit, tmp_path):
    sm = pytest.importorskip("statsmodels.api")
    from scipy import stats

    records = write_records(tmp_path / "data")
    done = rmaudit(
        "audit", "length", "random", "--suite", "rm-bench", "--data-dir", str(tmp_path / "data")
    )
    assert done.code == 0, done.err
    scores = stored_scores("rmaudit-audit.db")
    found = compare(rmaudit, "rmaudit-audit.db")
    for level in LEVELS:
        result = found[f"rm_bench_{level}"]
        assert result["pairs"] is not None, result["note"]
        (pair,) = result["pairs"]
        first, prompts = level_credits(records, scores[pair["first"]], level)
        second, _ = level_credits(records, scores[pair["second"]], level)
        standings = {s["model"]: s["value"] for s in result["standings"]}
        assert standings[pair["first"]] == pytest.approx(first.mean(), abs=1e-12)
        assert standings[pair["second"]] == pytest.approx(second.mean(), abs=1e-12)
        groups = np.unique(prompts, return_inverse=True)[1]
        fit = sm.OLS(first - second, np.ones(first.size)).fit(
            cov_type="cluster", cov_kwds={"groups": groups}
        )
        clusters = len(set(prompts))
        assert (result["units"], result["clusters"]) == (first.size, clusters)
        assert pair["difference"] == pytest.approx(fit.params[0], abs=1e-12)
        assert pair["stderr"] == pytest.approx(fit.bse[0], rel=1e-9)
        p = 2 * stats.t.sf(abs(fit.tvalues[0]), clusters - 1)
        assert pair["p_holm"] == pytest.approx(p, rel=1e-9)  # one pair: Holm leaves it
        letters = {s["model"]: s["letters"] for s in result["standings"]}
        assert (letters[pair["first"]], letters[pair["second"]]) == (
            ("a", "b") if p < 0.05 else ("a", "a")
        )


def test_a_pair_set_stored_before_schema_10_gets_its_styles_on_the_next_run(rmaudit, tmp_path):
    write_records(tmp_path / "data")
    audit = ("audit", "length", "random", "--suite", "rm-bench", "--data-dir", "data")
    assert rmaudit(*audit).code == 0
    conn = sqlite3.connect("rmaudit-audit.db")
    conn.executescript(  # the file as schema 9 left it
        """alter table pair_sets drop column meta;
           drop table metric_digests;
           delete from _sqlite_migrations
            where name in ('m010_pair_set_meta', 'm011_metric_digests');
           update schema_info set schema_version = 9;"""
    )
    conn.close()
    old = compare(rmaudit, "rmaudit-audit.db")["rm_bench_easy"]  # read-only: not migrated
    assert old["pairs"] is None and "rerun the suite" in old["note"]
    assert rmaudit(*audit).code == 0
    assert compare(rmaudit, "rmaudit-audit.db")["rm_bench_easy"]["pairs"] is not None
