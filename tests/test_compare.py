"""``rmaudit compare`` and the paired comparisons read back from stored runs
(rmaudit.results.comparison), checked against a recomputation from the stored items."""

from __future__ import annotations

import csv
import json
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from _support import run_small_audit
from test_audit import write_llmbar

from rmaudit.metrics.paired import paired_difference


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def scores_file(path: Path, pairs, right: set[int]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["prompt", "response", "score"])
        for i, (prompt, good, bad) in enumerate(pairs):
            writer.writerow([prompt, good, float(i in right)])
            writer.writerow([prompt, bad, float(i not in right)])
    return path


def compare_json(rmaudit, *args: str) -> dict:
    done = rmaudit("compare", *args, "--json")
    assert done.code == 0, done.err
    return json.loads(done.out)


def test_two_scores_files_in_two_runs_are_compared_pair_by_pair(rmaudit, tmp_path):
    data = tmp_path / "data"
    pairs = write_llmbar(data)
    good = scores_file(tmp_path / "good.csv", pairs, set(range(13)))
    poor = scores_file(tmp_path / "poor.csv", pairs, {0, 1, 2})
    for model in (good, poor):
        done = rmaudit(
            "audit", f"scores:{model}", "--suite", "llmbar", "--data-dir", str(data),
            "--db", "audit.db",
        )  # fmt: skip
        assert done.code == 0, done.err
    runs = [r[0] for r in sqlite3.connect("audit.db").execute("select id from runs")]
    assert len(runs) == 2
    body = compare_json(rmaudit, "audit.db", *runs, "--metric", "accuracy")
    (accuracy,) = body["comparisons"]
    assert accuracy["units"] == len(pairs)
    standings = [s["model"] for s in accuracy["standings"]]
    assert standings[0] == "good" and set(standings) == {"good", "poor", "length", "random"}
    pair = next(p for p in accuracy["pairs"] if (p["first"], p["second"]) == ("good", "poor"))
    credit_good = np.array([float(i < 13) for i in range(len(pairs))])
    credit_poor = np.array([float(i < 3) for i in range(len(pairs))])
    expected = paired_difference(credit_good, credit_poor)
    difference = credit_good - credit_poor
    assert pair["difference"] == pytest.approx(difference.mean(), abs=1e-12)
    assert pair["stderr"] == pytest.approx(difference.std(ddof=1) / np.sqrt(15), rel=1e-9)
    assert pair["p"] == pytest.approx(expected.p_value, rel=1e-9)
    assert pair["separable"] and pair["p_holm"] <= min(1.0, 6 * pair["p"]) + 1e-12
    best = accuracy["standings"][0]
    assert (best["letters"][0], best["rank_low"]) == ("a", 1)
    text = rmaudit("compare", "audit.db", *runs, "--metric", "accuracy")
    assert re.search(r"good +poor +\+0\.6667 ± ", text.out), text.out


def test_per_prompt_metrics_are_compared_on_their_stored_per_prompt_values(rmaudit, tmp_path):
    db = run_small_audit(tmp_path)
    body = compare_json(rmaudit, str(db), "--metric", "reta@0.25")
    (reta,) = body["comparisons"]
    conn = sqlite3.connect(db)
    rows = conn.execute(
        """select m.label, p.prompt_id, p.value from per_prompt_results p
           join run_reward_models m on m.run_id = p.run_id and m.rm_key = p.rm_key
           where p.key = 'reta@0.25' order by p.prompt_id"""
    ).fetchall()
    by_model: dict[str, dict[str, float]] = {}
    for label, prompt, value in rows:
        by_model.setdefault(label, {})[prompt] = value
    prompts = sorted(by_model["honest"])
    honest = np.array([by_model["honest"][p] for p in prompts])
    length = np.array([by_model["length"][p] for p in prompts])
    (pair,) = reta["pairs"]
    sign = 1 if pair["first"] == "honest" else -1
    assert pair["difference"] == pytest.approx(sign * (honest - length).mean(), rel=1e-12)
    assert pair["stderr"] == pytest.approx((honest - length).std(ddof=1) / np.sqrt(8), rel=1e-9)
    assert reta["unit"] == "prompts" and reta["units"] == 8


def test_compare_without_a_complete_run_says_so(rmaudit, tmp_path):
    db = run_small_audit(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute("update runs set status = 'failed'")
    conn.commit()
    conn.close()
    done = rmaudit("compare", str(db))
    assert done.code == 2 and "no complete run" in done.err


def test_what_compare_cannot_read_is_named_with_what_it_can(rmaudit, tmp_path):
    """An empty RUN (a prefix of every id) is refused, not read as the newest run; a second
    DB given as a RUN is named as one, with the way to compare its models; a --metric naming
    nothing stored lists the names stored, the whole numbers before the per-subset ones."""
    db = run_small_audit(tmp_path)
    other = tmp_path / "other.db"
    other.write_bytes(db.read_bytes())
    conn = sqlite3.connect(db)
    labels = [row[0] for row in conn.execute("select distinct label from metric_results")]
    conn.close()
    for argv, said in [
        ([""], "RUN: expected a run id or prefix (rmaudit runs lists them) (got '')"),
        (["  "], "RUN: expected a run id or prefix"),
        ([str(other)], "RUN: a DB file, not a run: rmaudit compare DB [RUN...] compares runs"),
        (["--metric", "X"], "--metric: no stored number of that name (stored: "),
    ]:
        done = rmaudit("compare", str(db), *argv)
        assert done.code == 2, (argv, done.err)
        (line,) = done.err.strip().splitlines()
        assert said in line, (argv, line)
    listed = line.split("(stored: ")[1].rsplit(") (got", 1)[0].split(", ")
    assert listed and set(listed) <= set(labels), (listed, labels)
    assert "RETA(1/4)" in listed


def test_report_skips_a_failed_run_and_says_which_it_wrote(rmaudit, tmp_path):
    pytest.importorskip("matplotlib")
    db = run_small_audit(tmp_path)
    conn = sqlite3.connect(db)
    (done_id,) = conn.execute("select id from runs").fetchone()
    # a newer run that failed (an empty leaderboard) must not become the default
    conn.execute(
        "insert into runs (id, title, status, created_at) values "
        "('ffff0000', 'failed', 'failed', '2999-01-01T00:00:00')"
    )
    conn.commit()
    conn.close()
    done = rmaudit("report", str(db), "--out", str(tmp_path / "out"))
    assert done.code == 0, done.err
    assert f"run {done_id}: the newest complete run" in done.err
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert done_id in text and "## Paired comparisons" in text


def test_rm_bench_groups_and_ranks_match_a_recomputation_from_the_stored_scores(
    rmaudit, tmp_path, monkeypatch
):
    sm = pytest.importorskip("statsmodels.api")
    from scipy import stats
    from test_audit_verdict import write_rm_bench

    write_rm_bench(tmp_path / "data")
    done = rmaudit(
        "audit", "length", "random", "--suite", "rm-bench", "--data-dir", str(tmp_path / "data")
    )
    assert done.code == 0, done.err
    # the leaderboard's letters and ranks, and where each pair's difference is
    assert "group" in done.out and "rank" in done.out and "rmaudit compare" in done.out
    body = compare_json(rmaudit, "rmaudit-audit.db", "--metric", "accuracy")
    (accuracy,) = body["comparisons"]
    conn = sqlite3.connect("rmaudit-audit.db")
    rows = conn.execute(
        """select m.label, s.position, p.prompt_id, c.score > r.score
           from runs u join pair_sets s on s.pair_set_key = u.pair_set_key
           join pairs p on p.id = s.pair_id join run_reward_models m on m.run_id = u.id
           join rm_scores c on c.rm_key = m.rm_key and c.response_id = p.chosen_id
           join rm_scores r on r.rm_key = m.rm_key and r.response_id = p.rejected_id
           order by s.position"""
    ).fetchall()
    credit = {label: np.array([float(x) for lab, _, _, x in rows if lab == label]) for label in
              ("length", "random")}  # fmt: skip
    prompts = [q for lab, _, q, _ in rows if lab == "length"]
    (pair,) = accuracy["pairs"]
    first, second = credit[pair["first"]], credit[pair["second"]]
    assert first.mean() >= second.mean()
    fit = sm.OLS(first - second, np.ones(first.size)).fit(
        cov_type="cluster", cov_kwds={"groups": np.unique(prompts, return_inverse=True)[1]}
    )
    clusters = len(set(prompts))
    assert (accuracy["units"], accuracy["clusters"]) == (first.size, clusters)
    # the runs list sizes a pair run by its pairs, not as "0 prompts" (its widest layout)
    monkeypatch.setenv("COLUMNS", "200")
    listing = rmaudit("runs", "rmaudit-audit.db")
    assert f"{first.size} pairs" in listing.out
    assert pair["difference"] == pytest.approx(fit.params[0], abs=1e-12)
    assert pair["stderr"] == pytest.approx(fit.bse[0], rel=1e-9)
    p = 2 * stats.t.sf(abs(fit.tvalues[0]), clusters - 1)
    assert pair["p_holm"] == pytest.approx(p, rel=1e-9)  # one pair: Holm leaves it
    standings = {s["model"]: s for s in accuracy["standings"]}
    if p < 0.05:
        assert standings[pair["first"]]["letters"] == "a"
        assert standings[pair["second"]]["letters"] == "b"
        assert [standings[pair["second"]]["rank_low"], standings[pair["second"]]["rank_high"]] == [
            2,
            2,
        ]
    else:
        assert {s["letters"] for s in standings.values()} == {"a"}
        assert all((s["rank_low"], s["rank_high"]) == (1, 2) for s in standings.values())


def test_runs_on_different_data_are_refused_naming_both(rmaudit, tmp_path):
    db = run_small_audit(tmp_path)
    write_llmbar(tmp_path / "data")
    done = rmaudit(
        "audit", "length", "--suite", "llmbar", "--data-dir", str(tmp_path / "data"),
        "--db", str(db),
    )  # fmt: skip
    assert done.code == 0, done.err
    runs = [r[0] for r in sqlite3.connect(db).execute("select id from runs")]
    refused = rmaudit("compare", str(db), *runs)
    assert refused.code == 2 and "audit different data" in refused.err
    assert all(run[:10] in refused.err for run in runs)


def test_plugins_describe_a_component_by_its_whole_first_paragraph(rmaudit):
    from rmaudit.default_plugins.calibration_metrics import Calibration

    first = Calibration.__doc__.strip().split("\n\n")[0]
    assert "\n" in first  # its first sentence wraps
    done = rmaudit("plugins", "--all", "--json")
    described = {
        name: text for r in json.loads(done.out) for name, text in r["descriptions"].items()
    }
    assert described["metric:calibration"] == " ".join(first.split())
