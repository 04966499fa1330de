"""``rmaudit audit --suite alpacaeval-bon16`` on made-up files in reward-bench's best-of-n
layout (the writer of test_alpacaeval_source): RETA(1/4), BoN@4, 2nd-BoN@4 and pairwise
accuracy of the ``length`` baseline checked against brute force over the files themselves,
and a rerun that scores nothing.  Nothing here reads rmaudit's shared data folder."""

from __future__ import annotations

import itertools
import json
import statistics

import pytest
from test_alpacaeval_source import (
    brute_bon,
    brute_pairwise,
    brute_reta,
    made_up_files,
    mean_and_stderr,
)

from rmaudit.suites import SUITES

BON = "reward-bench-bon/alpaca_eval_n16"


def reward_bench_layout(data):
    """The made-up files where the suite looks for them: odd samples gzipped, even ones
    not (the suite reads both, as reward-bench ships them plain)."""
    return made_up_files(
        data,
        output_name=lambda k: f"{BON}/tulu-2-dpo-13b.{k}.json" + (".gz" if k % 2 else ""),
        annotations_name=lambda k: (
            f"{BON}/annotations_ref_GPT35t/tulu-2-dpo-13b.{k}."
            "weighted_alpaca_eval_gpt4_turbo.annotations.json.gz"
        ),
    )


def brute_second_of_n(rows, n=4):
    """2nd-best-of-n: over every n-subset and every order of it the RM's ties allow, the
    oracle score of the response ranked second."""
    picks = []
    for subset in itertools.combinations(rows, n):
        seconds = [
            order[1][1]
            for order in itertools.permutations(subset)
            if all(order[i][0] >= order[i + 1][0] for i in range(n - 1))
        ]
        picks.append(statistics.fmean(seconds))
    return statistics.fmean(picks)


@pytest.fixture
def audited(tmp_path, rmaudit, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the audit's results file lands in the current folder
    data = tmp_path / "data"
    truth = reward_bench_layout(data)
    db = tmp_path / "audit.db"
    args = (
        "audit",
        "length",
        "random",
        "--suite",
        "alpacaeval-bon16",
        "--data-dir",
        str(data),
        "--db",
        str(db),
    )
    done = rmaudit(*args, "--json")
    assert done.code == 0, done.err
    return truth, json.loads(done.out), args, done


def test_length_on_the_suite_matches_brute_force(audited):
    truth, result, _, _ = audited
    (suite,) = result["suites"]
    assert suite["suite"] == "alpacaeval-bon16"
    origin = SUITES["alpacaeval-bon16"].origin  # the fixture's files are not reward-bench's
    assert suite["data"]["version"].endswith(f", not those of {origin}")
    assert [m["label"] for m in suite["models"]] == ["length", "random"]  # each once
    length = {name: m["value"] for name, m in suite["models"][0]["metrics"].items()}
    for name, brute in (
        ("RETA(1/4)", brute_reta),
        ("BoN@4", brute_bon),
        ("2nd-BoN@4", brute_second_of_n),
    ):
        expected, _ = mean_and_stderr([brute(rows) for rows in truth])
        assert length[name] == pytest.approx(expected, abs=1e-12), name
    pairwise = [brute_pairwise(rows) for rows in truth]
    assert length["pairwise acc"] == pytest.approx(
        statistics.fmean(p for p in pairwise if p is not None), abs=1e-12
    )


def test_the_closing_table_shows_both_baselines_and_a_rerun_scores_nothing(audited, rmaudit):
    truth, result, args, first = audited
    assert "new work: 5 prompts" in first.err
    again = rmaudit(*args, "--details")  # the closing table: with --details
    assert again.code == 0, again.err
    assert "new work: none" in again.err
    closing = again.out[again.out.index("audit summary") :]
    reta = result["suites"][0]["models"][0]["metrics"]["RETA(1/4)"]
    assert f"RETA(1/4) {reta['value']:.4f} ± {reta['stderr']:.4f}" in closing
    assert closing.count("baseline") >= 2 and "does not pass" not in closing


def test_the_printed_recipe_is_a_benchmark_recipe_that_runs_alike(audited, rmaudit, tmp_path):
    truth, result, args, _ = audited
    printed = rmaudit(*args[:-2], "--print-recipe")
    assert printed.code == 0, printed.err
    recipe = tmp_path / "bon.toml"
    recipe.write_text(printed.out, encoding="utf-8")
    db = tmp_path / "by-recipe.db"
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    ran = rmaudit("runs", "--db", str(db), "--json")
    (run,) = json.loads(ran.out)["runs"]
    stored = {(m["rm"], m["label"]): m["value"] for m in run["metrics"]}
    for model in result["suites"][0]["models"]:
        for name, metric in model["metrics"].items():
            assert stored[(model["label"], name)] == metric["value"], (model["label"], name)
