"""``rmaudit audit judge:MODEL --suite alpacaeval-bon16``: a rating judge over a real HTTP
server on 127.0.0.1 reports its correlation with the gold labels (``oracle-correlation``),
checked against scipy's Pearson correlation of the stored ratings and labels, each centred
within its prompt."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest
from _api_support import KEY_ENV
from scipy import stats
from test_audit_alpacaeval import reward_bench_layout


def stored(db) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per prompt, the gold labels and the judge's ratings, from the DB."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "select r.prompt_id, l.score, s.score from responses r"
            " join oracle_labels l on l.response_id = r.id"
            " join rm_scores s on s.response_id = r.id"
            " join run_reward_models m on m.rm_key = s.rm_key and m.label = 'judge:test-judge'"
        ).fetchall()
    by_prompt: dict[str, list[tuple[float, float]]] = {}
    for prompt, label, rating in rows:
        by_prompt.setdefault(prompt, []).append((label, rating))
    pools = [np.array(pairs, float) for pairs in by_prompt.values()]
    return [p[:, 0] for p in pools], [p[:, 1] for p in pools]


def test_a_rating_judge_reports_its_correlation_with_the_gold_labels(
    tmp_path, fake_openai, rmaudit, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # the DB and its results file land here
    data = tmp_path / "data"
    reward_bench_layout(data)
    server = fake_openai()
    db = tmp_path / "audit.db"
    done = rmaudit(
        "audit",
        "judge:test-judge",
        "--base-url",
        server.base_url,
        "--api-key-env",
        KEY_ENV,
        "--suite",
        "alpacaeval-bon16",
        "--data-dir",
        str(data),
        "--db",
        str(db),
        "--json",
    )
    assert done.code == 0, done.err
    (suite,) = json.loads(done.out)["suites"]
    (judge,) = [m for m in suite["models"] if m["label"] == "judge:test-judge"]
    found = judge["judge"]["oracle_correlation"]
    labels, ratings = stored(db)
    centred = [np.concatenate([a - a.mean() for a in arrays]) for arrays in (labels, ratings)]
    assert found["value"] == pytest.approx(stats.pearsonr(*centred).statistic, abs=1e-9)
    assert found["ci_low"] < found["value"] < found["ci_high"]
    assert found["prompts"] == len(labels)
