"""Preference-pair audits end to end: the pairs stage, the shift sweep and the pair metrics.

Stored values are checked against the pure functions of ``rmaudit.metrics`` applied to the
stored data (read back with SQL), so the plumbing — which scores go with which pair, level
and target — is what these tests exercise.
"""

from __future__ import annotations

import json
import sqlite3
import textwrap
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from _support import table_counts
from scipy import stats

from rmaudit.default_plugins.pair_sources import PairsFile
from rmaudit.default_plugins.perturbers import WordPerturb
from rmaudit.metrics import (
    accuracy,
    auroc,
    bt_ece,
    confidence,
    ece,
    energy_score,
    fpr_at_95_tpr,
    section_score,
    style_accuracy_matrix,
    style_difficulty,
    subset_accuracy,
)
from rmaudit.recipe import load_recipe
from rmaudit.run import Runner
from rmaudit.store import Store

ROOT = Path(__file__).resolve().parents[2]
SUBSETS = ("alpacaeval-easy", "llmbar-natural", "refusals-dangerous", "math-prm")


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def write_jsonl(path: Path, records: list) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records),
        encoding="utf-8",
    )
    return path


def pair_records(n: int = 40) -> list[dict]:
    """RewardBench-format records whose texts the simulated RMs read differently."""
    records = []
    for i in range(n):
        topic = ("soil", "tides", "bread", "fractions", "orbits")[i % 5]
        prompt = f"Explain {topic} to a beginner, example {i}."
        good = (
            f"{topic.capitalize()} can be explained step by step. First, the basic idea of "
            f"{topic}. Then an example with numbers {i} and {i + 1}, and what to watch for."
        )
        bad = f"I am not sure about {topic}." + (" It depends." * (i % 3))
        records.append(
            {
                "prompt": prompt,
                "chosen": good if i % 4 else bad,
                "rejected": bad if i % 4 else good,
                "subset": SUBSETS[i % len(SUBSETS)],
                "id": i,
            }
        )
    return records


RMS = """
[[reward_models]]
label = "honest"
name = "simulated-rm"

[[reward_models]]
label = "length"
name = "simulated-rm"
bias = "length"
seed = 3
"""

PAIRS_RECIPE = (
    """
title = "pairs audit"
batch_size = 16

[pairs.source]
name = "pairs-file"
path = "pairs.jsonl"
subset = "subset"
"""
    + RMS
    + """
[[metrics]]
name = "pair-accuracy"

[[metrics]]
name = "section-score"

[[metrics]]
name = "calibration"
n_bins = 10

[[metrics]]
name = "bt-ece"
"""
)

LEVELS = (0.0, 0.25, 0.5)
SHIFT_RECIPE = (
    """
title = "shift audit"
batch_size = 64

[prompts.source]
name = "simulated-helpful"

[prompts.sampler]
name = "random"
k = 4

[responses]
per_prompt = 5

[responses.policy]
name = "simulated-policy"

[oracle]
name = "simulated-judge"
samples = 2

[pairs.source]
name = "benchmark-pairs"

[pairs.shift]
levels = [0.0, 0.25, 0.5]
seed = 7

[pairs.shift.perturber]
name = "word-perturb"
"""
    + RMS
    + """
[[metrics]]
name = "pair-accuracy"

[[metrics]]
name = "shift-curves"

[[metrics]]
name = "ood-detection"
target = "both"
level = 0.5
"""
)


def run_recipe(recipe: Path, db: Path):
    store = Store.open(db)
    try:
        return Runner(load_recipe(recipe), store).run()
    finally:
        store.close()


def stored(db: Path, sql: str, params=()) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, list(params)).fetchall()
    finally:
        conn.close()


def scores_by_rm(db: Path) -> dict[str, dict[str, float]]:
    """RM label → response id → stored score."""
    found: dict[str, dict[str, float]] = {}
    for label, rid, score in stored(
        db,
        "select m.label, s.response_id, s.score from "
        "run_reward_models m join rm_scores s on s.rm_key = m.rm_key",
    ):
        found.setdefault(label, {})[rid] = score
    return found


def audited_pairs(db: Path) -> list[tuple]:
    """(pair id, chosen id, rejected id, subset, meta) of the latest run's pair set, in order."""
    return [
        (pid, c, r, subset, json.loads(meta))
        for pid, c, r, subset, meta in stored(
            db,
            """select p.id, p.chosen_id, p.rejected_id, p.subset, p.meta from runs
               join pair_sets s on s.pair_set_key = runs.pair_set_key
               join pairs p on p.id = s.pair_id order by s.position""",
        )
    ]


def results(db: Path) -> dict[tuple[str, str], float]:
    """(RM label, key) → stored value."""
    return {
        (label, key): value
        for label, key, value in stored(
            db,
            """select m.label, r.key, r.value from metric_results r join run_reward_models m
               on m.rm_key = r.rm_key and m.run_id = r.run_id""",
        )
    }


def curves(db: Path) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """(RM label, key) → (x, value) of every stored curve."""
    points: dict[tuple[str, str], list] = {}
    for label, key, x, value in stored(
        db,
        """select m.label, c.key, c.x, c.value from curves c join run_reward_models m
                   on m.rm_key = c.rm_key and m.run_id = c.run_id order by c.point""",
    ):
        points.setdefault((label, key), []).append((x, value))
    return {k: tuple(np.array(v, float).T) for k, v in points.items()}


# -- a pair file, end to end ---------------------------------------------------------------


@pytest.fixture
def pairs_db(tmp_path, rmaudit):
    write_jsonl(tmp_path / "pairs.jsonl", pair_records())
    recipe = write(tmp_path / "pairs.toml", PAIRS_RECIPE)
    db = tmp_path / "pairs.db"
    result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 0, result.err
    return db, recipe, result


def test_a_pair_file_is_stored_as_prompts_responses_and_pairs(pairs_db):
    db, _, result = pairs_db
    records = pair_records()
    counts = table_counts(db)
    assert counts["pairs"] == counts["pair_sets"] == len(records)
    assert counts["prompts"] == len({r["prompt"] for r in records})
    # a response is its text under its prompt: the same text under another prompt is another item
    texts = {(r["prompt"], r[k]) for r in records for k in ("chosen", "rejected")}
    assert counts["responses"] == len(texts)
    assert stored(db, "select count(*) from responses where policy_key is not null") == [(0,)]
    assert counts["rm_scores"] == 2 * len(texts)
    assert counts["oracle_labels"] == 0 and counts["benchmarks"] == 0
    back = stored(
        db,
        """select pr.text, c.text, r.text, p.subset from pairs p
                         join prompts pr on pr.id = p.prompt_id join responses c on c.id =
                         p.chosen_id join responses r on r.id = p.rejected_id""",
    )
    assert sorted(back) == sorted(
        (r["prompt"], r["chosen"], r["rejected"], r["subset"]) for r in records
    )
    assert f"pairs: {len(records)} from {len(records)} records" in result.err
    assert "40 preference pairs" in result.out


def test_stored_pair_metrics_equal_the_pure_functions_on_stored_data(pairs_db):
    db, _, _ = pairs_db
    pairs = audited_pairs(db)
    values, stored_curves = results(db), curves(db)
    for label, scores in scores_by_rm(db).items():
        chosen = np.array([scores[c] for _, c, _, _, _ in pairs])
        rejected = np.array([scores[r] for _, _, r, _, _ in pairs])
        subsets = [s for _, _, _, s, _ in pairs]
        assert values[(label, "accuracy")] == pytest.approx(accuracy(chosen, rejected).value)
        by_subset = subset_accuracy(chosen, rejected, subsets)
        for subset, result in by_subset.items():
            assert values[(label, f"accuracy[{subset}]")] == pytest.approx(result.value)
        weighted = section_score(by_subset, "rewardbench")
        assert values[(label, "section_score")] == pytest.approx(weighted.score)
        assert values[(label, "section[Chat Hard]")] == pytest.approx(
            weighted.sections["Chat Hard"]
        )
        calibration = ece(chosen, rejected, n_bins=10)
        assert values[(label, "ece")] == pytest.approx(calibration.value)
        x, value = stored_curves[(label, "reliability_diagram")]
        filled = calibration.count > 0
        np.testing.assert_allclose(x, calibration.mean_confidence[filled])
        np.testing.assert_allclose(value, calibration.accuracy[filled])
        low, high = np.array(
            stored(
                db,
                """select c.ci_low, c.ci_high from curves c
            join run_reward_models m on m.rm_key = c.rm_key and m.run_id = c.run_id
            where m.label = ? and c.key = 'reliability_diagram' order by c.point""",
                [label],
            ),
            float,
        ).T
        for m, (bin_low, bin_high) in enumerate(zip(low, high, strict=True)):  # Wilson, bin by bin
            count = calibration.count[filled][m]
            wins = round(calibration.accuracy[filled][m] * count)
            wilson = stats.binomtest(wins, count).proportion_ci(method="wilson")
            assert (bin_low, bin_high) == pytest.approx((wilson.low, wilson.high), abs=1e-9)
        assert values[(label, "bt_ece")] == pytest.approx(bt_ece(chosen, rejected).value)


def test_accuracy_over_few_pairs_is_labelled_approximate_and_its_ci_is_wilsons(pairs_db):
    db, _, result = pairs_db
    flagged = 0
    for key, value, low, high, params in stored(
        db,
        "select key, value, ci_low, ci_high, params from metric_results "
        "where key like 'accuracy[%'",
    ):
        pairs = json.loads(params)["pairs"]
        wilson = stats.binomtest(round(value * pairs), pairs).proportion_ci(method="wilson")
        assert (low, high) == pytest.approx((wilson.low, wilson.high), abs=1e-9), key
        # the normal interval value ± 1.96·stderr needs about 10 successes and 10 failures
        approximate = pairs * min(value, 1 - value) < 10
        assert bool(json.loads(params).get("approximate")) == approximate, (key, value, pairs)
        flagged += approximate
    assert flagged  # 40 pairs over several subsets: some are small
    assert "≈" in result.out and "cite the Wilson CI instead" in result.out


def test_rerunning_a_pair_audit_does_no_work(pairs_db, rmaudit):
    db, recipe, first = pairs_db
    before, values = table_counts(db), results(db)
    again = rmaudit("run", str(recipe), "--db", str(db))
    assert again.code == 0 and "new work: none" in again.err
    assert table_counts(db) == before and results(db) == values
    assert again.out == first.out
    plan = Runner(load_recipe(recipe), Store.open_readonly(db)).plan()
    assert [(c.stage, c.total, c.pending) for c in plan] == [
        ("pairs", 40, 0),
        ("scores: honest", 80, 0),
        ("scores: length", 80, 0),
    ]


def test_a_pair_source_is_also_a_prompt_source(tmp_path):
    write_jsonl(tmp_path / "pairs.jsonl", pair_records(10))
    source = PairsFile(
        PairsFile.Options.model_validate(
            {"path": "pairs.jsonl", "subset": "subset"}, context={"base_dir": tmp_path}
        )
    )
    prompts = source.load()
    assert [text for text, _ in prompts] == [r["prompt"] for r in pair_records(10)]
    assert prompts[0][1] == {"subset": SUBSETS[0]}


# -- bad input -----------------------------------------------------------------------------

GOOD = {"prompt": "Say hi.", "chosen": "Hi!", "rejected": "No.", "subset": "alpacaeval-easy"}
BAD_RECORDS = {
    "missing field": (
        "pairs-file",
        [GOOD, {"prompt": "Say hi.", "chosen": "Hi!"}],
        ["rejected", "missing field"],
    ),
    "empty response": (
        "pairs-file",
        [GOOD, {**GOOD, "chosen": "  "}],
        ["chosen", "empty response", "(got '  ')"],
    ),
    "label outside {1, 2}": (
        "llmbar",
        [
            {"input": "q", "output_1": "a", "output_2": "b", "label": 1},
            {"input": "q", "output_1": "a", "output_2": "b", "label": 3},
        ],
        ["label", "label outside {1, 2}", "(got 3)"],
    ),
    "malformed line": ("pairs-file", [GOOD, '{"prompt": "x", '], ["malformed record"]),
}


def pairs_only_recipe(source: str, extra: str = "") -> str:
    return f'[pairs.source]\nname = "{source}"\npath = "data.jsonl"\n{extra}\n' + RMS


@pytest.mark.parametrize("case", sorted(BAD_RECORDS))
def test_a_bad_record_exits_2_naming_file_line_field_and_value(case, rmaudit, tmp_path):
    source, records, expected = BAD_RECORDS[case]
    data = write_jsonl(tmp_path / "data.jsonl", records)
    recipe = write(tmp_path / "r.toml", pairs_only_recipe(source))
    db = tmp_path / "audit.db"
    result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 2, result
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {data}:2: "), result.err
    for fragment in expected:
        assert fragment in lines[0], (fragment, lines[0])
    assert not db.exists()


def test_nan_scores_for_pairs_exit_2(rmaudit, tmp_path):
    write_jsonl(tmp_path / "data.jsonl", [GOOD])
    scores = tmp_path / "scores.jsonl"
    scores.write_text('{"response_id": "a", "score": 0.5}\n{"response_id": "b", "score": NaN}\n')
    recipe = write(
        tmp_path / "r.toml",
        pairs_only_recipe("pairs-file")
        + textwrap.dedent("""
        [[reward_models]]
        label = "file"
        name = "scores-file"
        path = "scores.jsonl"
        """),
    )
    result = rmaudit("run", str(recipe), "--db", str(tmp_path / "audit.db"))
    assert result.code == 2
    assert result.err.strip() == f"Error: {scores}:2: score: expected a finite score (got nan)"


def test_rejected_records_are_counted_and_stored_as_failures(rmaudit, tmp_path):
    source, records, _ = BAD_RECORDS["label outside {1, 2}"]
    write_jsonl(tmp_path / "data.jsonl", records + [records[0] | {"input": "other"}])
    recipe = write(tmp_path / "r.toml", pairs_only_recipe(source, 'on_bad_record = "reject"'))
    db = tmp_path / "audit.db"
    result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 0, result.err
    assert "pairs: 2 from 3 records; 1 rejected" in result.err
    assert "label outside {1, 2} ×1" in result.err
    rows = stored(db, "select stage, item_id, error from failures")
    assert rows == [
        (
            "pairs",
            f"{tmp_path / 'data.jsonl'}:2",
            f"{tmp_path / 'data.jsonl'}:2: label: label outside {{1, 2}} (got 3)",
        )
    ]
    assert table_counts(db)["pairs"] == 2


RECIPE_ERRORS = {
    "benchmark metric on pairs only": (
        pairs_only_recipe("pairs-file") + '\n[[metrics]]\nname = "reta"\n',
        ["metrics[0].name", "needs a benchmark", "'reta'"],
    ),
    "shift metric without a sweep": (
        pairs_only_recipe("pairs-file") + '\n[[metrics]]\nname = "shift-curves"\n',
        ["metrics[0].name", "needs a shift sweep"],
    ),
    "pair metric without pairs": (
        SHIFT_RECIPE.split("[pairs.source]")[0] + RMS + '\n[[metrics]]\nname = "calibration"\n',
        ["metrics[0].name", "needs preference pairs"],
    ),
    "perturber given a level": (
        pairs_only_recipe("pairs-file")
        + '\n[pairs.shift]\n[pairs.shift.perturber]\nname = "word-perturb"\np = 0.3\n',
        ["pairs.shift.perturber.p", "pairs.shift.levels", "(got 0.3)"],
    ),
    "levels without 0": (
        pairs_only_recipe("pairs-file")
        + '\n[pairs.shift]\nlevels = [0.1, 0.2]\n[pairs.shift.perturber]\nname = "word-perturb"\n',
        ["pairs.shift.levels", "must include 0"],
    ),
    "ood level not swept": (
        pairs_only_recipe("pairs-file") + "\n[pairs.shift]\nlevels = [0, 0.25]\n"
        '[pairs.shift.perturber]\nname = "char-noise"\n\n[[metrics]]\nname = "ood-detection"\n'
        "level = 0.3\n",
        ["metrics[0].level", "not a level of the shift sweep", "(got 0.3)"],
    ),
    "benchmark pairs without a benchmark": (
        '[pairs.source]\nname = "benchmark-pairs"\n' + RMS,
        ["pairs.source.name", "derives pairs from a benchmark", "'benchmark-pairs'"],
    ),
    "a prompt source that has no pairs": (
        '[pairs.source]\nname = "jsonl"\npath = "data.jsonl"\n' + RMS,
        ["pairs.source.name", "not a preference-pair source", "'jsonl'"],
    ),
}


@pytest.mark.parametrize("case", sorted(RECIPE_ERRORS))
def test_a_pairs_recipe_error_exits_2_before_any_work(case, rmaudit, tmp_path):
    text, expected = RECIPE_ERRORS[case]
    write_jsonl(tmp_path / "data.jsonl", [GOOD])
    recipe = write(tmp_path / "r.toml", text)
    db = tmp_path / "audit.db"
    result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 2, result
    line = result.err.strip()
    assert "\n" not in line and line.startswith(f"Error: {recipe}: "), line
    for fragment in expected:
        assert fragment in line, (fragment, line)
    assert not db.exists()


# -- RM-Bench ------------------------------------------------------------------------------


def test_rm_bench_difficulty_equals_the_style_matrix_of_stored_scores(rmaudit, tmp_path):
    records = [
        {
            "id": i,
            "prompt": f"Describe lighthouse number {i}.",
            "subset": "chat",
            "chosen": [
                f"Lighthouse {i} guides ships.",
                f"Lighthouse {i} guides ships with a bright lamp at night.",
                f"**Lighthouse {i}**\n- guides ships\n- lamp",
            ],
            "rejected": [
                f"Lighthouse {i} is a bakery.",
                f"Lighthouse {i} is a bakery that sells bread every day.",
                f"**Lighthouse {i}**\n- bakery\n- bread",
            ],
        }
        for i in range(6)
    ]
    write_jsonl(tmp_path / "data.jsonl", records)
    recipe = write(
        tmp_path / "r.toml", pairs_only_recipe("rm-bench") + '\n[[metrics]]\nname = "rm-bench"\n'
    )
    db = tmp_path / "audit.db"
    assert rmaudit("run", str(recipe), "--db", str(db)).code == 0
    pairs, values = audited_pairs(db), results(db)
    assert len(pairs) == 9 * len(records)
    for label, scores in scores_by_rm(db).items():
        matrix = style_accuracy_matrix(
            [scores[c] for _, c, _, _, _ in pairs],
            [scores[r] for _, _, r, _, _ in pairs],
            [m["chosen_style"] for *_, m in pairs],
            [m["rejected_style"] for *_, m in pairs],
        )
        expected = style_difficulty(matrix)
        for level in ("easy", "normal", "hard", "average"):
            assert values[(label, f"rm_bench_{level}")] == pytest.approx(getattr(expected, level))


# -- pairs from the benchmark, and the shift sweep ------------------------------------------


@pytest.fixture(scope="module")
def shift_db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shift")
    recipe = write(folder / "shift.toml", SHIFT_RECIPE)
    db = folder / "shift.db"
    result = run_recipe(recipe, db)
    return db, recipe, result


def oracle_by_response(db: Path) -> dict[str, float]:
    return dict(stored(db, "select response_id, score from oracle_labels"))


def test_benchmark_pairs_are_every_oracle_ordered_pair(shift_db):
    db, _, _ = shift_db
    oracle = oracle_by_response(db)
    by_prompt: dict[str, list[str]] = {}
    for rid, pid in stored(db, "select id, prompt_id from responses where policy_key is not null"):
        by_prompt.setdefault(pid, []).append(rid)
    expected = {
        (a, b) if oracle[a] > oracle[b] else (b, a)
        for ids in by_prompt.values()
        for a, b in combinations(ids, 2)
        if oracle[a] != oracle[b]
    }
    assert {(c, r) for _, c, r, _, _ in audited_pairs(db)} == expected


def test_rank_bin_pairs_take_chosen_from_a_better_bin(tmp_path):
    recipe = write(
        tmp_path / "bins.toml",
        SHIFT_RECIPE.split("[pairs.shift]")[0].replace(
            'name = "benchmark-pairs"', 'name = "benchmark-pairs"\nmode = "rank-bins"\nbins = 3'
        )
        + RMS
        + '\n[[metrics]]\nname = "pair-accuracy"\n',
    )
    db = tmp_path / "bins.db"
    run_recipe(recipe, db)
    oracle = oracle_by_response(db)
    ranks = {}  # response → its bin (1 = best) among its prompt's responses
    by_prompt: dict[str, list[str]] = {}
    for rid, pid in stored(db, "select id, prompt_id from responses order by sample_index"):
        by_prompt.setdefault(pid, []).append(rid)
    for ids in by_prompt.values():
        best_first = sorted(ids, key=lambda rid: -oracle[rid])
        for bin_number, members in enumerate(np.array_split(np.array(best_first), 3), start=1):
            ranks.update({rid: bin_number for rid in members})
    pairs = audited_pairs(db)
    ties = stored(db, "select count(*) from failures where stage = 'pairs'")[0][0]
    assert len(pairs) + ties == 4 * 3  # 4 prompts × every pair of 3 bins
    for _, chosen, rejected, subset, _ in pairs:
        assert subset == f"bin {ranks[chosen]} > bin {ranks[rejected]}"
        assert ranks[chosen] < ranks[rejected] and oracle[chosen] > oracle[rejected]


def shifted_rows(db: Path) -> list[dict]:
    rows = stored(
        db,
        """select p.original_pair_id, p.shift_target, p.shift_level, p.prompt_id,
                                o.prompt_id, pp.text, op.text, c.text, oc.text, r.text, orr.text,
                                p.chosen_id, p.rejected_id, p.perturber_key
                         from pairs p join pairs o on o.id = p.original_pair_id join prompts pp on
                         pp.id = p.prompt_id join prompts op on op.id = o.prompt_id join responses c
                         on c.id = p.chosen_id join responses oc on oc.id = o.chosen_id join
                         responses r on r.id = p.rejected_id join responses orr on orr.id =
                         o.rejected_id""",
    )
    names = (
        "original",
        "target",
        "level",
        "prompt_id",
        "original_prompt_id",
        "prompt",
        "original_prompt",
        "chosen",
        "original_chosen",
        "rejected",
        "original_rejected",
        "chosen_id",
        "rejected_id",
        "perturber_key",
    )
    return [dict(zip(names, row, strict=True)) for row in rows]


def test_prompt_shift_leaves_responses_untouched_and_vice_versa(shift_db):
    db, _, _ = shift_db
    rows = shifted_rows(db)
    pairs = len(audited_pairs(db))
    assert len(rows) == pairs * 3 * (len(LEVELS) - 1)
    by_target = {t: [r for r in rows if r["target"] == t] for t in ("prompt", "response", "both")}
    for row in by_target["prompt"]:
        assert (row["chosen"], row["rejected"]) == (
            row["original_chosen"],
            row["original_rejected"],
        )
        assert row["prompt_id"] != row["original_prompt_id"]
    for row in by_target["response"]:
        assert row["prompt_id"] == row["original_prompt_id"]
    # the shifted part was edited (the edit rate itself is tested with the perturbers)
    assert any(r["prompt"] != r["original_prompt"] for r in by_target["prompt"])
    assert any(r["chosen"] != r["original_chosen"] for r in by_target["response"])
    # "both" is exactly the prompt shift and the response shift together
    alone = {(r["original"], r["level"], r["target"]): r for r in rows}
    for row in by_target["both"]:
        key = (row["original"], row["level"])
        assert row["prompt"] == alone[(*key, "prompt")]["prompt"]
        assert row["chosen"] == alone[(*key, "response")]["chosen"]
        assert row["rejected"] == alone[(*key, "response")]["rejected"]


def test_shifted_texts_are_the_perturbers_output(shift_db):
    db, _, _ = shift_db
    for row in shifted_rows(db):
        perturber = WordPerturb(WordPerturb.Options(p=row["level"]))
        assert row["perturber_key"] == perturber.key
        if row["target"] != "response":
            assert row["prompt"] == perturber.perturb(row["original_prompt"], seed=7)
        if row["target"] != "prompt":
            assert row["chosen"] == perturber.perturb(row["original_chosen"], seed=7)


def test_every_response_is_scored_once_per_rm(shift_db):
    db, _, _ = shift_db
    needed = {
        rid for c, r in stored(db, "select chosen_id, rejected_id from pairs") for rid in (c, r)
    }
    needed |= {
        rid for (rid,) in stored(db, "select id from responses where policy_key is not null")
    }
    for label, scores in scores_by_rm(db).items():
        assert set(scores) == needed, label
    assert table_counts(db)["rm_scores"] == 2 * len(needed)


def test_stored_shift_curves_equal_the_pure_functions_on_stored_scores(shift_db):
    db, _, _ = shift_db
    pairs = audited_pairs(db)
    rows = shifted_rows(db)
    stored_curves, values = curves(db), results(db)
    for label, scores in scores_by_rm(db).items():
        base = (
            np.array([scores[c] for _, c, _, _, _ in pairs]),
            np.array([scores[r] for _, _, r, _, _ in pairs]),
        )
        in_dist = -energy_score(*base)
        assert values[(label, "accuracy")] == pytest.approx(accuracy(*base).value)
        for target in ("prompt", "response", "both"):
            by_original = {(r["original"], r["level"]): r for r in rows if r["target"] == target}
            expected = {key: [] for key in ("accuracy", "confidence", "ece", "auroc", "fpr95")}
            for level in LEVELS:
                if level == 0:
                    chosen, rejected = base
                else:
                    shifted = [by_original[(pid, level)] for pid, *_ in pairs]
                    chosen = np.array([scores[r["chosen_id"]] for r in shifted])
                    rejected = np.array([scores[r["rejected_id"]] for r in shifted])
                    if target == "both" and level == 0.5:
                        assert values[(label, "ood_auroc")] == pytest.approx(
                            auroc(in_dist, -energy_score(chosen, rejected))
                        )
                        assert values[(label, "ood_fpr95")] == pytest.approx(
                            fpr_at_95_tpr(in_dist, -energy_score(chosen, rejected))
                        )
                expected["accuracy"].append(accuracy(chosen, rejected).value)
                expected["confidence"].append(confidence(chosen, rejected).mean())
                expected["ece"].append(ece(chosen, rejected).value)
                expected["auroc"].append(auroc(in_dist, -energy_score(chosen, rejected)))
                expected["fpr95"].append(fpr_at_95_tpr(in_dist, -energy_score(chosen, rejected)))
            for quantity, want in expected.items():
                x, value = stored_curves[(label, f"shift_{quantity}_{target}")]
                np.testing.assert_allclose(x, LEVELS)
                np.testing.assert_allclose(value, want, err_msg=f"{label} {quantity} {target}")
    assert stored(
        db, "select higher_is_better from metric_results where key = 'ood_fpr95' limit 1"
    ) == [(0,)]


def test_rerunning_the_sweep_perturbs_and_scores_nothing(shift_db):
    db, recipe, first = shift_db
    before = table_counts(db)
    again = run_recipe(recipe, db)
    assert all(c.pending == 0 for c in again.counts), again.counts
    assert table_counts(db) == before
    plan = Runner(load_recipe(recipe), Store.open_readonly(db)).plan()
    shifted = next(c for c in plan if c.stage == "shifted pairs")
    assert shifted.total == before["pairs"] - len(audited_pairs(db)) and shifted.pending == 0
    assert all(c.pending == 0 for c in plan), plan


def test_the_sweep_is_shown_by_its_panel_and_in_the_report(shift_db, rmaudit, tmp_path):
    from rmaudit.results.panels import PanelContext, panel_views
    from rmaudit.results.summary import latest_run_id, load_summary

    db, _, _ = shift_db
    store = Store.open_readonly(db)
    summary = load_summary(store, latest_run_id(store))
    context = PanelContext(store, summary, tuple(key for _, key in summary.reward_models))
    titles = [view.title for view in panel_views(context)]
    assert "Shift sweep" in titles
    assert not [t for t in titles if t.startswith("Curve: shift_")]  # the panel claims them all
    report = rmaudit("report", str(db), "--out", str(tmp_path / "report"))
    assert report.code == 0, report.err
    # one figure per quantity, every RM and target on it
    assert {"shift-accuracy.png", "shift-auroc.png"} <= {
        p.name for p in (tmp_path / "report").iterdir()
    }


# -- the shipped recipes -------------------------------------------------------------------


def test_the_rewardbench_recipe_audits_the_example_file(rmaudit, tmp_path):
    db = tmp_path / "rb.db"
    result = rmaudit("run", str(ROOT / "recipes" / "rewardbench.toml"), "--db", str(db))
    assert result.code == 0, result.err
    lines = (ROOT / "examples" / "rewardbench-mini.jsonl").read_text().splitlines()
    assert f"pairs: {len(lines)} from {len(lines)} records" in result.err
    keys = {key for _, key in results(db)}
    assert {
        "accuracy",
        "accuracy[math-prm]",
        "section_score",
        "section[Chat Hard]",
        "ece",
        "bt_ece",
    } <= keys


def test_the_shift_recipe_plans_the_whole_sweep(rmaudit):
    recipe = load_recipe(ROOT / "recipes" / "shift.toml")
    assert recipe.shift.levels == [round(0.05 * i, 2) for i in range(16)]
    assert recipe.shift.targets == ["prompt", "response", "both"]
    result = rmaudit(
        "run",
        str(ROOT / "recipes" / "shift.toml"),
        "--dry-run",
        "--db",
        str(ROOT / "nonexistent.db"),
    )
    assert result.code == 0, result.err
    # before the benchmark is built, the pairs are bounded: 48 prompts × every pair of 8
    # responses (ties drop out); 15 levels × 3 targets of them; one response per original
    # response, level and target to score besides the 384 of the benchmark
    for stage, bound in (
        ("pairs", 48 * 28),
        ("shifted pairs", 48 * 28 * 45),
        ("scores: honest", 384 + 384 * 45),
    ):
        row = next(line for line in result.out.splitlines() if line.startswith(f"│ {stage} "))
        assert f"≤ {bound:,}" in row, row


def test_a_database_of_the_previous_schema_gains_the_pair_tables(tmp_path, write_recipe):
    from rmaudit.store.schema import SCHEMA_VERSION, migrate

    path = tmp_path / "old.db"
    old = sqlite3.connect(path, isolation_level=None)
    migrate(old, stop_before="m002_preference_pairs")
    assert "pairs" not in {name for (name,) in old.execute("select name from sqlite_master")}
    old.close()
    store = Store.open(path)
    try:
        assert {"pairs", "pair_sets"} <= store.tables()
        assert stored(
            path, "select count(*) from pragma_table_info('runs') where name = 'pair_set_key'"
        ) == [(1,)]
        assert stored(path, "select schema_version from schema_info") == [(SCHEMA_VERSION,)]
        Runner(load_recipe(write_recipe()), store).run()  # the benchmark audit still runs on it
    finally:
        store.close()
