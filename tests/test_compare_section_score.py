"""The section score compared between models on the paired difference: its value, ± and p
against an independent computation from the stored scores — the textbook stratified estimator
(Cochran 1977, Theorem 5.3) written out per subset: D = Σ_k v_k (acc_k(A) − acc_k(B)) with
var(D) = Σ_k v_k² s_k² / n_k, s_k² the variance of the pairs' credit differences in subset k,
and Student's t with n − (number of subsets) degrees of freedom."""

from __future__ import annotations

import json
import sqlite3
import textwrap

import numpy as np
import pytest

#: subset → pairs; "e" is in no section, so it weighs nothing
SIZES = {"a": 12, "b": 7, "c": 15, "d": 9, "e": 5}
RECIPE = """
title = "sections"
[pairs.source]
name = "pairs-file"
path = "pairs.jsonl"
subset = "subset"
[[reward_models]]
label = "honest"
name = "simulated-rm"
[[reward_models]]
label = "length-biased"
name = "simulated-rm"
bias = "length"
seed = 1
[[metrics]]
name = "pair-accuracy"
[[metrics]]
name = "section-score"
sections = { Chat = { a = 3, b = 1 }, Safety = ["c", "d"] }
weights = { Safety = 2 }
"""


def write_pairs(path) -> list[dict]:
    rng = np.random.default_rng(3)
    records = [
        {
            "subset": subset,
            "prompt": f"question {subset} {i}",
            "chosen": f"good answer {subset} {i} " + "w " * int(rng.integers(1, 30)),
            "rejected": f"poor answer {subset} {i} " + "z " * int(rng.integers(1, 30)),
        }
        for subset, size in SIZES.items()
        for i in range(size)
    ]
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    return records


def test_the_section_score_is_paired_within_its_subsets(rmaudit, tmp_path, monkeypatch):
    from scipy import stats

    monkeypatch.chdir(tmp_path)
    records = write_pairs(tmp_path / "pairs.jsonl")
    (tmp_path / "recipe.toml").write_text(textwrap.dedent(RECIPE), encoding="utf-8")
    done = rmaudit("run", "recipe.toml", "--db", "s.db")
    assert done.code == 0, done.err
    compared = rmaudit("compare", "s.db", "--metric", "section_score", "--json")
    assert compared.code == 0, compared.err
    (result,) = json.loads(compared.out)["comparisons"]
    assert result["pairs"] is not None, result["note"]
    (pair,) = result["pairs"]

    conn = sqlite3.connect("s.db")
    scores: dict[str, dict[str, float]] = {}
    for label, text, score in conn.execute(
        """select m.label, r.text, s.score from run_reward_models m
           join rm_scores s on s.rm_key = m.rm_key join responses r on r.id = s.response_id"""
    ):
        scores.setdefault(label, {})[text] = score
    stored = dict(
        conn.execute(
            """select m.label, x.value from metric_results x join run_reward_models m
               on m.run_id = x.run_id and m.rm_key = x.rm_key where x.key = 'section_score'"""
        ).fetchall()
    )
    conn.close()

    def credits(label: str, subset: str) -> np.ndarray:
        mine = scores[label]
        return np.array(
            [
                float(mine[r["chosen"]] > mine[r["rejected"]])
                for r in records
                if r["subset"] == subset
            ]
        )

    n = SIZES
    coefficient = {
        "a": 1 / 3 * 3 / 4,
        "b": 1 / 3 * 1 / 4,
        "c": 2 / 3 * n["c"] / (n["c"] + n["d"]),
        "d": 2 / 3 * n["d"] / (n["c"] + n["d"]),
        "e": 0.0,
    }
    first, second = pair["first"], pair["second"]
    for label in (first, second):
        score = sum(v * credits(label, k).mean() for k, v in coefficient.items())
        assert score == pytest.approx(stored[label], abs=1e-12)
    differences = {k: credits(first, k) - credits(second, k) for k in SIZES}
    value = sum(v * differences[k].mean() for k, v in coefficient.items())
    variance = sum(v**2 * differences[k].var(ddof=1) / n[k] for k, v in coefficient.items())
    assert pair["difference"] == pytest.approx(value, abs=1e-12)
    assert pair["stderr"] == pytest.approx(np.sqrt(variance), rel=1e-9)
    p = 2 * stats.t.sf(abs(value) / np.sqrt(variance), sum(n.values()) - len(n))
    assert pair["p_holm"] == pytest.approx(p, rel=1e-9)
    assert (result["units"], result["clusters"]) == (sum(n.values()), sum(n.values()))


def test_the_stratified_stderr_centres_each_subset_on_its_own_mean():
    """Against the formula written out stratum by stratum, cluster by cluster; with one
    stratum it is the cluster-robust standard error; a stratum of one cluster whose values
    vary makes it undefined."""
    from rmaudit.metrics.paired import stratified_stderr
    from rmaudit.metrics.preference.accuracy import clustered_stderr

    rng = np.random.default_rng(5)
    values = rng.normal(size=60) + np.repeat([0.0, 2.0, -1.0], 20)
    strata = np.repeat(["x", "y", "z"], 20)
    clusters = rng.integers(0, 7, size=60)
    total = 0.0
    for h in "xyz":
        inside = strata == h
        centred = values[inside] - values[inside].mean()
        sums = [centred[clusters[inside] == c].sum() for c in np.unique(clusters[inside])]
        total += len(sums) / (len(sums) - 1) * sum(s * s for s in sums)
    assert stratified_stderr(values, strata, clusters) == pytest.approx(np.sqrt(total) / 60)
    assert stratified_stderr(values, ["x"] * 60, clusters) == pytest.approx(
        clustered_stderr(values, clusters)
    )
    assert np.isnan(stratified_stderr(np.array([1.0, 2.0, 3.0]), ["a", "b", "b"], [0, 1, 1]))
    # a stratum of one value has nothing to vary: b's two clusters give √(2·(¼ + ¼)) / 3
    assert stratified_stderr(np.array([1.0, 2.0, 3.0]), ["a", "b", "b"], [0, 1, 2]) == (
        pytest.approx(1 / 3)
    )
