"""``rmaudit audit --recorded-judges``: the judges whose outputs their publishers released
(LLMBar's evaluators, JudgeBench's outputs) audited from hand-built folders in those layouts,
each configuration one model, the publisher's figures beside rmaudit's equal to the
publisher's rule computed here from its definition."""

from __future__ import annotations

import gzip
import json
import tomllib
from pathlib import Path

import numpy as np
import pytest
from _recorded import (
    LLMBAR_SUBSETS,
    PROCESSED_SUBSETS,
    judgebench_outputs,
    judgebench_pairs,
    judgebench_rule,
    llmbar_dataset,
    llmbar_ratings,
    llmbar_winners,
    matches_statistics,
    rated_winners,
    write_evaluator,
)
from _support import metric_rows


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")


def audit(rmaudit, data: Path, db: Path, *args: str):
    return rmaudit(
        "audit", "--recorded-judges", "--data-dir", str(data), "--db", str(db), "--json", *args
    )


def models_of(done, suite: str | None = None) -> dict[str, dict]:
    suites = json.loads(done.out)["suites"]
    chosen = next(s for s in suites if suite is None or s["suite"] == suite)
    return {m["label"]: m for m in chosen["models"]}


def judge_accuracy(records, winners) -> float:
    """rmaudit's accuracy in both orders, from its definition: per pair the mean over the
    orders with a verdict of 1 (the better answer preferred), ½ (a tie), 0; pairs without a
    verdict in either order left out."""
    per_pair = []
    for record, orders in zip(records, winners, strict=True):
        credits = [
            0.5 if w == "tie" else float(w == str(record["label"])) for w in orders if w is not None
        ]
        if credits:
            per_pair.append(np.mean(credits))
    return float(np.mean(per_pair))


def test_llmbar_judges_reproduce_their_statistics_and_rmaudit_audits_them(rmaudit, tmp_path):
    data = tmp_path / "data"
    records = llmbar_dataset(data)
    expected = {}
    for seed, (folder, _) in enumerate(LLMBAR_SUBSETS):
        winners = llmbar_winners(records[folder], seed)
        write_evaluator(data, folder, "Judge/Vanilla", records[folder], winners)
        ratings = llmbar_ratings(records[folder], seed)
        rated = [rated_winners(r) for r in ratings]
        write_evaluator(data, folder, "Judge/Rating", records[folder], rated, ratings)
        expected[folder] = (winners, ratings)
    done = audit(rmaudit, data, tmp_path / "a.db", "--suite", "llmbar")
    assert done.code == 0, done.err
    models = models_of(done)
    assert set(models) == {"Judge/Vanilla", "Judge/Rating", "length", "random"}
    for label in ("Judge/Vanilla", "Judge/Rating"):
        publisher = models[label]["publisher"]
        assert publisher["name"] == "LLMBar" and "unparsed verdict wrong" in publisher["rule"]
        for folder, subset in LLMBAR_SUBSETS:
            stats_path = (
                data / "llmbar/LLMBar" / folder / "evaluators" / label / "statistics.json.gz"
            )
            statistics = json.loads(gzip.decompress(stats_path.read_bytes()))
            assert matches_statistics(publisher["subsets"][subset], statistics), (label, subset)
    # rmaudit's own: the winners as verdicts, and a rating judge's ratings compared
    vanilla = models["Judge/Vanilla"]["judge"]
    rating = models["Judge/Rating"]["judge"]
    for folder, subset in LLMBAR_SUBSETS:
        winners, ratings = expected[folder]
        assert vanilla[f"judge_accuracy[{subset}]"]["value"] == pytest.approx(
            judge_accuracy(records[folder], winners)
        )
        from_ratings = [_rated_verdicts(r) for r in ratings]
        assert rating[f"judge_accuracy[{subset}]"]["value"] == pytest.approx(
            judge_accuracy(records[folder], from_ratings)
        )
        # a rating judge rates each answer alone: no position bias, and never inconsistent
        assert rating[f"position_bias[{subset}]"]["value"] == pytest.approx(0.0)
        assert rating[f"consistency[{subset}]"]["value"] == 1.0


def _rated_verdicts(ratings: tuple[str, str]) -> tuple[str | None, str | None]:
    """The verdicts rmaudit reads from two ratings, as winners in the original numbering."""
    if not all(ratings):
        return None, None
    one, two = map(float, ratings)
    verdict = "1" if one > two else "2" if two > one else "tie"
    return verdict, verdict


def test_a_judge_recorded_on_some_subsets_is_audited_on_those(rmaudit, tmp_path):
    data = tmp_path / "data"
    records = llmbar_dataset(data)
    for seed, (folder, _) in enumerate(LLMBAR_SUBSETS):
        winners = llmbar_winners(records[folder], seed)
        write_evaluator(data, folder, "Full/CoT", records[folder], winners)
        if folder in ("Natural", "Adversarial/GPTOut"):
            write_evaluator(data, folder, "Some/CoT", records[folder], winners)
    done = audit(rmaudit, data, tmp_path / "a.db", "--suite", "llmbar")
    assert done.code == 0, done.err
    narrowed = "llmbar@llmbar-natural+llmbar-adver-GPTOut"
    assert "Some/CoT: recorded on llmbar-natural, llmbar-adver-GPTOut only" in done.err
    assert f"as suite {narrowed}" in done.err
    assert "Some/CoT" not in models_of(done, "llmbar")
    some = models_of(done, narrowed)["Some/CoT"]
    assert set(some["publisher"]["subsets"]) == {"llmbar-natural", "llmbar-adver-GPTOut"}
    assert some["metrics"]["accuracy"]["n"] == 2 * len(records["Natural"])


def test_llmbar_processed_reads_the_same_layout(rmaudit, tmp_path):
    data = tmp_path / "data"
    records = llmbar_dataset(data, PROCESSED_SUBSETS, base="Processed")
    for seed, (folder, _) in enumerate(PROCESSED_SUBSETS):
        winners = llmbar_winners(records[folder], seed)
        write_evaluator(
            data, folder, "GPT-4/Vanilla_NoRules", records[folder], winners, base="Processed"
        )
    done = audit(rmaudit, data, tmp_path / "a.db", "--suite", "llmbar-processed")
    assert done.code == 0, done.err
    judge = models_of(done)["GPT-4/Vanilla_NoRules"]
    assert set(judge["publisher"]["subsets"]) == {subset for _, subset in PROCESSED_SUBSETS}
    for folder, subset in PROCESSED_SUBSETS:
        path = data / "llmbar/Processed" / folder / "evaluators/GPT-4/Vanilla_NoRules"
        statistics = json.loads(gzip.decompress((path / "statistics.json.gz").read_bytes()))
        assert matches_statistics(judge["publisher"]["subsets"][subset], statistics)


def _linked_to_blobs(data: Path, paths: list[Path]) -> None:
    """Each file or folder moved into a blob store beside ``data`` and a link left in its
    place, as the Hugging Face cache links a snapshot's files to its blobs (or ``cp -rs``
    links a copy's files): what lies beside a file (an evaluators/ or outputs/ folder) lies
    beside the link, not beside its target."""
    blobs = data.parent / "blobs"
    for number, path in enumerate(paths):
        blob = blobs / f"blob{number}" / path.name
        blob.parent.mkdir(parents=True)
        path.rename(blob)
        path.symlink_to(blob)


def test_recorded_judges_are_found_beside_linked_data_files(rmaudit, tmp_path):
    data = tmp_path / "data"
    records = llmbar_dataset(data)
    for seed, (folder, _) in enumerate(LLMBAR_SUBSETS):
        write_evaluator(
            data, folder, "Judge/Vanilla", records[folder], llmbar_winners(records[folder], seed)
        )
    pairs = judgebench_pairs(data)
    judgebench_outputs(data, pairs, "arena_hard", "judge-model")
    subsets = [data / "llmbar/LLMBar" / folder for folder, _ in LLMBAR_SUBSETS]
    _linked_to_blobs(
        data,
        [folder / "dataset.json" for folder in subsets]
        + [folder / "evaluators" for folder in subsets]
        + [data / "judgebench/gpt-4o-2024-05-13.jsonl.gz"],
    )
    done = audit(rmaudit, data, tmp_path / "a.db", "--suite", "llmbar", "--suite", "judgebench")
    assert done.code == 0, done.err
    judge = models_of(done, "llmbar")["Judge/Vanilla"]
    # each result file's figures under its own subset (the links' folders, not the blobs')
    assert set(judge["publisher"]["subsets"]) == {subset for _, subset in LLMBAR_SUBSETS}
    assert "judge-model" in models_of(done, "judgebench")


def test_judgebench_judges_and_reward_models(rmaudit, tmp_path):
    data = tmp_path / "data"
    pairs = judgebench_pairs(data)
    judgebench_outputs(data, pairs, "arena_hard", "judge-model")
    judgebench_outputs(data, pairs, "vanilla", "shared-model")
    judgebench_outputs(data, pairs, "arena_hard", "the-shared-model").rename(
        data / "judgebench/outputs/dataset=judgebench,response_model=gpt-4o-2024-05-13,"
        "judge_name=arena_hard,judge_model=shared-model.jsonl"
    )
    rm_file = judgebench_outputs(data, pairs, "reward_model", "org_rm", scores=True)
    claude = judgebench_pairs(data, "claude-3-5-sonnet-20240620")
    judgebench_outputs(data, claude, "arena_hard", "claude-judge")
    done = audit(rmaudit, data, tmp_path / "a.db", "--suite", "judgebench")
    assert done.code == 0, done.err
    models = models_of(done)
    assert set(models) == {
        "judge-model",
        "vanilla/shared-model",
        "arena_hard/shared-model",
        "org_rm",
        "length",
        "random",
    }
    records = [json.loads(line) for line in rm_file.read_text().splitlines()]
    for label in ("judge-model", "org_rm"):
        file = next((data / "judgebench/outputs").glob(f"*judge_model={label}.jsonl"))
        recorded = [json.loads(line) for line in file.read_text().splitlines()]
        correct = [
            judgebench_rule(r["label"], [g and g["decision"] for g in r["judgments"]])
            for r in recorded
        ]
        publisher = models[label]["publisher"]
        assert publisher["name"] == "JudgeBench"
        assert publisher["overall"]["correct"] == sum(correct)
        assert publisher["overall"]["score"] == pytest.approx(np.mean(correct))
        knowledge = [
            c for c, r in zip(correct, recorded, strict=True) if r["source"].startswith("mmlu-pro")
        ]
        assert publisher["subsets"]["Knowledge"]["correct"] == sum(knowledge)
        assert list(publisher["subsets"]) == ["Knowledge", "Reasoning", "Math", "Coding"]
    # the reward model: each response scored by its recorded scores; the pair right when the
    # correct response scores higher (mean of the two games; here they agree)
    right = [
        (g[0]["judgment"]["scores"][0] > g[0]["judgment"]["scores"][1]) == (r["label"] == "A>B")
        for r in records
        for g in [r["judgments"]]
    ]
    assert models["org_rm"]["metrics"]["accuracy"]["value"] == pytest.approx(np.mean(right))
    assert "judge" not in models["org_rm"]
    # the Claude pairs, by option
    done = audit(
        rmaudit, data, tmp_path / "c.db", "--suite", "judgebench", "--judgebench-pairs", "claude"
    )
    assert done.code == 0, done.err
    assert set(models_of(done)) == {"claude-judge", "length", "random"}


def test_the_printed_recipe_is_the_flag_s_equivalent(rmaudit, tmp_path):
    data = tmp_path / "data"
    pairs = judgebench_pairs(data)
    judgebench_outputs(data, pairs, "arena_hard", "judge-model")
    printed = rmaudit(
        "audit",
        "--suite",
        "judgebench",
        "--recorded-judges",
        "--data-dir",
        str(data),
        "--print-recipe",
    )
    assert printed.code == 0, printed.err
    recipe = tomllib.loads(printed.out)
    judges = [t for t in recipe["reward_models"] if t["name"] == "judgebench-judge"]
    assert [j["label"] for j in judges] == ["judge-model"]
    (tmp_path / "recipe.toml").write_text(printed.out, encoding="utf-8")
    ran = rmaudit("run", str(tmp_path / "recipe.toml"), "--db", str(tmp_path / "r.db"))
    flagged = audit(rmaudit, data, tmp_path / "a.db", "--suite", "judgebench")
    assert ran.code == 0 and flagged.code == 0, ran.err + flagged.err
    assert metric_rows(tmp_path / "r.db") == metric_rows(tmp_path / "a.db")


def _llmbar_with_judge(data: Path) -> None:
    records = llmbar_dataset(data)
    for folder, _ in LLMBAR_SUBSETS:
        write_evaluator(
            data, folder, "Judge/Vanilla", records[folder], llmbar_winners(records[folder], 0)
        )


def _no_evaluators(data: Path) -> list[str]:
    llmbar_dataset(data)
    return ["--suite", "llmbar"]


def _malformed_result(data: Path) -> list[str]:
    _llmbar_with_judge(data)
    path = data / "llmbar/LLMBar/Adversarial/Manual/evaluators/Judge/Vanilla/result.json.gz"
    results = json.loads(gzip.decompress(path.read_bytes()))
    results[2]["results"][-1]["swap = True"]["winner"] = "3"
    path.write_bytes(gzip.compress(json.dumps(results).encode()))
    return ["--suite", "llmbar"]


def _verdicts_for_another_suite(data: Path) -> list[str]:
    records = llmbar_dataset(data)
    judgebench_pairs(data)
    rows = [
        {"prompt": r["input"], "answer_a": a, "answer_b": b, "verdict": "A"}
        for r in records["Natural"]
        for a, b in ((r["output_1"], r["output_2"]), (r["output_2"], r["output_1"]))
    ]
    file = data / "llmbar-verdicts.jsonl"
    file.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return [f"verdicts:{file}", "--suite", "judgebench"]


def _game_missing(data: Path) -> list[str]:
    pairs = judgebench_pairs(data)
    path = judgebench_outputs(data, pairs, "arena_hard", "judge-model")
    lines = path.read_text().splitlines()
    record = json.loads(lines[3])
    record["judgments"] = record["judgments"][:1]
    lines[3] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    return ["--suite", "judgebench"]


def _decision_unknown(data: Path) -> list[str]:
    """Arena-Hard's strong verdict, which run_judge.py maps to "A>B" before writing."""
    pairs = judgebench_pairs(data)
    path = judgebench_outputs(data, pairs, "arena_hard", "judge-model")
    lines = path.read_text().splitlines()
    record = json.loads(lines[2])
    record["judgments"][1] = {"judgment": {"response": "[[A>>B]]"}, "decision": "A>>B"}
    lines[2] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    return ["--suite", "judgebench"]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (_no_evaluators, "--recorded-judges: no recorded judges for suite llmbar under"),
        (
            _malformed_result,
            "Manual/evaluators/Judge/Vanilla/result.json.gz:record 3: "
            "results[-1].swap = True.winner: expected the winner",
        ),
        (_verdicts_for_another_suite, "none of the file's 12 rows is a pair of this suite"),
        (_game_missing, ".jsonl:4: judgments: a game missing: 1 of the 2 games"),
        (
            _decision_unknown,
            '.jsonl:3: judgments[1].decision: expected the decision "A>B", "B>A", "A=B" or '
            "null (run_judge.py writes no other) (got 'A>>B')",
        ),
    ],
    ids=[
        "no evaluator folder",
        "malformed result file",
        "wrong suite",
        "game missing",
        "decision unknown",
    ],
)
def test_bad_recorded_outputs_are_one_line_and_nothing_is_written(make, said, rmaudit, tmp_path):
    data = tmp_path / "data"
    extra = make(data)
    flag = [] if extra[0].startswith("verdicts:") else ["--recorded-judges"]
    db = tmp_path / "a.db"
    done = rmaudit("audit", *flag, *extra, "--data-dir", str(data), "--db", str(db))
    assert done.code == 2 and said in done.err, done.err
    assert len(done.err.strip().splitlines()) == 1
    assert not db.exists() and not db.with_suffix(".results.json").exists()


def test_a_bad_file_leaves_an_existing_db_byte_identical(rmaudit, tmp_path):
    data = tmp_path / "data"
    _llmbar_with_judge(data)
    db = tmp_path / "a.db"
    assert audit(rmaudit, data, db, "--suite", "llmbar").code == 0
    before = db.read_bytes()
    _malformed_result(data)
    done = audit(rmaudit, data, db, "--suite", "llmbar")
    assert done.code == 2 and "expected the winner" in done.err
    assert db.read_bytes() == before


def test_two_judges_recorded_in_identical_files_are_one_line(rmaudit, tmp_path):
    data = tmp_path / "data"
    pairs = judgebench_pairs(data)
    first = judgebench_outputs(data, pairs, "arena_hard", "one")
    first.with_name(first.name.replace("=one", "=eno")).write_bytes(first.read_bytes())
    done = audit(rmaudit, data, tmp_path / "a.db", "--suite", "judgebench")
    assert done.code == 2 and "the same model as reward_models[2] (label 'eno')" in done.err
    assert len(done.err.strip().splitlines()) == 1 and not (tmp_path / "a.db").exists()
