"""``rmaudit ablation normalizer``: the RETA paper's Sec. 4.3 normalizer ablation on a tiny
stored run — an imported benchmark whose responses carry their perplexity under the policy,
and an RM whose scores come from a file."""

from __future__ import annotations

import csv
import json
import math
import sqlite3

import numpy as np
import pytest
from scipy import stats

from rmaudit.components.keys import prompt_id, response_id
from rmaudit.metrics import reta
from rmaudit.results.ablation import normalizer_ablation, response_perplexity
from rmaudit.store import Store

PROMPTS, N = 8, 8
POLICY, ORACLE = "policy-tiny", "oracle-tiny"


def write_run(tmp_path, rmaudit, *, perplexity: bool = True):
    """Prompt q: its responses' perplexities average 2 + q, and its oracle scores are scaled
    by 2^q (a prompt's scale grows with its perplexity, for every response alike).  The RM ranks
    responses by quality perfectly on even prompts and half-reversed on odd ones, so its
    per-prompt reliability does not depend on the prompt's scale."""
    rng = np.random.default_rng(0)
    lines = [
        json.dumps(
            {
                "format": "rmaudit-benchmark",
                "format_version": 1,
                "benchmark": {
                    "title": "tiny",
                    "policy_key": POLICY,
                    "oracle_key": ORACLE,
                    "simulated": False,
                },
            }
        )
    ]
    scores = []
    for q in range(PROMPTS):
        text = f"Question {q}?"
        ppl = 2.0 + q
        quality = rng.permutation(N) + 1.0
        responses = []
        for i in range(N):
            meta = {"perplexity": ppl + (0.5 if i % 2 else -0.5)} if perplexity else {}
            responses.append(
                {
                    "sample_index": i,
                    "text": f"answer {q}.{i}",
                    "meta": meta,
                    "label": {"score": 2.0**q * quality[i]},
                }
            )
            rank_signal = quality[i] if q % 2 == 0 else -abs(quality[i] - N / 2)
            scores.append(
                {
                    "response_id": response_id(POLICY, prompt_id(text), i),
                    "score": float(rank_signal),
                }
            )
        lines.append(json.dumps({"prompt": {"text": text}, "responses": responses}))
    (tmp_path / "bench.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores))
    (tmp_path / "recipe.toml").write_text(
        'title = "ablation"\n[benchmark]\nfile = "bench.jsonl"\n'
        '[[reward_models]]\nlabel = "filed"\nname = "scores-file"\npath = "scores.jsonl"\n'
        '[[metrics]]\nname = "reta"\neta = 0.25\n'
    )
    db = tmp_path / "run.db"
    result = rmaudit("run", str(tmp_path / "recipe.toml"), "--db", str(db))
    assert result.code == 0, result.err
    return db


def test_normalization_removes_the_correlation_with_prompt_perplexity(tmp_path, rmaudit):
    db = write_run(tmp_path, rmaudit)
    store = Store.open(db)
    conn = sqlite3.connect(db)
    try:
        result = normalizer_ablation(store)
        oracle, scores = [], []
        for pid in result.prompt_ids:
            rows = conn.execute(
                """select l.score, y.score from responses r
                   join oracle_labels l on l.response_id = r.id
                   join rm_scores y on y.response_id = r.id
                   where r.prompt_id = ? order by r.sample_index""",
                [pid],
            ).fetchall()
            oracle.append(np.array([j for j, _ in rows]))
            scores.append(np.array([y for _, y in rows]))
    finally:
        conn.close()
        store.close()
    assert result.eta == 0.25  # the run's RETA η
    assert result.perplexity == pytest.approx(2.0 + np.arange(PROMPTS))  # mean over responses
    [rm] = result.reward_models
    assert rm.label == "filed"
    # the per-prompt values are RETA's own, on and off
    assert rm.normalized == pytest.approx(reta(oracle, scores, 0.25).per_prompt)
    assert rm.unnormalized == pytest.approx(reta(oracle, scores, 0.25, normalize=False).per_prompt)
    assert rm.unnormalized == pytest.approx(rm.normalized * [np.mean(j) for j in oracle])
    for flag in (True, False):
        expected = stats.spearmanr(rm.per_prompt(flag), result.perplexity).statistic
        assert rm.correlations[(flag, "spearman")].statistic == pytest.approx(expected)
    # Sec. 4.3: raw top-quantile means follow the prompt's scale; normalized ones do not
    assert rm.correlations[(False, "spearman")].statistic > 0.9
    assert abs(rm.correlations[(True, "spearman")].statistic) < 0.5

    out_csv = tmp_path / "per-prompt.csv"
    shown = rmaudit("ablation", "normalizer", str(db), "--csv", str(out_csv))
    assert shown.code == 0, shown.err
    assert "RETA(1/4) per prompt vs prompt perplexity" in shown.out
    assert "filed" in shown.out and "Spearman" in shown.out
    with open(out_csv, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == PROMPTS
    assert [float(r["filed RETA unnormalized"]) for r in rows] == pytest.approx(rm.unnormalized)


def test_a_run_without_perplexities_or_rms_says_why(tmp_path, rmaudit):
    db = write_run(tmp_path, rmaudit, perplexity=False)
    result = rmaudit("ablation", "normalizer", str(db))
    assert result.code == 2 and "no stored perplexity" in result.err
    (tmp_path / "other").mkdir()
    db = write_run(tmp_path / "other", rmaudit)
    result = rmaudit("ablation", "normalizer", str(db), "--rm", "nope")
    assert result.code == 2 and "no such reward model" in result.err


def test_response_perplexity_of_multi_turn_answers_pools_their_tokens():
    assert response_perplexity({"perplexity": 3.0}) == 3.0
    assert response_perplexity({"logprob": -4.0, "new_tokens": 2}) == pytest.approx(math.e**2)
    both = {"perplexity": 9.0, "turn_logprobs": [-1.0, -5.0], "turn_new_tokens": [1, 2]}
    assert response_perplexity(both) == pytest.approx(math.exp(6 / 3))
    assert response_perplexity({"model": "m"}) is None
