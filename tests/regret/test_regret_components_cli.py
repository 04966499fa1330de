"""Synthetic proxies, the Bradley-Terry annotator, the regret-correlation plugin on the offline
world (a small version of recipes/regret.toml through the CLI), `rmaudit regret` and
`rmaudit correlate`."""

from __future__ import annotations

import json
import math
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from rmaudit.components import Prompt, Response
from rmaudit.metrics import correlate_across, permutation_p_values
from rmaudit.recipe import component_spec

ROWS = (
    "Pearson corr.",
    "Spearman corr.",
    "Kendall τ corr.",
    "accuracy",
    "Bo5",
    "BT-calibration ECE",
    "MRR",
    "NDCG",
    "ξ corr.",
    "accuracy-pair",
)


def build(kind, table, tmp_path=None):
    return component_spec(kind, table, field="test", file=None, base_dir=tmp_path).build()


def responses(count: int) -> list[tuple[Prompt, Response]]:
    prompt = Prompt("p", "How do I make tea?")
    return [
        (prompt, Response(f"r{i}", "p", i, f"answer number {i}: steep the leaves"))
        for i in range(count)
    ]


def gold_file(tmp_path: Path, values) -> dict:
    path = tmp_path / "gold.jsonl"
    path.write_text(
        "".join(
            json.dumps({"response_id": f"r{i}", "score": float(v)}) + "\n"
            for i, v in enumerate(values)
        )
    )
    return {"name": "scores-file", "path": str(path)}


def test_synthetic_proxy_is_gold_plus_keyed_noise(tmp_path):
    batch = responses(4000)
    gold_values = np.random.default_rng(0).normal(size=len(batch))
    gold = gold_file(tmp_path, gold_values)
    exact = build("reward_model", {"name": "synthetic-proxy", "gold": gold}, tmp_path)
    assert exact.score(batch) == pytest.approx(gold_values.tolist())
    noisy = build("reward_model", {"name": "synthetic-proxy", "gold": gold, "sigma": 2.0}, tmp_path)
    noise = np.array(noisy.score(batch)) - gold_values
    assert noise.std() == pytest.approx(2.0, rel=0.05) and abs(noise.mean()) < 0.1
    assert noisy.score(batch[:7]) == noisy.score(batch)[:7]  # the same whatever the batch
    flipped = build(
        "reward_model", {"name": "synthetic-proxy", "gold": gold, "flip": 1.0}, tmp_path
    )
    assert flipped.score(batch[:5]) == pytest.approx((-gold_values[:5]).tolist())
    lottery = build(
        "reward_model",
        {
            "name": "synthetic-proxy",
            "gold": gold,
            "loophole": "lottery",
            "loophole_rate": 0.1,
            "loophole_bonus": 5.0,
        },
        tmp_path,
    )
    bonus = np.array(lottery.score(batch)) - gold_values
    assert set(np.round(bonus, 9)) == {0.0, 5.0} and np.mean(bonus > 0) == pytest.approx(
        0.1, abs=0.02
    )
    assert noisy.key != exact.key  # options (and the gold's identity) key stored scores


@pytest.mark.parametrize("difference, beta", [(0.5, 0.5), (1.0, 0.5), (1.0, 2.0)])
def test_bt_annotator_prefers_like_bradley_terry(tmp_path, difference, beta):
    batch = responses(6000)
    gold_values = np.tile([0.0, difference], len(batch) // 2)  # pairs (2k, 2k + 1)
    annotator = build(
        "oracle",
        {"name": "bt-annotator", "gold": gold_file(tmp_path, gold_values), "beta": beta},
        tmp_path,
    )
    labels = np.array([label.score for label in annotator.label(batch)])
    prefers_better = labels[1::2] > labels[0::2]
    expected = 1 / (1 + math.exp(-difference / beta))  # Eq. 4
    standard_error = math.sqrt(expected * (1 - expected) / prefers_better.size)
    assert abs(prefers_better.mean() - expected) < 3 * standard_error


def stored(db: Path, metric: str) -> dict[str, tuple]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "select key, value, ci_low, ci_high, rm_key from metric_results where metric = ?",
            [metric],
        ).fetchall()
    finally:
        conn.close()
    assert {row[4] for row in rows} == {""}  # run-level results
    return {key: (value, low, high) for key, value, low, high, _ in rows}


def test_regret_recipe_family_accuracy_type_metrics_predict_regret(regret_db):
    study = stored(regret_db, "regret (N×N)")
    assert len(study) == 10 * 4 + 1  # Table 4's rows × 4 statistics, and the NDR summary
    for metric in ("accuracy", "kendall", "spearman", "pearson", "ndcg"):
        for statistic in ("pearson", "spearman"):
            value, low, high = study[f"{statistic}/{metric}"]
            assert value > 0.6 and low > 0.3 and low <= high, (metric, statistic, value, low)
    oracle = stored(regret_db, "regret (oracle gold)")
    assert oracle["spearman/accuracy"][0] > 0.6


def test_rmaudit_regret_prints_the_table_with_cis(rmaudit, regret_db, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # its widest layout: a cell's value and CI on a line
    result = rmaudit("regret", str(regret_db), "--pairs")
    assert result.code == 0, result.err
    out = result.out
    assert "regret (N×N): error metric vs policy regret (best-of-8 NDR)" in out
    assert "regret (oracle gold)" in out and "SIMULATED" in out
    for header in ("Kendall τ corr.", "Pearson corr.", "Spearman corr.", "MRR"):
        assert header in out
    for row in ROWS:
        line = next(x for x in out.splitlines() if x.startswith(f"│ {row} "))
        cells = re.findall(r"(-?\d\.\d{3}) \[(-?\d\.\d{2}), (-?\d\.\d{2})\]", line)
        assert len(cells) == 4, line
        for value, low, high in cells:  # every point estimate lies inside its interval
            assert float(low) - 0.005 <= float(value) <= float(high) + 0.005, line
    # the design and the Kendall / accuracy identity are stated under each table
    assert (
        out.count(
            "design held-out-responses: error metrics on a random half of each prompt's responses"
        )
        == 2
    )
    assert "Kendall τ and accuracy rows are identical" in out
    assert "gold = gold: proxies by best-of-8 NDR" in out
    assert "NDR if only Regressional Goodhart" in out
    assert "proxies per gold" not in out  # ten RMs: nine proxies each


def test_a_study_of_three_rms_says_its_correlations_cannot_tell_metrics_apart(
    rmaudit, write_recipe, tmp_path
):
    recipe = write_recipe(
        extra_rms='[[reward_models]]\nlabel = "weak"\nname = "simulated-rm"\n'
        "noise = 3.0\nseed = 3\n"
    )
    recipe.write_text(recipe.read_text() + '\n[[metrics]]\nname = "regret-correlation"\nn = 4\n')
    db = tmp_path / "three.db"
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    result = rmaudit("regret", str(db))
    assert result.code == 0, result.err
    note = " ".join(result.out.split())
    assert "2 proxies per gold: a correlation across 2 values is always ±1" in note


def test_rmaudit_regret_without_a_study_exits_2(rmaudit, write_recipe, tmp_path):
    db = tmp_path / "plain.db"
    assert rmaudit("run", str(write_recipe()), "--db", str(db)).code == 0
    result = rmaudit("regret", str(db))
    assert result.code == 2 and "run has no regret-correlation results" in result.err


def test_correlate_downstream_results(rmaudit, regret_db, tmp_path):
    conn = sqlite3.connect(regret_db)
    accuracy = dict(
        conn.execute(
            """select m.label, r.value from metric_results r join run_reward_models m
           on m.run_id = r.run_id and m.rm_key = r.rm_key where r.key = 'pairwise_accuracy'"""
        )
    )
    conn.close()
    labels = ["gold", "σ=0.5", "σ=2", "σ=8", "σ=0.5 + lottery loophole"]
    win_rate = [0.71, 0.66, 0.52, 0.40, 0.45]
    csv_path = tmp_path / "downstream.csv"
    csv_path.write_text(
        "rm,win_rate\n"
        + "".join(f"{label},{w}\n" for label, w in zip(labels, win_rate, strict=True))
    )
    result = rmaudit("correlate", str(regret_db), "--downstream", str(csv_path))
    assert result.code == 0, result.err
    line = next(x for x in result.out.splitlines() if x.startswith("│ pairwise-accuracy"))
    x = [accuracy[label] for label in labels]
    stats, p = correlate_across(x, win_rate), permutation_p_values(x, win_rate)
    for statistic in ("kendall", "pearson", "spearman"):
        assert f"{stats[statistic]:+.3f} (p={p[statistic]:.3g})" in line
    assert "exact" in result.out


@pytest.mark.parametrize(
    "body, message",
    [
        ("rm,win_rate\ngold,0.7\nnobody,0.5\nσ=2,0.4\n", "rm: RM label not in run"),
        ("rm,win_rate\ngold,0.7\nσ=2,0.4\n", "expected at least 3 RMs to correlate across, got 2"),
        (
            "rm,win_rate\ngold,0.7\nσ=2,high\nσ=8,0.1\n",
            ":3: win_rate: expected a number (got 'high')",
        ),
    ],
)
def test_correlate_bad_downstream_file_exits_2(rmaudit, regret_db, tmp_path, body, message):
    csv_path = tmp_path / "downstream.csv"
    csv_path.write_text(body)
    result = rmaudit("correlate", str(regret_db), "--downstream", str(csv_path))
    assert result.code == 2, result
    assert len(result.err.strip().splitlines()) == 1 and message in result.err, result.err


def test_regret_correlation_needs_three_rms(rmaudit, write_recipe, tmp_path):
    recipe = write_recipe()
    recipe.write_text(recipe.read_text() + '\n[[metrics]]\nname = "regret-correlation"\n')
    result = rmaudit("run", str(recipe), "--db", str(tmp_path / "two.db"))
    assert result.code == 2
    assert "metrics[4]" in result.err and "expected at least 3 reward models" in result.err
