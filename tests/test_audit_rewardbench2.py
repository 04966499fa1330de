"""``rmaudit audit --suite rewardbench-2``: a data file in RewardBench 2's schema under
--data-dir, the baselines' numbers against a hand computation and an independent reading of
reward-bench's formulas (tests/_rb2_data.py), the paired comparison and the verdict, and scores
from a file: rmaudit's items scored elsewhere, and a model's published per-item file."""

from __future__ import annotations

import json
import math
import socket
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from _rb2_data import DATA, reference_scores, write_rb2
from test_audit import write_llmbar

SUBSETS = ("Factuality", "Precise IF", "Math", "Safety", "Focus", "Ties")
#: the length baseline by hand (tests/_rb2_data.py's lengths): each best-of-4 subset has a row
#: alone at the top (1), a two-way tie (½), a three-way tie (⅓) and a miss (0)
LENGTH_BEST_OF_FOUR = (1 + 1 / 2 + 1 / 3 + 0) / 4
#: Ties by hand: question 1 both accurate, m_ci(ref) 4, m_ci(tied) 2, d_corr 2: no pref, margin
#: tanh(0); question 2 ref wrong (m_ci −5), tied accurate (m_ci 4, d_corr 0): pref, margin −1;
#: question 3 ref accurate (m_ci 10), tied wrong (m_ci −1, d_corr 3): margin tanh(−1/3 − 1)
LENGTH_TIES = (
    0.3 * 2 / 3 + 0.3 * 2 / 3 + 0.2 * 1 / 3 + 0.2 * 0 + 0.01 * (0 - 1 + math.tanh(-4 / 3)) / 3
)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the DB and its results file land here


@pytest.fixture
def rb2(tmp_path):
    data = tmp_path / "data"
    return data, write_rb2(data)


def audit_json(rmaudit, *args: str) -> dict:
    done = rmaudit("audit", *args, "--suite", "rewardbench-2", "--json")
    assert done.code == 0, done.err
    (suite,) = json.loads(done.out)["suites"]
    return suite


def numbers(suite: dict, label: str) -> dict[str, dict]:
    (model,) = [m for m in suite["models"] if m["label"] == label]
    return model["metrics"]


def test_the_baselines_numbers_match_the_hand_computation(rmaudit, rb2, tmp_path):
    data, rows = rb2
    db = tmp_path / "rb2.db"
    suite = audit_json(rmaudit, "length", "random", "--data-dir", str(data), "--db", str(db))
    length = numbers(suite, "length")
    for subset in SUBSETS[:5]:
        assert length[subset]["value"] == pytest.approx(LENGTH_BEST_OF_FOUR, abs=1e-12)
        assert length[subset]["n"] == 4
    assert length["Ties"]["value"] == pytest.approx(LENGTH_TIES, abs=1e-12)
    assert length["Ties"]["n"] == 3  # questions
    final = (5 * LENGTH_BEST_OF_FOUR + LENGTH_TIES) / 6
    assert length["score"]["value"] == pytest.approx(final, abs=1e-12)
    # the independent reading of reward-bench's scripts agrees, for both baselines
    assert reference_scores(rows, lambda _, c: len(c))["Ties"] == pytest.approx(LENGTH_TIES)
    random_scores = stored_scores(db, "random")
    expected = reference_scores(rows, lambda p, c: random_scores[(p, c)])
    for name, value in numbers(suite, "random").items():
        assert value["value"] == pytest.approx(expected[name], abs=1e-12), name
    # every number has its ±; the final's is the root sum of the subsets' squares over six
    ses = [length[s]["stderr"] for s in SUBSETS]
    assert all(se is not None and se >= 0 for se in ses)
    assert length["score"]["stderr"] == pytest.approx(math.sqrt(sum(se**2 for se in ses)) / 6)
    assert suite["chance"] == 0.25
    (comparison,) = [c for c in suite["comparisons"] if c["key"] == "rb2_score"]
    assert comparison["units"] == 5 * 4 + 3 and comparison["unit"] == "rows and questions"
    (pair,) = comparison["pairs"]
    assert pair["difference"] == pytest.approx(
        length["score"]["value"] - numbers(suite, "random")["score"]["value"]
    )


def stored_scores(db: Path, label: str) -> dict[tuple[str, str], float]:
    """(prompt, completion) → the score the run stored for ``label``."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "select p.text, r.text, s.score from rm_scores s"
            " join run_reward_models m on m.rm_key = s.rm_key and m.label = ?"
            " join responses r on r.id = s.response_id join prompts p on p.id = r.prompt_id",
            [label],
        ).fetchall()
    return {(p, r): score for p, r, score in rows}


def test_the_printed_audit_shows_every_number_with_its_pm_the_comparison_and_verdict(
    rmaudit, rb2, tmp_path
):
    data, _ = rb2
    done = rmaudit(
        "audit",
        "length",
        "random",
        "--suite",
        "rewardbench-2",
        "--data-dir",
        str(data),
        "--details",  # the subsets' table
    )
    assert done.code == 0, done.err
    for subset in SUBSETS:
        assert subset in done.out
    assert "RB2 score" in done.out and "±" in done.out
    # the leaderboard's letters and ranks are over the data's units: rows, and Ties' questions
    assert "paired over 23 rows and" in done.out and "rank: simultaneous" in done.out
    assert "rewardbench-2: a model passes by beating each of length" in done.out
    assert "chance 0.2500" in done.out


def test_items_written_come_back_as_a_scores_file(rmaudit, rb2, tmp_path):
    data, rows = rb2
    items = tmp_path / "items.jsonl"
    args = ("--data-dir", str(data), "--db", str(tmp_path / "rb2.db"))
    done = rmaudit("audit", "--suite", "rewardbench-2", *args, "--write-items", str(items))
    assert done.code == 0, done.err
    written = [json.loads(line) for line in items.read_text().splitlines()]
    completions = sum(len(r["chosen"]) + len(r["rejected"]) for r in rows)
    assert len(written) == completions  # one row per completion
    scored = tmp_path / "doubled.jsonl"
    scored.write_text(
        "".join(json.dumps({**w, "score": 2.0 * len(w["response"])}) + "\n" for w in written)
    )
    suite = audit_json(rmaudit, f"scores:{scored}", *args)
    doubled, length = numbers(suite, "doubled"), numbers(suite, "length")
    assert {k: v["value"] for k, v in doubled.items()} == {k: v["value"] for k, v in length.items()}


def published_file(path: Path, rows: list[dict], score, *, model: str) -> Path:
    """A reward-bench-2-results per-item file: reward-bench's columns, the first Factuality
    ids wrong (reward-bench #273) and the Ties rows' ``results`` a best-of-4 credit
    (reward-bench #255), the Ties rows moved last (a generative model's file)."""
    ordered = [r for r in rows if r["subset"] != "Ties"] + [
        r for r in rows if r["subset"] == "Ties"
    ]
    scores = [[score(r["prompt"], c) for c in [*r["chosen"], *r["rejected"]]] for r in ordered]
    ids = [r["id"] for r in ordered]
    first = next(i for i, r in enumerate(ordered) if r["subset"] == "Factuality")
    ids[first], ids[first + 1] = "30", "31"
    columns = {
        "id": ids,
        "subset": [r["subset"] for r in ordered],
        "num_correct": [r["num_correct"] for r in ordered],
        "scores": [[[s] for s in row] for row in scores],  # one-number lists, as some pipelines
        "results": [float(row[0] == max(row)) for row in scores],
        "text": [["..."] * len(row) for row in scores],
        "model": model,
        "model_type": "Seq. Classifier",
        "chat_template": "tokenizer",
    }
    path.write_text(json.dumps(columns), encoding="utf-8")
    return path


def test_published_per_item_files_are_audited_and_ranked(rmaudit, rb2, tmp_path):
    data, rows = rb2
    good = published_file(
        tmp_path / "good-rm.json",
        rows,
        lambda p, c: len(c) + (c in _correct(rows)) * 3,
        model="org/good-rm",
    )
    flat = published_file(tmp_path / "flat-rm.json", rows, lambda p, c: 1.0, model="org/flat-rm")
    args = ("--data-dir", str(data), "--db", str(tmp_path / "rb2.db"))
    suite = audit_json(rmaudit, f"rb2-scores:{good}", f"rb2-scores:{flat}", *args)
    for label, score in (
        ("good-rm", lambda p, c: len(c) + (c in _correct(rows)) * 3),
        ("flat-rm", lambda p, c: 1.0),
    ):
        expected = reference_scores(rows, score)
        for name, value in numbers(suite, label).items():
            assert value["value"] == pytest.approx(expected[name], abs=1e-12), (label, name)
            assert value["stderr"] is not None
    # an RM that scores everything alike: ¼ on every best-of-4 subset
    assert numbers(suite, "flat-rm")["Math"]["value"] == 0.25
    (comparison,) = [c for c in suite["comparisons"] if c["key"] == "rb2_score"]
    assert comparison["standings"][0]["model"] == "good-rm"
    assert {s["model"] for s in comparison["standings"]} >= {"good-rm", "flat-rm", "length"}


def _correct(rows: list[dict]) -> set[str]:
    return {c for r in rows for c in r["chosen"]}


def test_a_published_file_of_other_rows_is_one_line_and_exit_2(rmaudit, rb2, tmp_path):
    data, rows = rb2
    short = published_file(tmp_path / "short.json", rows[:-1], lambda p, c: 1.0, model="x")
    db = tmp_path / "rb2.db"
    done = rmaudit(
        "audit", f"rb2-scores:{short}", "--suite", "rewardbench-2", "--data-dir", str(data),
        "--db", str(db),
    )  # fmt: skip
    assert done.code == 2
    assert "5 rows of subset 'Ties', where the RewardBench 2 data has 6" in done.err
    assert len(done.err.strip().splitlines()) == 1 and not db.exists()


def test_rb2_scores_outside_the_suite_is_refused(rmaudit, rb2, tmp_path):
    data, rows = rb2
    write_llmbar(data)
    path = published_file(tmp_path / "p.json", rows, lambda p, c: 1.0, model="x")
    done = rmaudit("audit", f"rb2-scores:{path}", "--suite", "llmbar", "--data-dir", str(data))
    assert done.code == 2
    assert "rb2-scores:FILE holds RewardBench 2 scores: run it with --suite rewardbench-2" in (
        done.err
    )


def test_missing_data_offline_is_one_line_naming_data_dir_and_the_hub(
    rmaudit, tmp_path, monkeypatch
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    db, empty = tmp_path / "rb2.db", tmp_path / "empty"
    empty.mkdir()  # a folder without the suite's file (a folder that is not there is refused)
    done = rmaudit(
        "audit", "length", "--suite", "rewardbench-2", "--data-dir", str(empty),
        "--db", str(db),
    )  # fmt: skip
    assert done.code == 2
    (line,) = done.err.strip().splitlines()
    assert "--data-dir" in line and "hf.co/datasets/allenai/reward-bench-2" in line
    assert not db.exists()


def test_a_hub_that_cannot_be_reached_is_one_line_at_once_naming_data_dir(
    rmaudit, tmp_path, monkeypatch
):
    """A hub whose host accepts no connection (a port of 127.0.0.1 nothing listens on) is named
    after one probe, not after huggingface_hub's retries of its download (five, half a minute:
    each would print a line)."""
    constants = pytest.importorskip("huggingface_hub.constants")
    with socket.socket() as closed:  # a free port, closed again: nothing listens there
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    db = tmp_path / "rb2.db"
    done = rmaudit("audit", "length", "--suite", "rewardbench-2", "--db", str(db))
    assert done.code == 2, done.err
    (line,) = done.err.strip().splitlines()
    assert f"no download: 127.0.0.1:{port} cannot be reached" in line, line
    assert "then pass --data-dir DATA_DIR" in line and "Retrying" not in done.err
    assert not db.exists()


def test_without_pyarrow_the_parquet_extra_is_named(rmaudit, rb2, tmp_path, monkeypatch):
    data, _ = rb2
    monkeypatch.setitem(__import__("sys").modules, "pyarrow", None)
    monkeypatch.setitem(__import__("sys").modules, "pyarrow.parquet", None)
    db = tmp_path / "rb2.db"
    done = rmaudit(
        "audit", "length", "--suite", "rewardbench-2", "--data-dir", str(data), "--db", str(db)
    )
    assert done.code == 2
    (line,) = done.err.strip().splitlines()
    assert "pip install 'rmaudit[parquet]'" in line and str(data / DATA) in line
    assert not db.exists()


def test_a_results_file_of_rows_reads_as_its_columns_and_matching_counts_what_differs(
    rb2, tmp_path
):
    from rmaudit.benchmark.pairs.rewardbench2 import read_rewardbench2
    from rmaudit.benchmark.rb2_results import align, read_results

    _, rows = rb2
    columns = published_file(tmp_path / "c.json", rows, lambda p, c: float(len(c)), model="m")
    table = json.loads(columns.read_text())
    lines = tmp_path / "r.jsonl"
    names = ("id", "subset", "scores")
    lines.write_text(
        "".join(json.dumps({n: table[n][i] for n in names}) + "\n" for i in range(len(table["id"])))
    )
    (by_columns, model), (by_rows, _) = read_results(columns), read_results(lines)
    assert model == "m" and [r.scores for r in by_columns] == [r.scores for r in by_rows]
    # a data row that repeats another's prompt and completions, scored otherwise in the file:
    # each keeps its own scores, keyed by the place of its completions
    twin = {**rows[0], "id": "99"}
    data_file = tmp_path / "twin.jsonl"
    data_file.write_text(
        "".join(json.dumps(r) + "\n" for r in [*rows[:4], twin, *rows[4:]]), encoding="utf-8"
    )
    data = read_rewardbench2(data_file)
    shifted = [*by_columns]
    first = next(i for i, r in enumerate(by_columns) if r.subset == rows[0]["subset"])
    shifted.insert(first + 4, replace(by_columns[first], id="99", scores=(0.0, 0.0, 0.0, 0.0)))
    aligned = align(columns, shifted, model, data)
    assert len(aligned.ids_differing) == 2  # the file's 30 and 31 for 0 and 1, no row's ids
    original, copy = data.rows[0], data.rows[4]
    assert set(original.response_ids).isdisjoint(copy.response_ids)
    scores = aligned.table.values
    assert [scores[(rid,)] for rid in copy.response_ids] == [0.0] * 4
    lengths = [float(len(c)) for c in original.completions]
    assert [scores[(rid,)] for rid in original.response_ids] == lengths


def test_a_sample_draws_whole_rows_and_whole_ties_questions(rmaudit, rb2, tmp_path):
    data, _ = rb2
    db = tmp_path / "rb2.db"
    args = ("--data-dir", str(data), "--db", str(db), "--sample", "12")
    suite = audit_json(rmaudit, "length", *args)
    length = numbers(suite, "length")
    # 12 of the 23 units (20 rows, 3 Ties questions), each whole: nothing left out
    assert sum(m["n"] for k, m in length.items() if k != "score" and m["value"] is not None) == 12
    assert length["score"]["n"] == 12
    with sqlite3.connect(db) as conn:
        params = [json.loads(p) for (p,) in conn.execute("select params from metric_results")]
    assert params and not any("left_out" in p for p in params)


def test_the_suite_headlines_are_the_metric_keys():
    from rmaudit.components.vocabulary import RB2_SCORE, rb2_subset_key
    from rmaudit.metrics.rewardbench2 import SUBSETS as METRIC_SUBSETS
    from rmaudit.suites import SUITES

    first, *subsets = SUITES["rewardbench-2"].headlines
    assert (first.key, first.chance) == (RB2_SCORE, 0.25)
    assert [h.key for h in subsets] == [rb2_subset_key(s) for s in METRIC_SUBSETS]
    assert tuple(h.name for h in subsets) == SUBSETS == METRIC_SUBSETS


def test_the_printed_recipe_runs_with_the_same_numbers(rmaudit, rb2, tmp_path):
    data, _ = rb2
    printed = rmaudit(
        "audit", "length", "--suite", "rewardbench-2", "--data-dir", str(data), "--print-recipe"
    )
    assert printed.code == 0, printed.err
    assert 'name = "rewardbench-2"' in printed.out and "seed = 0" in printed.out
    recipe = tmp_path / "rb2.toml"
    recipe.write_text(printed.out, encoding="utf-8")
    ran = rmaudit("run", str(recipe), "--db", str(tmp_path / "by-recipe.db"))
    assert ran.code == 0, ran.err
    row = next(line for line in ran.out.splitlines() if line.startswith("│ length"))
    assert f"{(5 * LENGTH_BEST_OF_FOUR + LENGTH_TIES) / 6:.4f}" in row
