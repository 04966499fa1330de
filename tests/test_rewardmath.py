"""``rmaudit audit --suite rewardmath --recorded-judges``: RewardMATH's recorded models (a
classifier, a rating judge, a PRM, a pairwise judge) audited from hand-built results files in
the publisher's layout; the publisher's figures equal its rule computed here from its
definition, and rmaudit's RETA and best-of-k equal a brute force over every subset."""

from __future__ import annotations

import json
import sqlite3
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from _rewardmath import (
    AGGREGATIONS,
    CORRECT,
    aggregate,
    best_of_k,
    classifier,
    pairwise,
    pairwise_scores,
    prm,
    publisher,
    rating,
    reta,
)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-hub-cache"))


def audit(rmaudit, data: Path, db: Path, suite: str, *args: str):
    return rmaudit(
        "audit",
        "--suite",
        suite,
        "--recorded-judges",
        "--data-dir",
        str(data),
        "--db",
        str(db),
        "--json",
        *args,
    )


def models_of(done) -> dict[str, dict]:
    (suite,) = json.loads(done.out)["suites"]
    return {m["label"]: m for m in suite["models"]}


def _figures(got: dict) -> dict[str, float]:
    return {k: got[k] for k in ("accuracy", "accuracy_with_ties", "mrr")}


def test_recorded_models_match_the_publishers_rule_and_rmaudits_estimators(rmaudit, tmp_path):
    data = tmp_path / "data"
    files = {
        "ArmoRM": classifier(data, "ArmoRM", 1, duplicate=True),
        "internlm2": classifier(data, "internlm2", 2),
        "gpt4": rating(data, "gpt4", 3),
        "Easy_to_hard": prm(data, "Easy_to_hard", 4),
        "gpt4_pairwise": pairwise(data, "gpt4", 5),
    }
    done = audit(rmaudit, data, tmp_path / "a.db", "rewardmath")
    assert done.code == 0, done.err
    models = models_of(done)
    assert set(models) == {*files, "random"}  # no texts here: no length baseline
    for label, path in files.items():
        records = json.loads(__import__("gzip").decompress(path.read_bytes()))
        got = models[label]["publisher"]
        assert got["name"] == "RewardMATH"
        if label == "Easy_to_hard":
            assert got["kind"] == "PRM" and "geometric_mean (the default)" in got["note"]
            for how in AGGREGATIONS:
                pairs = [
                    (aggregate(r["score"][0], how), [aggregate(s, how) for s in r["score"][1:]])
                    for r in records
                ]
                name = "product" if how == "prod" else how
                assert _figures(got["aggregations"][name]) == pytest.approx(publisher(pairs))
            scores = [[aggregate(s, "geometric_mean") for s in r["score"]] for r in records]
        elif label == "gpt4_pairwise":
            assert "position bias cannot be separated" in got["note"]
            pairs = [pairwise_scores(r) for r in records]
            assert _figures(got["overall"]) == pytest.approx(publisher(pairs))
            scores = [[c, *rest] for c, rest in pairs]
        else:
            pairs = [(r["score"][0], r["score"][1:]) for r in records]
            assert got["overall"]["problems"] == len(records)  # every record, duplicates too
            assert _figures(got["overall"]) == pytest.approx(publisher(pairs))
            scores = [r["score"] for r in records]
        _check_rmaudit(models[label], _distinct(records, scores))


def _distinct(records: list[dict], scores: list[list[float]]) -> list[list[float]]:
    """Each problem's scores once (the correct solution's first)."""
    seen: dict[str, list[float]] = {}
    for record, s in zip(records, scores, strict=True):
        seen.setdefault(record["problem"], s)
    return list(seen.values())


def _check_rmaudit(model: dict, scores: list[list[float]]) -> None:
    """RETA's curve, best-of-k, the one-to-many figures and the tie rate from brute force."""
    reta_points = model["curves"]["reta_curve"]["points"]
    assert [p["x"] for p in reta_points] == pytest.approx([k / 10 for k in range(1, 10)])
    for point in reta_points:
        per_problem = [reta(s, point["x"]) for s in scores]
        assert point["value"] == pytest.approx(np.mean(per_problem))
        assert point["stderr"] == pytest.approx(np.std(per_problem, ddof=1) / np.sqrt(len(scores)))
    bon = model["curves"]["bon_curve"]["points"]
    assert [p["x"] for p in bon] == pytest.approx(list(range(1, 11)))
    for point in bon:
        assert point["value"] == pytest.approx(
            np.mean([best_of_k(s, round(point["x"])) for s in scores])
        )
    assert model["metrics"]["RETA(1/10)"]["value"] == pytest.approx(reta_points[0]["value"])
    strict = [s[0] > max(s[1:]) for s in scores]
    ties = [s[0] >= max(s[1:]) for s in scores]
    metrics = model["metrics"]
    assert metrics["acc"]["value"] == pytest.approx(np.mean(strict))
    assert metrics["acc w/ tie"]["value"] == pytest.approx(np.mean(ties))
    assert metrics["tie rate"]["value"] == pytest.approx(np.mean(ties) - np.mean(strict))
    reciprocal = [1 / (1 + sum(x >= s[0] for x in s[1:])) for s in scores]
    assert metrics["MRR"]["value"] == pytest.approx(np.mean(reciprocal))
    pairwise_acc = [np.mean([(s[0] > x) + 0.5 * (s[0] == x) for x in s[1:]]) for s in scores]
    assert metrics["pairwise acc"]["value"] == pytest.approx(np.mean(pairwise_acc))
    alongside = model["publisher"]["rmaudit"]
    assert alongside["acc"] == pytest.approx(np.mean(strict))
    if np.mean(ties) > 0:
        assert alongside["of w/ tie: ties"] == pytest.approx(1 - np.mean(strict) / np.mean(ties))


def test_compare_prints_letters_and_rank_intervals_across_every_kind(rmaudit, tmp_path):
    data = tmp_path / "data"
    classifier(data, "ArmoRM", 1)
    rating(data, "gpt4", 3)
    prm(data, "Easy_to_hard", 4)
    pairwise(data, "gpt4", 5)
    db = tmp_path / "a.db"
    assert audit(rmaudit, data, db, "rewardmath").code == 0
    done = rmaudit("compare", str(db))
    assert done.code == 0, done.err
    for label in ("ArmoRM", "gpt4", "Easy_to_hard", "gpt4_pairwise", "random"):
        assert label in done.out
    assert "group" in done.out and "rank" in done.out and "#1" in done.out
    assert CORRECT not in done.err
    # the brief audit names the pairwise judge's one order and the PRM's aggregation
    brief = rmaudit(
        "audit", "--suite", "rewardmath", "--recorded-judges", "--data-dir", str(data),
        "--db", str(db),
    )  # fmt: skip
    assert brief.code == 0, brief.err
    out = " ".join(brief.out.split())
    assert "gpt4_pairwise: pairwise judge: one order per pair" in out
    assert "position bias cannot be separated from accuracy" in out
    assert "Easy_to_hard: PRM: rmaudit's figures under aggregation geometric_mean" in out


def test_a_run_killed_while_scoring_resumes_with_the_same_results(rmaudit, tmp_path):
    """Part of a model's scores stored, as a run killed in its scores stage leaves them: the
    rerun scores the rest (a results file's check sees only those) and prints the same."""
    data = tmp_path / "data"
    classifier(data, "ArmoRM", 1)
    prm(data, "Easy_to_hard", 4)
    db = tmp_path / "a.db"
    first = audit(rmaudit, data, db, "rewardmath")
    assert first.code == 0, first.err
    with sqlite3.connect(db) as conn:
        (rm_key,) = conn.execute(
            "select rm_key from run_reward_models where label = 'Easy_to_hard'"
        ).fetchone()
        conn.execute(
            "delete from rm_scores where rm_key = ? and response_id in (select response_id "
            "from rm_scores where rm_key = ? order by response_id limit 40)",
            [rm_key, rm_key],
        )
        assert (
            conn.execute("select count(*) from rm_scores where rm_key = ?", [rm_key]).fetchone()[0]
            == 80
        )
    again = audit(rmaudit, data, db, "rewardmath")
    assert again.code == 0, again.err
    assert "40 scores: Easy_to_hard" in again.err
    assert models_of(again) == models_of(first)


def test_the_tie_rate_is_lower_is_better_as_a_judges_is(rmaudit, tmp_path):
    data = tmp_path / "data"
    classifier(data, "ArmoRM", 1)
    rating(data, "gpt4", 3)
    done = audit(rmaudit, data, tmp_path / "a.db", "rewardmath")
    assert done.code == 0, done.err
    (suite,) = json.loads(done.out)["suites"]
    shown = rmaudit("runs", str(tmp_path / "a.db"), suite["run_id"], "--json")
    columns = json.loads(shown.out)["runs"][0]["leaderboard"]["columns"]
    direction = {c["label"]: c["higher_is_better"] for c in columns}
    assert direction["tie rate"] is False and direction["acc"] is True


def test_the_reta_tables_read_from_the_largest_eta_as_the_sparklines_do(rmaudit, tmp_path):
    """RewardMATH's η rise from 1/10 to 0.9 as stored; the audit's RETA curve table and
    report.md's both list them from the largest down, and the report says from where to
    where (not "from η = ½")."""
    data = tmp_path / "data"
    classifier(data, "ArmoRM", 1)
    rating(data, "gpt4", 2)
    db = tmp_path / "a.db"
    done = rmaudit(
        "audit", "--suite", "rewardmath", "--recorded-judges", "--data-dir", str(data),
        "--db", str(db), "--report", str(tmp_path / "report"),
    )  # fmt: skip
    assert done.code == 0, done.err
    conn = sqlite3.connect(db)
    etas = sorted({x for (x,) in conn.execute("select x from curves where key = 'reta_curve'")})
    conn.close()

    def shown(line: str, prefix: str) -> list[float]:
        return [float(Fraction(cell.split()[0])) for cell in line.split(prefix)[1:]]

    (header,) = [line for line in done.out.splitlines() if "η=" in line]
    table = shown(header, "η=")
    assert table == sorted(table, reverse=True) and (table[0], table[-1]) == (etas[-1], etas[0])
    markdown = (tmp_path / "report" / "rewardmath" / "report.md").read_text(encoding="utf-8")
    section = markdown.split("## RETA curve")[1]
    assert "from η = 0.9 to 1/10" in section
    assert "The RETA curve runs from η = 0.9 to 1/10." in markdown  # its legend
    (row,) = [line for line in section.splitlines() if line.startswith("| reward model |")]
    listed = shown(row.replace("|", " "), "η = ")
    assert listed == sorted(listed, reverse=True) and (listed[0], listed[-1]) == (0.9, 0.1)
