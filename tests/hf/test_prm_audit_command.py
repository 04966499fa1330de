"""``rmaudit audit`` on tiny Hugging Face PRMs built offline (tests/_tiny_prm.py), through
the CLI on small synthetic PRMBench and ProcessBench files (tests/_prm_data.py), both model
conventions side by side: every number printed with its ±, every step score stored and equal
to the model cards' computation (tests/hf/test_hf_prm.py), the suites' numbers equal to a
hand computation from them, a rerun that adds no row, the output worded for solutions and
step scores, and the scoring checks stored before any step score (``--strict`` with a
failing check stores none)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from _prm_data import write_prmbench, write_processbench  # noqa: E402
from _prm_reads import (  # noqa: E402
    prmscore_by_hand,
    processbench_f1_by_hand,
    solution_positions,
    step_scores,
    stored,
    suite_values,
)
from _support import table_counts  # noqa: E402
from test_checked_first import untouched  # noqa: E402
from test_hf_prm import separator_reference, tag_reference  # noqa: E402

from rmaudit.components import Solution  # noqa: E402
from rmaudit.suites import PRMBENCH_CLASSES, PROCESSBENCH_SPLITS  # noqa: E402


@pytest.fixture
def data(tmp_path, monkeypatch) -> Path:
    """Both suites' files, their steps short enough for the tiny models' 512 positions."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "1000")  # the closing table on one line per model
    root = tmp_path / "data"
    write_prmbench(root, per_file=2, words=8)
    write_processbench(root, per_split=8, words=8)
    return root


def audit(rmaudit, data: Path, suite: str, *models_and_flags: str):
    """The audit printed in full (--details): every class's table and the closing table."""
    db = data.parent / "audit.db"
    return rmaudit(
        "audit",
        *models_and_flags,
        "--suite",
        suite,
        "--data-dir",
        str(data),
        "--db",
        str(db),
        "--details",
    )


def printed_with_their_plus_minus(out: str, values: dict[str, dict[str, dict]]) -> int:
    """Each number that has a ± is printed with it in the closing table; how many there are."""
    lines = [line for line in out.splitlines() if line.startswith("│") and " · " in line]
    found = 0
    for label, metrics in values.items():
        (row,) = [line for line in lines if f"│ {label} " in line]
        for name, metric in metrics.items():
            shown = f"{name} {metric['value']:.4f}"
            if metric["stderr"]:
                shown += f" ± {metric['stderr']:.4f}"
                found += 1
            assert shown in row, (label, shown, row)
    return found


def test_processbench_stores_the_model_cards_step_scores_and_a_rerun_adds_nothing(
    rmaudit, data, tiny_prms, tmp_path
):
    token, tag = tiny_prms["token-prm"], tiny_prms["tag-prm"]
    done = audit(rmaudit, data, "processbench", token, f"step-tag:{tag}")
    assert done.code == 0, done.err
    db = tmp_path / "audit.db"
    # the checks ran, each on a sample of 16 solutions, and are stored with the run
    assert "token-prm: pass on 16 sampled solutions" in done.out
    assert "tag-prm: pass on 16 sampled solutions" in done.out
    assert sorted(stored(db, "select label, status from scoring_checks")) == [
        ("tag-prm", "pass"),
        ("token-prm", "pass"),
    ]
    # every step score stored, the checks' sample's too, as the model cards compute them
    rows = {
        row["id"]: row
        for split in PROCESSBENCH_SPLITS
        for row in json.loads((data / "processbench" / f"{split}.json").read_text())
    }
    positions = solution_positions(db)
    refs = dict(stored(db, "select solution_id, ref from solution_sets"))
    solutions = [
        Solution(rows[refs[sid]]["problem"], tuple(rows[refs[sid]]["steps"]))
        for sid, *_ in positions
    ]
    expected = {
        "token-prm": separator_reference(
            token, transformers.AutoModelForTokenClassification, solutions
        ),
        "tag-prm": tag_reference(tag, solutions),
    }
    for label, reference in expected.items():
        scores = step_scores(db, label)
        got = np.concatenate([scores[sid] for sid, *_ in positions])
        assert np.max(np.abs(got - np.concatenate(reference))) <= 1e-5, label
    steps = sum(len(row["steps"]) for row in rows.values())
    assert stored(db, "select count(*) from step_scores") == [(4 * steps,)]
    # each split's F1 from the stored step scores; every number with a ± printed with it
    values = suite_values(json.loads((tmp_path / "audit.results.json").read_text()))
    for label in expected:
        scores = step_scores(db, label)
        for split in PROCESSBENCH_SPLITS:
            kept = [p for p in positions if p[1] == split]
            assert values[label][split]["value"] == pytest.approx(
                processbench_f1_by_hand(scores, kept)
            ), (label, split)
    assert printed_with_their_plus_minus(done.out, values) >= 4 * 4  # the AUROCs at least
    counts = table_counts(db)
    again = audit(rmaudit, data, "processbench", token, f"step-tag:{tag}")
    assert again.code == 0, again.err
    assert "new work: none" in again.err
    assert table_counts(db) == counts  # no step score, check or run added


def test_prmbench_prints_every_class_with_its_plus_minus_worded_for_solutions(
    rmaudit, data, tiny_prms, tmp_path
):
    done = audit(
        rmaudit, data, "prmbench", tiny_prms["token-prm"], f"step-tag:{tiny_prms['tag-prm']}"
    )
    assert done.code == 0, done.err
    db = tmp_path / "audit.db"
    values = suite_values(json.loads((tmp_path / "audit.results.json").read_text()))
    positions = solution_positions(db)
    for label in ("token-prm", "tag-prm"):
        scores = step_scores(db, label)
        for subset in (*PRMBENCH_CLASSES, "multi_solutions", None):
            kept = [p for p in positions if subset is None or p[1] == subset]
            hand = prmscore_by_hand(scores, kept, multi=subset == "multi_solutions")
            metric = values[label][subset or "PRMScore"]
            assert metric["value"] == pytest.approx(hand), (label, subset)
        assert values[label]["PRMScore"]["stderr"] > 0
    printed_with_their_plus_minus(done.out, values)
    # worded for process reward models: solutions and step scores, never pairs
    solutions = len({p[0] for p in positions})
    assert f"new work: {solutions} solutions, step scores: token-prm ({solutions} solutions)" in (
        done.err
    )
    assert "paired over 3 questions" in done.out
    assert "┃ process reward model ┃" in done.out
    assert "the worst PRM by PRMScore is" in done.out
    assert "rerun to reuse every stored step score" in done.out
    assert not re.search(r"\bpairs?\b|\bprompts?\b|\bresponses?\b", done.out + done.err)


@pytest.mark.parametrize("earlier", [False, True], ids=["new DB", "earlier DB"])
def test_strict_stops_a_prm_failing_a_check_before_any_step_score(
    rmaudit, data, tiny_prms, tmp_path, earlier
):
    """padding-tag-prm's step scores move with a batch's padding: batch invariance fails."""
    db = tmp_path / "audit.db"
    if earlier:
        assert audit(rmaudit, data, "processbench", "random").code == 0
    check = untouched(db)
    model = f"step-tag:{tiny_prms['padding-tag-prm']}"
    done = audit(rmaudit, data, "processbench", model, "--trust-remote-code", "--strict")
    assert done.code == 2, done.err
    (error,) = done.err.strip().splitlines()[-1:]
    assert "scoring check 'batch invariance' of padding-tag-prm is fail" in error
    assert "fix: set batch_size = 1 (--batch-size 1)" in error
    assert "nothing was written" in error
    check()
    # without --strict: the failed check stored with the run, the step scores stored after
    # it, and the verdict saying they are not to be trusted
    done = audit(rmaudit, data, "processbench", model, "--trust-remote-code")
    assert done.code == 0, done.err
    assert ("padding-tag-prm", "fail") in stored(db, "select label, status from scoring_checks")
    steps = sum(
        len(row["steps"])
        for split in PROCESSBENCH_SPLITS
        for row in json.loads((data / "processbench" / f"{split}.json").read_text())
    )
    assert len(np.concatenate(list(step_scores(db, "padding-tag-prm").values()))) == steps
    assert "  ⚠ step scores not trustworthy: batch invariance: " in done.out  # the checks
    assert "│ ⚠ step scores not trustworthy │" in done.out  # the closing table
    assert "⚠ processbench: padding-tag-prm does not pass (step scores not trustworthy: batch" in (
        done.out
    )
