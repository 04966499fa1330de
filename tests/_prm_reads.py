"""An audit of process reward models read back for the tests: the run's solution set and a
PRM's step scores from the DB, the suite's values from the results file, the one-line
refusal, and the suites' numbers recomputed by hand from the stored step scores
(scikit-learn's F1 for PRMBench's PRMScore, the QwenLM rule for ProcessBench's F1)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
from sklearn.metrics import f1_score

#: the suites' step threshold by default
THRESHOLD = 0.5


def stored(db: Path, sql: str, params=()) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def solution_positions(db: Path) -> list[tuple[str, str, dict, str]]:
    """(solution id, subset, labels, problem id) of the run's solution set, in order."""
    rows = stored(
        db,
        "select s.solution_id, s.subset, s.labels, s.problem_id from solution_sets s "
        "join runs r on r.solution_set_key = s.solution_set_key order by s.position",
    )
    return [(sid, subset, json.loads(labels), problem) for sid, subset, labels, problem in rows]


def step_scores(db: Path, label: str) -> dict[str, np.ndarray]:
    """Solution id → the step scores of the run's PRM ``label``, in step order."""
    rows = stored(
        db,
        "select st.solution_id, st.score from step_scores st join run_reward_models m "
        "on m.rm_key = st.prm_key where m.label = ? order by st.solution_id, st.step",
        [label],
    )
    found: dict[str, list[float]] = {}
    for sid, score in rows:
        found.setdefault(sid, []).append(score)
    return {sid: np.array(scores) for sid, scores in found.items()}


def suite_values(payload: dict) -> dict[str, dict[str, dict]]:
    """Model label → headline → its value, ± and unit, from one suite's results."""
    (suite,) = payload["suites"]
    return {m["label"]: m["metrics"] for m in suite["models"]}


def one_line_exit_2(result, *needles: str) -> None:
    assert result.code == 2, (result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.err, result.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def prmscore_by_hand(
    scores: dict[str, np.ndarray], kept: list[tuple[str, str, dict, str]], multi: bool
) -> float:
    """PRMBench's PRMScore of the positions ``kept``: ½·F1 on valid steps + ½·F1 on
    erroneous ones, a step predicted valid above the threshold (``multi``: F1 alone)."""
    valid = np.concatenate(
        [[i not in p[2]["erroneous"] for i in range(scores[p[0]].size)] for p in kept]
    )
    predicted = np.concatenate([scores[p[0]] > THRESHOLD for p in kept])
    f1 = f1_score(valid, predicted)
    return float(f1 if multi else 0.5 * f1 + 0.5 * f1_score(~valid, ~predicted))


def processbench_f1_by_hand(
    scores: dict[str, np.ndarray], kept: list[tuple[str, str, dict, str]]
) -> float:
    """ProcessBench's F1 of the positions ``kept`` (the QwenLM rule): the first step under
    the threshold is the prediction (−1: none); the harmonic mean of the accuracies on
    erroneous and on correct solutions."""
    flagged = [
        int(np.flatnonzero(scores[p[0]] < THRESHOLD)[0]) if np.any(scores[p[0]] < THRESHOLD) else -1
        for p in kept
    ]
    match = np.array([f == p[2]["first_error"] for f, p in zip(flagged, kept, strict=True)])
    error = np.array([p[2]["first_error"] != -1 for p in kept])
    acc1, acc2 = match[error].mean(), match[~error].mean()
    return float(2 * acc1 * acc2 / (acc1 + acc2) if acc1 + acc2 else 0.0)
