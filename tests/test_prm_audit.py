"""``rmaudit audit PRM --suite prmbench`` / ``--suite processbench`` end to end on small data
folders in the benchmarks' own layouts (tests/_prm_data.py): per-class PRMScore and
ProcessBench F1 recomputed by hand (scikit-learn, the QwenLM rule) from the stored step
scores, --write-items rows coming back as step-scores:FILE, reruns that score nothing, and bad
input: one line, exit 2, nothing written."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from _prm_data import write_prmbench, write_processbench
from _prm_reads import (
    one_line_exit_2,
    prmscore_by_hand,
    processbench_f1_by_hand,
    solution_positions,
    step_scores,
    stored,
    suite_values,
)

from rmaudit.suites import PROCESSBENCH_SPLITS


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the audit's DB and results file land here


@pytest.fixture
def prmbench(tmp_path) -> Path:
    return write_prmbench(tmp_path / "data")


@pytest.fixture
def processbench(tmp_path) -> Path:
    return write_processbench(tmp_path / "data")


def test_prmbench_prints_each_class_with_its_plus_minus_and_matches_a_hand_computation(
    rmaudit, prmbench, tmp_path
):
    done = rmaudit(
        "audit",
        "random",
        "step-length",
        "--suite",
        "prmbench",
        "--data-dir",
        str(prmbench),
        "--details",  # each class's table
    )
    assert done.code == 0, done.err
    for needle in ("PRMScore", "circular", "multi_solutions", "paired over 3 questions", "±"):
        assert needle in done.out, needle
    assert "PRMScore by step threshold" in done.out and "t=0.00" in done.out
    assert "prmbench: a model passes by beating each of random" in done.out
    db = tmp_path / "rmaudit-audit.db"
    payload = json.loads((tmp_path / "rmaudit-audit.results.json").read_text())
    values = suite_values(payload)
    positions = solution_positions(db)
    assert len(positions) == 8 * 2 * 4 + 8
    for label in ("random", "step-length"):
        scores = step_scores(db, label)
        for subset in ("circular", "redundency", "multi_solutions", None):
            kept = [p for p in positions if subset is None or p[1] == subset]
            hand = prmscore_by_hand(scores, kept, multi=subset == "multi_solutions")
            name = subset or "PRMScore"
            assert values[label][name]["value"] == pytest.approx(hand), (label, name)
            assert values[label][name]["stderr"] > 0
            assert values[label][name]["unit"] == "questions"
    (suite,) = payload["suites"]
    assert suite["comparisons"][0]["standings"] is not None
    assert {c["bar"] for c in suite["models"][0]["against"]} == set()  # both are baselines


def test_processbench_f1_per_split_matches_the_qwen_rule_and_aggregations_are_compared(
    rmaudit, processbench, tmp_path
):
    done = rmaudit(
        "audit", "step-length", "--suite", "processbench", "--data-dir", str(processbench), "--json"
    )
    assert done.code == 0, done.err
    payload = json.loads(done.out)
    values = suite_values(payload)
    db = tmp_path / "rmaudit-audit.db"
    positions = solution_positions(db)
    scores = step_scores(db, "step-length")
    f1s = []
    for split in PROCESSBENCH_SPLITS:
        f1 = processbench_f1_by_hand(scores, [p for p in positions if p[1] == split])
        f1s.append(f1)
        assert values["step-length"][split]["value"] == pytest.approx(f1), split
    assert values["step-length"]["avg F1"]["value"] == pytest.approx(np.mean(f1s))
    (suite,) = payload["suites"]
    standings = suite["aggregations"][0]["standings"]
    assert {s["model"] for s in standings} == {"min", "last", "product", "mean"}
    assert all(s["letters"] for s in standings)


def test_a_split_without_a_correct_solution_leaves_f1_undefined_and_reruns_pass(
    rmaudit, processbench, tmp_path
):
    """ProcessBench's F1 on a split whose every solution is wrong is undefined (no accuracy on
    correct ones to take the harmonic mean with), for every baseline: the bars line says so,
    and an audit of the baselines alone, and its rerun, exit 0 (they failed on max() of no
    bars)."""
    split = PROCESSBENCH_SPLITS[0]
    path = processbench / "processbench" / f"{split}.json"
    rows = json.loads(path.read_text())
    path.write_text(json.dumps([{**row, "label": max(row["label"], 0)} for row in rows]))
    argv = ["audit", "random", "step-length", "--suite", "processbench"]
    for attempt in ("first", "rerun"):
        done = rmaudit(*argv, "--data-dir", str(processbench))
        assert done.code == 0, (attempt, done.err)
        assert (
            "processbench: a model passes by beating each of random —, step-length — "
            "(undefined for each of them here) on avg F1"
        ) in done.out
    assert "new work: none" in done.err
    db = tmp_path / "rmaudit-audit.db"
    positions = solution_positions(db)
    assert not any(p[1] == split and p[2]["first_error"] == -1 for p in positions)
    values = suite_values(json.loads((tmp_path / "rmaudit-audit.results.json").read_text()))
    for label in ("random", "step-length"):
        assert values[label][split]["value"] is None and values[label]["avg F1"]["value"] is None
        kept = [p for p in positions if p[1] == PROCESSBENCH_SPLITS[1]]
        hand = processbench_f1_by_hand(step_scores(db, label), kept)
        assert values[label][PROCESSBENCH_SPLITS[1]]["value"] == pytest.approx(hand)


def test_an_aggregation_that_overflows_is_undefined_and_said_so(rmaudit, processbench, tmp_path):
    """Step scores of 1e308 overflow the product and the mean (inf, or inf × 0 = NaN): their
    AUROC is undefined, stored as none and said so, not an AUROC of NaN scores; min and last
    stand, equal to scikit-learn's AUROC of the same solution scores."""
    from sklearn.metrics import roc_auc_score

    items = tmp_path / "items.jsonl"
    argv = ["--suite", "processbench", "--data-dir", str(processbench)]
    assert rmaudit("audit", *argv, "--write-items", str(items)).code == 0
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    for i, row in enumerate(rows):
        steps = len(row["steps"])
        huge = [1e308] * (steps - 1) + [0.0]  # product NaN (inf × 0) or 0, mean inf or finite
        row["step_scores"] = [0.1 + 0.05 * (i % 7)] * steps if i % 3 else huge
    scored = tmp_path / "huge.jsonl"
    scored.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = rmaudit("audit", f"step-scores:{scored}", *argv, "--details")
    assert done.code == 0, done.err
    assert "huge: AUROC product: undefined: the product of " in done.out
    assert "(AUROC product, mean undefined, left out)" in done.out
    assert "solutions' step scores is not a finite number (step scores up to 1e+308" in done.out
    values = suite_values(json.loads((tmp_path / "rmaudit-audit.results.json").read_text()))
    assert values["huge"]["AUROC product"]["value"] is None
    db = tmp_path / "rmaudit-audit.db"
    positions = solution_positions(db)
    scores = step_scores(db, "huge")
    correct = [p[2]["final_answer_correct"] for p in positions]
    for how, pick in (("min", np.min), ("last", lambda s: s[-1])):
        by_hand = roc_auc_score(correct, [pick(scores[p[0]]) for p in positions])
        assert values["huge"][f"AUROC {how}"]["value"] == pytest.approx(by_hand), how


def test_an_auroc_without_both_classes_is_left_out_of_the_brief_and_said_so(
    rmaudit, processbench, tmp_path
):
    """Every final answer correct: no aggregation's AUROC is defined. The brief's
    aggregation block says each PRM's were left out and points to --details, which says why
    (the block once vanished unsaid); the run still exits 0."""
    for path in (processbench / "processbench").glob("*.json"):
        rows = json.loads(path.read_text())
        path.write_text(json.dumps([{**row, "final_answer_correct": True} for row in rows]))
    argv = ["audit", "step-length", "--suite", "processbench", "--data-dir", str(processbench)]
    done = rmaudit(*argv)
    assert done.code == 0, done.err
    positions = solution_positions(tmp_path / "rmaudit-audit.db")
    assert positions and all(p[2]["final_answer_correct"] for p in positions)
    for label in ("step-length", "random"):
        assert (
            f"{label}: AUROC by aggregation: not compared (AUROC min, last, product, mean "
            "undefined, left out)"
        ) in done.out
    assert "an undefined AUROC is left out; why: --details" in done.out
    assert "no two classes to tell apart" not in done.out
    detailed = rmaudit(*argv, "--details")
    assert detailed.code == 0, detailed.err
    assert (
        f"step-length: AUROC min: undefined: the final answer of every one of {len(positions)} "
        "solutions is correct: no two classes to tell apart"
    ) in detailed.out
    values = suite_values(json.loads((tmp_path / "rmaudit-audit.results.json").read_text()))
    assert values["step-length"]["AUROC min"]["value"] is None


def test_written_solutions_come_back_as_step_scores(rmaudit, prmbench, tmp_path):
    items = tmp_path / "solutions.jsonl"
    wrote = rmaudit(
        "audit", "--suite", "prmbench", "--data-dir", str(prmbench), "--write-items", str(items)
    )
    assert wrote.code == 0, wrote.err
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    source = prmbench / "prmbench" / "prm800k_test_p1_4o_circular.jsonl.gz"
    first = json.loads(gzip.decompress(source.read_bytes()).decode().splitlines()[0])
    assert first["modified_process"] in [row["steps"] for row in rows]  # exactly as the data
    assert {"suite", "id", "subset", "question", "steps"} <= set(rows[0])
    # scored elsewhere as step-length scores them: the same numbers as the baseline
    for row in rows:
        row["step_scores"] = [len(step) / (len(step) + 100) for step in row["steps"]]
    mine = tmp_path / "mine.jsonl"
    mine.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = rmaudit(
        "audit", f"step-scores:{mine}", "--suite", "prmbench", "--data-dir", str(prmbench), "--json"
    )
    assert done.code == 0, done.err
    values = suite_values(json.loads(done.out))
    for name, metric in values["step-length"].items():
        assert values["mine"][name]["value"] == pytest.approx(metric["value"]), name
    again = rmaudit(
        "audit", f"step-scores:{mine}", "--suite", "prmbench", "--data-dir", str(prmbench)
    )
    assert again.code == 0 and "new work: none" in again.err, again.err


def test_bad_step_scores_are_one_line_and_leave_the_db_alone(rmaudit, prmbench, tmp_path):
    items = tmp_path / "solutions.jsonl"
    rmaudit(
        "audit", "--suite", "prmbench", "--data-dir", str(prmbench), "--write-items", str(items)
    )
    db = tmp_path / "rmaudit-audit.db"
    before = db.read_bytes()
    rows = [json.loads(line) for line in items.read_text().splitlines()]

    def attempt(name: str, edit) -> object:
        edited = [dict(row, step_scores=[0.5] * len(row["steps"])) for row in rows]
        edit(edited)
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in edited))
        return rmaudit(
            "audit", f"step-scores:{path}", "--suite", "prmbench", "--data-dir", str(prmbench)
        )

    one_line_exit_2(
        attempt("short", lambda r: r[2].update(step_scores=r[2]["step_scores"][:-1])),
        "short.jsonl:3",
        "step_scores",
        "step scores for",
    )
    one_line_exit_2(
        attempt("empty", lambda r: r[4].update(steps=[])), "empty.jsonl:5", "empty steps"
    )
    one_line_exit_2(
        attempt("nan", lambda r: r[0].update(step_scores=["x"] * len(r[0]["steps"]))),
        "nan.jsonl:1",
        "step_scores[0]",
        "finite number",
    )
    one_line_exit_2(attempt("missing", lambda r: r.pop()), "missing.jsonl", "no row for 1 of")
    assert db.read_bytes() == before


SHORT_PRM = """
from rmaudit import hookimpl
from rmaudit.components import ProcessRewardModel


class ShortPRM(ProcessRewardModel):
    \"\"\"Scores every step of a solution but its last.\"\"\"

    name = "short-prm"

    def score_steps(self, batch):
        return [[0.5] * (len(s.steps) - 1) for s in batch]


@hookimpl
def register_process_reward_models(register):
    register(ShortPRM)
"""


def test_a_prm_returning_too_few_step_scores_is_one_line_and_stores_none(
    rmaudit, processbench, tmp_path
):
    """A PRM's output is known only once it is called: the run stops at its first batch,
    names the PRM and the solution, and stores none of its step scores."""
    from types import ModuleType

    from rmaudit.testing import registered_plugin

    module = ModuleType("short_prm")
    exec(compile(SHORT_PRM, "short_prm.py", "exec"), module.__dict__)
    recipe = tmp_path / "short.toml"
    recipe.write_text(
        '[solutions.source]\nname = "processbench"\n'
        f"files = [{json.dumps(str(processbench / 'processbench' / 'gsm8k.json'))}]\n\n"
        '[[process_reward_models]]\nlabel = "short"\nname = "short-prm"\n'
    )
    first = json.loads((processbench / "processbench" / "gsm8k.json").read_text())[0]
    db = tmp_path / "short.db"
    with registered_plugin(module):
        done = rmaudit("run", str(recipe), "--db", str(db))
    assert done.code == 2 and "Traceback" not in done.err, done.err
    # after the progress the run showed, one line
    (error,) = [line for line in done.err.splitlines() if line.startswith("Error:")]
    assert error == done.err.strip().splitlines()[-1]
    assert "process_reward_models[0]" in error
    assert (
        f"'short' returned {len(first['steps']) - 1} step scores for a solution of "
        f"{len(first['steps'])} steps (solution {first['id']})"
    ) in error
    assert stored(db, "select count(*) from step_scores") == [(0,)]
    assert stored(db, "select status from runs") == [("failed",)]


def test_prm_suites_and_rm_suites_do_not_mix_and_rm_flags_are_refused(rmaudit, prmbench):
    one_line_exit_2(
        rmaudit(
            "audit",
            "random",
            "--suite",
            "prmbench",
            "--suite",
            "llmbar",
            "--data-dir",
            str(prmbench),
        ),
        "--suite",
        "separate audits",
    )
    one_line_exit_2(
        rmaudit(
            "audit", "random", "--suite", "prmbench", "--dpo-ref", "x", "--data-dir", str(prmbench)
        ),
        "--dpo-ref",
    )
    one_line_exit_2(
        rmaudit(
            "audit", "random", "--suite", "prmbench", "--sample", "5", "--data-dir", str(prmbench)
        ),
        "--sample",
    )
    one_line_exit_2(
        rmaudit("audit", "scores:x.jsonl", "--suite", "prmbench", "--data-dir", str(prmbench)),
        "step-scores:FILE",
    )
    one_line_exit_2(
        rmaudit("audit", "step-lenght", "--suite", "prmbench", "--data-dir", str(prmbench)),
        "did you mean step-length",
    )
    # a reward model's baseline is named as one, with the PRMs' own (not looked up on the hub)
    one_line_exit_2(
        rmaudit("audit", "length", "--suite", "prmbench", "--data-dir", str(prmbench)),
        "MODEL: a baseline of reward models; the suites of process reward models audit "
        "theirs, step-length and random",
    )


def test_a_hub_model_becomes_an_hf_prm_table(tmp_path, monkeypatch):
    from rmaudit import plugins
    from rmaudit.suites.prm_arguments import prm_tables

    monkeypatch.setattr(
        plugins,
        "component_names",
        lambda kind: {"random", "step-length", "hf-prm-classifier", "hf-prm-step-tag"},
    )
    tables = prm_tables(
        ["Qwen/Qwen2.5-Math-PRM-7B", "step-tag:peiyi9979/math-shepherd"], {"device": "cpu"}
    )
    assert tables[0] == {
        "label": "Qwen/Qwen2.5-Math-PRM-7B",
        "name": "hf-prm-classifier",
        "model": "Qwen/Qwen2.5-Math-PRM-7B",
        "device": "cpu",
    }
    assert (
        tables[1]["name"] == "hf-prm-step-tag" and tables[1]["model"] == "peiyi9979/math-shepherd"
    )
    assert [t["label"] for t in tables[2:]] == ["step-length", "random"]


def test_a_recipe_audits_prms_with_the_metrics_its_labels_allow(rmaudit, processbench, tmp_path):
    files = ", ".join(
        json.dumps(str(processbench / "processbench" / f"{s}.json")) for s in PROCESSBENCH_SPLITS
    )
    recipe = tmp_path / "prm.toml"
    recipe.write_text(
        f'[solutions.source]\nname = "processbench"\nfiles = [{files}]\n\n'
        '[[process_reward_models]]\nname = "random"\n\n'
        '[[process_reward_models]]\nlabel = "long"\nname = "step-length"\nhalf = 50\n'
    )
    done = rmaudit("run", str(recipe), "--db", str(tmp_path / "r.db"))
    assert done.code == 0, done.err
    metrics = {
        row[0] for row in stored(tmp_path / "r.db", "select distinct metric from metric_results")
    }
    assert metrics == {"processbench-f1", "step-aggregation"}  # not prmbench-score: no step marks
    recipe.write_text(recipe.read_text() + '\n[[metrics]]\nname = "prmbench-score"\n')
    one_line_exit_2(
        rmaudit("run", str(recipe), "--db", str(tmp_path / "r.db")),
        "metrics[0].name",
        "erroneous_steps",
    )
    mixed = tmp_path / "mixed.toml"
    mixed.write_text(recipe.read_text() + '\n[[reward_models]]\nname = "random"\n')
    one_line_exit_2(rmaudit("run", str(mixed)), "reward_models", "process reward models only")


def test_the_report_shows_the_worst_solutions_escaped(rmaudit, tmp_path):
    pytest.importorskip("matplotlib")
    data = write_prmbench(tmp_path / "data", per_file=2, hostile=True)
    report = tmp_path / "report"
    done = rmaudit(
        "audit", "random", "--suite", "prmbench", "--data-dir", str(data), "--report", str(report)
    )
    assert done.code == 0, done.err
    page = (report / "report.html").read_text(encoding="utf-8")
    assert "Worst solutions" in page and "first flagged by the PRM" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert "esc⟨U+001B⟩[31mred" in page and "\x1b" not in page
    assert "PRMScore" in (report / "prmbench" / "report.md").read_text(encoding="utf-8")


def test_processbench_from_the_hub_cache_offline_records_the_commit(rmaudit, tmp_path, monkeypatch):
    pytest.importorskip("huggingface_hub")
    commit = "fedcba9876543210fedcba9876543210fedcba98"
    local = write_processbench(tmp_path / "local")
    repo = tmp_path / "hub" / "datasets--Qwen--ProcessBench"
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    for split in PROCESSBENCH_SPLITS:  # the hub's files, at the root of the repository
        (snapshot / f"{split}.json").write_bytes(
            (local / "processbench" / f"{split}.json").read_bytes()
        )
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    done = rmaudit("audit", "random", "--suite", "processbench", "--json")
    assert done.code == 0, done.err
    (suite,) = json.loads(done.out)["suites"]
    assert suite["data"]["version"] == f"hf.co/datasets/Qwen/ProcessBench@{commit}"
    from_mirror = rmaudit(
        "audit",
        "random",
        "--suite",
        "processbench",
        "--data-dir",
        str(local),
        "--json",
        "--db",
        str(tmp_path / "mirror.db"),
    )
    assert from_mirror.code == 0, from_mirror.err
    (mirrored,) = json.loads(from_mirror.out)["suites"]
    assert suite_values(json.loads(done.out))["random"]["avg F1"]["value"] == pytest.approx(
        suite_values(json.loads(from_mirror.out))["random"]["avg F1"]["value"]
    )
    assert mirrored["data"]["version"] == "Qwen/ProcessBench (local copy)"


def test_a_solution_repeated_in_the_set_is_scored_once_and_said_so(rmaudit, prmbench, tmp_path):
    """PRMBench's release holds solutions that repeat another (question and steps): the run
    scores each once, keeps every place in the set, and says how many repeat."""
    plain = rmaudit("audit", "random", "--suite", "prmbench", "--data-dir", str(prmbench))
    assert plain.code == 0, plain.err
    assert "the same question and steps as another" not in plain.err
    path = next((prmbench / "prmbench").glob("*.jsonl.gz"))
    rows = gzip.decompress(path.read_bytes()).decode().splitlines()
    again = {**json.loads(rows[0]), "idx": "a repeat"}
    rows.append(json.dumps(again))
    path.write_bytes(gzip.compress("".join(f"{row}\n" for row in rows).encode(), mtime=0))
    db = tmp_path / "repeat.db"
    done = rmaudit(
        "audit", "random", "--suite", "prmbench", "--data-dir", str(prmbench), "--db", str(db)
    )
    assert done.code == 0, done.err
    places = stored(db, "select count(*), count(distinct solution_id) from solution_sets")[0]
    scored = stored(db, "select count(distinct solution_id) from step_scores")[0][0]
    assert places[0] == places[1] + 1 and scored == places[1]
    note = (
        f"solutions: {places[0]:,}, 1 of them the same question and steps as another: "
        f"{places[1]:,} scored, each counted wherever it stands in the set"
    )
    assert note in " ".join(done.err.split())  # beside the stages, as the pairs' line is
