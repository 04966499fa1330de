"""A benchmark assembled from AlpacaEval-style files (reward-bench's best-of-n layout), audited
with the `length` and `random` baselines; every value checked against an independent brute
force (all tie-break orders, all subsets) from the made-up files themselves.

The files: 5 prompts × 8 outputs files (sample K = file K), annotations for K = 0…5 (K = 6, 7
unlabelled); prompt 0 has two samples with the same text but different annotations; prompt
1's annotations are all equal (pairwise accuracy undefined there); lengths tie within prompts.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import sqlite3
import statistics

import pytest

from rmaudit.components import Prompt, Response
from rmaudit.default_plugins.baselines import Length, LengthOptions, RandomOptions, RandomScore
from rmaudit.errors import BadInput
from rmaudit.recipe import load_recipe

OUTPUTS, LABELLED, PROMPTS = 8, 6, 5


def made_up_files(
    folder,
    output_name=lambda k: f"policy.{k}.json" + (".gz" if k % 2 else ""),
    annotations_name=lambda k: f"ann/policy.{k}.annotations.json",
):
    """The files (named by sample K; a name ending .gz is gzip-compressed), and per prompt the
    (length, preference) of each labelled sample."""
    outputs = {k: [] for k in range(OUTPUTS)}
    annotations = {k: [] for k in range(LABELLED)}
    truth = []
    for q in range(PROMPTS):
        instruction = f"Question {q}: how?"
        rows = []
        for k in range(OUTPUTS):
            text = (
                "same answer" if (q == 0 and k in (1, 2)) else "x" * (3 + (k * 7 + q) % 5) + f" {q}"
            )
            outputs[k].append(
                {
                    "instruction": instruction,
                    "output": text,
                    "generator": f"policy.{k}",
                    "dataset": "made-up",
                }
            )
            if k < LABELLED:
                preference = 1.5 if q == 1 else 1.0 + ((k * 3 + q) % 7) / 7
                annotations[k].append(
                    {
                        "instruction": instruction,
                        "output_1": "reference",
                        "output_2": text,
                        "generator_2": f"policy.{k}",
                        "preference": preference,
                        "annotator": "made_up_judge",
                    }
                )
                rows.append((len(text), preference))
        truth.append(rows)
    for records, name in [(outputs[k], output_name(k)) for k in range(OUTPUTS)] + [
        (annotations[k], annotations_name(k)) for k in range(LABELLED)
    ]:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(records).encode()
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return truth


RECIPE = """
title = "made-up best-of-8"
[benchmark]
name = "alpacaeval"
root = "data"
outputs = ["policy.*.json*"]
annotations = ["ann/*.annotations.json"]

[[reward_models]]
label = "length"
name = "length"

[[reward_models]]
label = "random"
name = "random"
seed = 3

[[metrics]]
name = "reta"
eta = 0.25

[[metrics]]
name = "best-of-n"
report = [4]

[[metrics]]
name = "pairwise-accuracy"
"""


def brute_reta(rows, eta=0.25):
    """Eq. 6 with n = N (the n-range clips to N for N = 6), averaged over every ordering the
    RM's ties allow (each equally likely)."""
    n = len(rows)
    en = eta * n
    m, d = math.floor(en), en - math.floor(en)
    values = []
    for order in itertools.permutations(rows):
        if any(order[i][0] < order[i + 1][0] for i in range(n - 1)):
            continue  # not sorted by RM score: not an ordering the ranking allows
        judged = [j for _, j in order]
        t = sum(judged[:m]) + d * (d * judged[m] + (1 - d) * judged[m - 1])
        values.append(t / en)
    return statistics.fmean(values) / statistics.fmean(j for _, j in rows)


def brute_bon(rows, n=4):
    picks = []
    for subset in itertools.combinations(rows, n):
        top = max(y for y, _ in subset)
        tied = [j for y, j in subset if y == top]
        picks.append(statistics.fmean(tied))
    return statistics.fmean(picks)


def brute_pairwise(rows):
    """Ties of the RM count half; None where the oracle orders no pair."""
    credit = comparable = 0
    for (ya, ja), (yb, jb) in itertools.permutations(rows, 2):
        if ja > jb:
            comparable += 1
            credit += 1.0 if ya > yb else 0.5 if ya == yb else 0.0
    return credit / comparable if comparable else None


def mean_and_stderr(values):
    return statistics.fmean(values), statistics.stdev(values) / math.sqrt(len(values))


@pytest.fixture
def audited(tmp_path, rmaudit):
    (tmp_path / "data").mkdir()
    truth = made_up_files(tmp_path / "data")
    recipe = tmp_path / "bon.toml"
    recipe.write_text(RECIPE)
    db = tmp_path / "audit.db"
    result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 0, result.err
    with sqlite3.connect(db) as con:
        labels = dict(con.execute("select label, rm_key from run_reward_models"))
        values = {
            (rm, key): (v, se)
            for rm, key, v, se in con.execute(
                "select rm_key, key, value, stderr from metric_results"
            )
        }
        failures = con.execute("select stage, item_id, error from failures").fetchall()
        per_prompt = con.execute(
            "select count(*) from per_prompt_results where metric = 'pairwise-accuracy'"
        ).fetchone()[0]
    return truth, labels, values, failures, per_prompt, result


def test_length_baseline_matches_brute_force_on_alpacaeval_files(audited):
    truth, labels, values, _, _, _ = audited
    length = labels["length"]
    for key, brute in (("reta@0.25", brute_reta), ("bon@4", brute_bon)):
        value, stderr = values[(length, key)]
        expected, expected_se = mean_and_stderr([brute(rows) for rows in truth])
        assert value == pytest.approx(expected, abs=1e-12), key
        assert stderr == pytest.approx(expected_se, abs=1e-12), key


def test_a_prompt_with_equal_labels_is_skipped_counted_and_recorded(audited):
    truth, labels, values, failures, per_prompt, result = audited
    kept = [brute_pairwise(rows) for rows in truth if brute_pairwise(rows) is not None]
    assert len(kept) == PROMPTS - 1  # prompt 1: all annotations equal
    assert values[(labels["length"], "pairwise_accuracy")][0] == pytest.approx(
        statistics.fmean(kept), abs=1e-12
    )
    skipped = [f for f in failures if f[0] == "metrics: skipped prompts"]
    assert len(skipped) == 1 and "pairwise-accuracy: all oracle scores equal" in skipped[0][2]
    assert per_prompt == 2 * (PROMPTS - 1)  # two RMs, the skipped prompt has no value
    assert "pairwise-accuracy: 1 of 5 prompts skipped: all oracle scores equal" in result.err
    assert f"{PROMPTS * (OUTPUTS - LABELLED):,} unlabelled responses left out" in result.err


def test_equal_texts_of_one_prompt_keep_their_own_labels(tmp_path):
    (tmp_path / "data").mkdir()
    truth = made_up_files(tmp_path / "data")
    recipe = tmp_path / "bon.toml"
    recipe.write_text(RECIPE)
    content = load_recipe(recipe).benchmark_source.build().load()
    first = content.records[0]["responses"]
    same = [r for r in first if r["text"] == "same answer"]
    assert [r["label"]["score"] for r in same] == [truth[0][1][1], truth[0][2][1]]
    assert same[0]["label"]["score"] != same[1]["label"]["score"]
    assert [len(r["responses"]) for r in content.records] == [LABELLED] * PROMPTS


def test_conflicting_annotations_of_one_response_are_an_error(tmp_path):
    (tmp_path / "data").mkdir()
    made_up_files(tmp_path / "data")
    path = tmp_path / "data" / "ann" / "policy.0.annotations.json"
    rows = json.loads(path.read_text())
    rows.append({**rows[0], "preference": rows[0]["preference"] + 0.25})
    path.write_text(json.dumps(rows))
    recipe = tmp_path / "bon.toml"
    recipe.write_text(RECIPE)
    with pytest.raises(
        BadInput,
        match=r"policy\.0\.annotations\.json:record 6: preference: "
        r"two different preferences .* at .*:record 1\)",
    ):
        load_recipe(recipe).benchmark_source.build().load()


def test_a_missing_root_names_the_path_and_what_to_download(tmp_path, rmaudit):
    recipe = tmp_path / "bon.toml"
    recipe.write_text(
        RECIPE.replace(
            'root = "data"', 'root = "nowhere"\nmissing_hint = "download the bon_eval files there"'
        )
    )
    result = rmaudit("run", str(recipe), "--db", str(tmp_path / "x.db"))
    assert result.code == 2
    line = result.err.strip()
    assert "\n" not in line and "benchmark.root: folder not found:" in line
    assert str(tmp_path / "nowhere") in line and "download the bon_eval files there" in line
    assert not (tmp_path / "x.db").exists()


def test_the_baselines_score_length_and_a_seeded_random():
    batch = [
        (Prompt("p", "q"), Response(f"r{i}", "p", i, text))
        for i, text in enumerate(["a b", "ccc dd e", "  é  "])
    ]
    assert Length().score(batch) == [3.0, 8.0, 5.0]
    assert Length(LengthOptions(unit="words")).score(batch) == [2.0, 3.0, 1.0]
    first = RandomScore(RandomOptions(seed=1)).score(batch)
    assert first == RandomScore(RandomOptions(seed=1)).score(batch[::-1])[::-1]  # batch-free
    assert first != RandomScore(RandomOptions(seed=2)).score(batch)
    assert all(0 <= v < 1 for v in first)
    with pytest.raises(BadInput, match="tokenizer"):
        Length(LengthOptions(unit="tokens"))


def test_dry_run_warns_of_skipped_prompts_before_any_work(tmp_path, rmaudit):
    (tmp_path / "data").mkdir()
    made_up_files(tmp_path / "data")
    recipe = tmp_path / "bon.toml"
    recipe.write_text(RECIPE)
    result = rmaudit("run", str(recipe), "--db", str(tmp_path / "plan.db"), "--dry-run")
    assert result.code == 0, result.err
    assert (
        "warning: pairwise-accuracy: 1 of 5 prompts skipped: all oracle scores equal" in result.err
    )
    assert not (tmp_path / "plan.db").exists()
