"""Judges ranked like RMs: three recorded judges and the length baseline audited on a small
LLMBar-shaped suite, compared pair by pair (``rmaudit compare``, the leaderboard, the audit's
verdict), checked against an independent computation — each pair's credit from the verdict
rows and the texts by hand, the paired t-test by scipy, Holm's adjustment, the letters and the
rank intervals written out here."""

from __future__ import annotations

import json
import re
import sqlite3
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from test_judge_verdicts_file import SUBSETS, write_rows

#: pairs per LLMBar subset
PER_SUBSET = 12
ALPHA = 0.05


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def write_suite(root: Path) -> list[tuple[str, str, str]]:
    """LLMBar's five subset files, PER_SUBSET pairs each, lengths varied so that the length
    baseline is right on some pairs and wrong on others (never tied)."""
    pairs = []
    for s, subset in enumerate(SUBSETS):
        records = []
        for i in range(PER_SUBSET):
            good = f"good {s}.{i} " + "g" * ((i * 7 + s) % 11 + 1)
            bad = f"bad {s}.{i} " + "b" * ((i * 5 + 2 * s) % 13 + 1)
            if len(good) == len(bad):
                bad += "!"
            label = 1 + (i + s) % 2
            first, second = (good, bad) if label == 1 else (bad, good)
            records.append({"input": f"{subset} q{i}?", "output_1": first, "output_2": second,
                            "label": label})  # fmt: skip
            pairs.append((f"{subset} q{i}?", good, bad))
        path = root / "llmbar" / "LLMBar" / subset / "dataset.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(records), encoding="utf-8")
    return pairs


#: each judge's verdict on pair n (in the suite's order) shown chosen first, and rejected
#: first: "chosen", "rejected" or "tie" (which answer it prefers)
JUDGES = {
    "sharp": lambda n: (
        ("rejected", "rejected") if n % 7 == 0 else ("chosen", "tie" if n % 11 == 0 else "chosen")
    ),
    "first": lambda n: ("chosen", "rejected"),  # always answers A: whatever is shown first
    "noisy": lambda n: (
        "chosen" if (n * 37) % 10 < 6 else "rejected",
        "chosen" if (n * 53) % 10 < 5 else "tie",
    ),
}
CREDIT = {"chosen": 1.0, "tie": 0.5, "rejected": 0.0}
MARK = {"chosen": ("A", "B"), "rejected": ("B", "A"), "tie": ("C", "C")}


def verdict_rows(pairs, judge) -> list[dict]:
    rows = []
    for n, (prompt, chosen, rejected) in enumerate(pairs):
        in_order, swapped = JUDGES[judge](n)
        rows.append({"prompt": prompt, "answer_a": chosen, "answer_b": rejected,
                     "verdict": MARK[in_order][0]})  # fmt: skip
        rows.append({"prompt": prompt, "answer_a": rejected, "answer_b": chosen,
                     "verdict": MARK[swapped][1]})  # fmt: skip
    return rows


def credits(pairs) -> dict[str, np.ndarray]:
    """Each model's credit on each pair, by hand: a judge's mean over its two orders (a tie
    ½), the length baseline's 1 where the chosen answer is longer."""
    found = {
        judge: np.array([np.mean([CREDIT[v] for v in JUDGES[judge](n)]) for n in range(len(pairs))])
        for judge in JUDGES
    }
    found["length"] = np.array([float(len(c) > len(r)) for _, c, r in pairs])
    return found


@pytest.fixture
def audited(rmaudit, tmp_path):
    pairs = write_suite(tmp_path / "data")
    models = [
        f"verdicts:{write_rows(tmp_path / f'{judge}.jsonl', verdict_rows(pairs, judge))}"
        for judge in JUDGES
    ]
    done = rmaudit("audit", *models, "--suite", "llmbar", "--data-dir", str(tmp_path / "data"),
                   "--db", "judges.db", "--json")  # fmt: skip
    assert done.code == 0, done.err
    return pairs, json.loads(done.out)


def holm(p: list[float]) -> list[float]:
    order = np.argsort(p, kind="stable")
    adjusted, running = [0.0] * len(p), 0.0
    for i, index in enumerate(order):
        running = max(running, min(1.0, (len(p) - i) * p[index]))
        adjusted[index] = running
    return adjusted


def test_judges_and_length_are_ranked_on_their_headlines_pair_by_pair(rmaudit, audited):
    from scipy import stats

    pairs, _ = audited
    body = json.loads(rmaudit("compare", "judges.db", "--json").out)
    headline = body["comparisons"][0]
    assert headline["label"] == "headline accuracy" and headline["units"] == len(pairs)
    assert headline["measures"] == {j: {"metric": "judge-audit", "key": "judge_accuracy"}
                                    for j in JUDGES}  # fmt: skip
    assert any("tie ½" in c for c in headline["conventions"])
    hand = credits(pairs)
    hand["random"] = None  # its credits: from its stored scores, checked by the value below
    models = [s["model"] for s in headline["standings"]]
    assert set(models) == {*JUDGES, "length", "random"}
    for s in headline["standings"]:
        if hand[s["model"]] is not None:
            assert s["value"] == pytest.approx(hand[s["model"]].mean(), abs=1e-12)
    compared = [p for p in headline["pairs"] if "random" not in (p["first"], p["second"])]
    for pair in compared:
        first, second = hand[pair["first"]], hand[pair["second"]]
        test = stats.ttest_rel(first, second)
        difference = first - second
        assert pair["difference"] == pytest.approx(difference.mean(), abs=1e-12)
        assert pair["stderr"] == pytest.approx(
            difference.std(ddof=1) / np.sqrt(len(pairs)), rel=1e-9
        )
        if np.any(difference != difference[0]):
            assert pair["p"] == pytest.approx(test.pvalue, rel=1e-7)
    # Holm over every pair of the family, then letters and ranks from the separated pairs
    p_all = [pair["p"] for pair in headline["pairs"]]
    for pair, adjusted in zip(headline["pairs"], holm(p_all), strict=True):
        assert pair["p_holm"] == pytest.approx(adjusted, rel=1e-12)
        assert pair["separable"] == (adjusted < ALPHA)
    separated = {(p["first"], p["second"]) for p in headline["pairs"] if p["separable"]}
    letters = {s["model"]: set(s["letters"]) for s in headline["standings"]}
    for a, b in combinations(models, 2):
        together = (a, b) not in separated and (b, a) not in separated
        assert bool(letters[a] & letters[b]) == together, (a, b)
    for s in headline["standings"]:
        better = sum((other, s["model"]) in separated for other in models)
        worse = sum((s["model"], other) in separated for other in models)
        assert (s["rank_low"], s["rank_high"]) == (1 + better, len(models) - worse)
    assert separated, "the fixture's sharp judge should be told apart from some model"


def test_judges_alone_compare_on_their_accuracy_and_each_order(rmaudit, audited):
    from scipy import stats

    pairs, _ = audited
    body = json.loads(rmaudit("compare", "judges.db", "--json").out)
    by_key = {c["key"]: c for c in body["comparisons"][1:]}
    judge = by_key["judge_accuracy"]
    assert {s["model"] for s in judge["standings"]} == set(JUDGES)
    hand = credits(pairs)
    for pair in judge["pairs"]:
        difference = hand[pair["first"]] - hand[pair["second"]]
        assert pair["difference"] == pytest.approx(difference.mean(), abs=1e-12)
        if np.any(difference != difference[0]):
            expected = stats.ttest_rel(hand[pair["first"]], hand[pair["second"]]).pvalue
            assert pair["p"] == pytest.approx(expected, rel=1e-7)
    chosen_first = by_key["accuracy_chosen_first"]
    values = {s["model"]: s["value"] for s in chosen_first["standings"]}
    assert values["first"] == 1.0  # always A: right whenever the chosen answer is shown first
    # a ratio and a signed number are not ranked, and say why
    assert "position_bias" not in by_key
    every = json.loads(rmaudit("compare", "judges.db", "--subsets", "--json").out)
    notes = {c["key"]: c["note"] for c in every["comparisons"] if c["standings"] is None}
    assert "no better direction" in notes["position_bias"]
    # said of the metric, once: not of the first model it was asked of, nor "not compared" again
    assert notes["tie_rate"] == "not a mean over pairs (its metric declares no per-pair values)"
    assert "judge_accuracy[llmbar-natural]" in {c["key"] for c in every["comparisons"]}


def test_the_verdict_pairs_a_judge_against_length_on_its_own_accuracy(audited):
    pairs, results = audited
    hand = credits(pairs)
    models = {m["label"]: m for m in results["suites"][0]["models"]}
    for judge in JUDGES:
        model = models[judge]
        assert model["convention"] == "judge accuracy: both orders, a tie ½"
        assert model["metrics"]["accuracy"]["value"] == pytest.approx(hand[judge].mean())
        length = next(a for a in model["against"] if a["bar"] == "length")
        difference = hand[judge] - hand["length"]
        assert length["paired"]["difference"] == pytest.approx(difference.mean(), abs=1e-12)
        assert length["paired"]["stderr"] == pytest.approx(
            difference.std(ddof=1) / np.sqrt(len(pairs)), rel=1e-9
        )
    assert models["length"]["convention"] is None


@pytest.mark.parametrize("columns", [None, "100", "80"])
def test_the_summary_fits_the_width_off_a_terminal(rmaudit, audited, monkeypatch, columns):
    if columns is not None:
        monkeypatch.setenv("COLUMNS", columns)
    width = int(columns or 100)
    (run,) = [r[0] for r in sqlite3.connect("judges.db").execute("select id from runs")]
    for args in ((), ("--details",)):
        done = rmaudit("runs", "judges.db", run, *args)
        assert done.code == 0, done.err
        tables = [line for line in done.out.splitlines() if line[:1] in "┏┃┡│└"]
        assert tables and max(len(line) for line in tables) <= width
    # one row per model, its headline, letters and rank; the subsets in a table of their own
    assert re.search(r"│ sharp +│ +0\.\d{4}", done.out)
    assert "accuracy by subset" in done.out and "llmbar-natural" in done.out
    assert "position bias: signed, no better direction (+: prefers the answer shown first)" in (
        done.out
    )


def test_the_leaderboard_json_holds_one_row_per_model(rmaudit, audited):
    pairs, _ = audited
    (run,) = [r[0] for r in sqlite3.connect("judges.db").execute("select id from runs")]
    board = json.loads(rmaudit("runs", "judges.db", run, "--json").out)["runs"][0]["leaderboard"]
    assert set(board) == {"headline", "conventions", "caption", "columns", "subsets", "rows",
                          "comparison"}  # fmt: skip
    assert board["headline"] == "accuracy"
    assert [c["key"] for c in board["columns"]] == [
        "position_bias", "consistency", "tie_rate", "parse_failure_rate"
    ]  # fmt: skip
    assert board["columns"][0]["higher_is_better"] is None and board["columns"][0]["signed"]
    assert len(board["subsets"]) == len(SUBSETS)
    rows = {r["model"]: r for r in board["rows"]}
    assert set(rows) == {*JUDGES, "length", "random"}
    hand = credits(pairs)
    for judge in JUDGES:
        row = rows[judge]
        assert set(row) == {"model", "baseline", "headline", "letters", "rank_low", "rank_high",
                            "numbers", "subsets"}  # fmt: skip
        assert row["headline"]["key"] == "judge_accuracy"
        assert row["headline"]["value"] == pytest.approx(hand[judge].mean())
        assert row["headline"]["ci_low"] <= row["headline"]["value"] <= row["headline"]["ci_high"]
        assert row["letters"] and 1 <= row["rank_low"] <= row["rank_high"] <= len(rows)
        natural = hand[judge][:PER_SUBSET].mean()
        assert row["subsets"]["llmbar-natural"]["value"] == pytest.approx(natural)
    assert rows["length"]["headline"]["key"] == "accuracy" and rows["length"]["baseline"]
    # a parse-failure rate observed at 0 has Wilson's interval at the count of pairs
    failures = rows["sharp"]["numbers"]["parse_failure_rate"]
    assert failures["value"] == 0.0 and failures["ci_low"] == 0.0
    assert 0 < failures["ci_high"] < 0.1
    best = board["rows"][0]
    assert best["rank_low"] == 1 and "a" in best["letters"]
