"""Provenance per component: the SIMULATED banner names exactly the simulated parts, and each
run stores where its prompts, responses, labels and scores came from (path + SHA-256)."""

from __future__ import annotations

import hashlib
import json

from rmaudit.results.run_index import open_for_reading
from rmaudit.results.summary import load_summary

BENCH = [
    {
        "prompt": f"Question {q}?",
        "responses": [f"answer {i} " * (i + 1) for i in range(4)],
        "oracle": [1.0 + ((q + i) % 4) / 4 for i in range(4)],
    }
    for q in range(4)
]


def write_bench(tmp_path):
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in BENCH))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(rmaudit, tmp_path, rms):
    recipe = tmp_path / "r.toml"
    recipe.write_text(
        '[benchmark]\nname = "benchmark-jsonl"\npath = "bench.jsonl"\n'
        + rms
        + '\n[[metrics]]\nname = "best-of-n"\nreport = [2]\n'
    )
    result = rmaudit("run", str(recipe), "--db", str(tmp_path / "a.db"))
    assert result.code == 0, result.err
    store = open_for_reading(str(tmp_path / "a.db"))
    try:
        (run_id,) = [row[0] for row in store.read.runs()]
        return result, load_summary(store, run_id), run_id
    finally:
        store.close()


def test_a_simulated_rm_on_real_labels_is_named_and_nothing_else(tmp_path, rmaudit):
    digest = write_bench(tmp_path)
    result, summary, run_id = run(
        rmaudit,
        tmp_path,
        '[[reward_models]]\nlabel = "sim"\n'
        'name = "simulated-rm"\n\n[[reward_models]]\nlabel = "len"\n'
        'name = "length"\n',
    )
    assert summary.simulated
    assert summary.simulated_notice == (
        "SIMULATED — responses: file bench.jsonl; oracle: labels "
        "file (oracle scores in bench.jsonl); RM sim: simulated; "
        "RM len: length"
    )
    assert summary.simulated_notice in " ".join(result.out.split())
    files = [(p.part, p.source.digest) for p in summary.sources if p.source.kind == "file"]
    assert files == [("responses", digest), ("oracle", digest)]
    shown = rmaudit("runs", run_id, "--db", str(tmp_path / "a.db")).out
    assert f"sha256:{digest}" in shown.replace("\n", "")


def test_no_banner_when_nothing_is_simulated(tmp_path, rmaudit):
    write_bench(tmp_path)
    (tmp_path / "s.jsonl").write_text(
        "".join(
            json.dumps({"prompt": r["prompt"], "response": t, "score": len(t)}) + "\n"
            for r in BENCH
            for t in r["responses"]
        )
    )
    result, summary, _ = run(
        rmaudit,
        tmp_path,
        '[[reward_models]]\nlabel = "mine"\n'
        'name = "scores-file"\npath = "s.jsonl"\nmatch = "text"\n',
    )
    assert not summary.simulated and summary.simulated_notice is None
    assert "SIMULATED" not in result.out and "imulated" not in result.out
    scores = [p for p in summary.sources if p.part == "RMs"]
    assert [(p.entry, p.source.location.endswith("s.jsonl")) for p in scores] == [("mine", True)]


def test_runs_json_holds_every_stored_metric_and_curve(tmp_path, rmaudit):
    import sqlite3

    write_bench(tmp_path)
    _, _, run_id = run(rmaudit, tmp_path, '[[reward_models]]\nlabel = "len"\nname = "length"\n')
    result = rmaudit("runs", run_id[:8], "--db", str(tmp_path / "a.db"), "--json")
    assert result.code == 0, result.err
    (found,) = json.loads(result.out)["runs"]
    with sqlite3.connect(tmp_path / "a.db") as con:
        stored = con.execute(
            "select key, value, stderr, ci_low, ci_high from metric_results order by key"
        ).fetchall()
        points = con.execute("select count(*) from curves").fetchone()[0]
    assert (
        sorted(
            (m["key"], m["value"], m["stderr"], m["ci_low"], m["ci_high"]) for m in found["metrics"]
        )
        == stored
    )
    assert {m["rm"] for m in found["metrics"]} == {"len"}
    assert sum(len(c["x"]) for c in found["curves"]) == points > 0
    assert [s["part"] for s in found["sources"]] == ["responses", "oracle", "RMs"]
