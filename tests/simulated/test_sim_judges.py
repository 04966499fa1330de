"""recipes/judges.toml: simulated pairwise judges with a known position bias, audited offline;
what the run stores and reports against the judges' own verdict probabilities."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from rmaudit.backends.simulated.pair_judge import SimulatedPairJudge

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "judges.toml"


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    from rmaudit.cli import main

    db = tmp_path_factory.mktemp("judges") / "judges.db"
    for _ in range(2):  # the second run finds every verdict stored
        with pytest.raises(SystemExit) as done:
            main(["run", str(RECIPE), "--db", str(db)])
        assert done.value.code == 0
    return db


def values(db: Path, label: str) -> dict[str, tuple[float, float]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "select m.key, m.value, m.stderr from metric_results m join run_reward_models r "
            "on r.rm_key = m.rm_key and r.run_id = m.run_id where r.label = ? "
            "and m.metric = 'judge-audit'",
            [label],
        ).fetchall()
    return {key: (value, stderr) for key, value, stderr in rows}


def test_each_pair_is_judged_once_in_each_order(judged):
    with sqlite3.connect(judged) as conn:
        pairs = conn.execute("select count(*) from pairs").fetchone()[0]
        by_judge = conn.execute(
            "select rm_key, count(*), count(distinct prompt_id || first_id || second_id) "
            "from judge_verdicts group by rm_key"
        ).fetchall()
    assert len(by_judge) == 2
    assert all(total == distinct == 2 * pairs for _, total, distinct in by_judge)


def test_the_position_bias_measured_is_the_judges_own(judged):
    """The expected share of first-shown verdicts, from each judge's verdict probabilities on
    the stored pairs in both orders, lies within 3 standard errors of the measured one."""
    with sqlite3.connect(judged) as conn:
        shown = conn.execute(
            "select p.text, a.text, b.text from judge_verdicts v join prompts p on p.id = "
            "v.prompt_id join responses a on a.id = v.first_id join responses b on "
            "b.id = v.second_id where v.rm_key = (select min(rm_key) from judge_verdicts)"
        ).fetchall()
    for label, bias in (("fair judge", 0.0), ("first-biased judge", 0.2)):
        judge = SimulatedPairJudge(position_bias=bias, tie_rate=0.05)
        first = np.array([judge.probabilities(*s)[0] for s in shown])
        expected = first.mean() / 0.95 - 0.5
        measured, stderr = values(judged, label)["position_bias"]
        assert abs(measured - expected) < 3 * stderr, (label, measured, expected, stderr)
    assert values(judged, "first-biased judge")["position_bias"][0] > 0.1
    fair = values(judged, "fair judge")["position_bias"]
    assert abs(fair[0]) < 3 * fair[1]


def test_the_probabilities_give_an_ece_and_the_rewardbench_spread(judged):
    found = values(judged, "fair judge")
    assert 0 <= found["judge_ece"][0] <= 1
    with sqlite3.connect(judged) as conn:
        params = conn.execute(
            "select params from metric_results where key = 'rewardbench_accuracy' limit 1"
        ).fetchone()[0]
    spread = json.loads(params)
    assert spread["seeds"] == 200 and spread["seed_min"] <= spread["seed_max"]
