"""Malformed RewardMATH results files through ``rmaudit audit --suite rewardmath
--recorded-judges`` (and a PRM's aggregation through ``rmaudit run``): each is exit code 2,
one line naming the file, the record and the field, and the DB absent or, holding an earlier
audit of the same folder before the edit, byte-identical."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _rewardmath import classifier, folder, pairwise, prm, write
from test_checked_first import refused, untouched

Edit = Callable[[Path], None]


def edit_record(name: str, index: int, change: Callable[[dict], object]) -> Edit:
    """An edit of record ``index`` (from 0) of the results file ``name``."""

    def edit(data: Path) -> None:
        path = folder(data) / name
        records = json.loads(gzip.decompress(path.read_bytes()))
        change(records[index])
        write(path, records)

    return edit


def _set(field: str, value) -> Callable[[dict], None]:
    return lambda record: record.__setitem__(field, value)


def _nine(record: dict) -> None:
    record["score"] = record["score"][:9]


def _not_finite(record: dict) -> None:
    record["score"][3] = float("nan")


def _infinite(record: dict) -> None:
    record["score"][6] = float("inf")


def _no_steps(record: dict) -> None:
    record["score"][2] = []


def _outside(record: dict) -> None:
    record["score"][1][0] = 1.7


def _letter(record: dict) -> None:
    record["score"][5] = "C"


def _other_problem(data: Path) -> None:
    """A file of another benchmark's problems among RewardMATH's."""
    path = folder(data) / "beaver_reward.json.gz"
    classifier(data, "beaver", 9)
    records = json.loads(gzip.decompress(path.read_bytes()))
    records[4]["problem"] = "What is the capital of France?"
    write(path, records)


CLASSIFIER, PRM, PAIRWISE = (
    "ArmoRM_reward.json.gz",
    "Easy_to_hard_reward.json.gz",
    "gpt4_pairwise_reward.json.gz",
)
CASES: dict[str, tuple[Edit, tuple[str, ...]]] = {
    "nine scores for ten solutions": (
        edit_record(CLASSIFIER, 2, _nine),
        (f"{CLASSIFIER}:record 3: score:", "expected 10 scores", "got 9"),
    ),
    "a NaN score": (
        edit_record(CLASSIFIER, 0, _not_finite),
        (f"{CLASSIFIER}:record 1", "score[3]", "finite"),
    ),
    "an infinite score": (
        edit_record(CLASSIFIER, 5, _infinite),
        (f"{CLASSIFIER}:record 6", "score[6]", "finite"),
    ),
    "an empty step list": (
        edit_record(PRM, 1, _no_steps),
        (f"{PRM}:record 2", "score[2]", "at least one"),
    ),
    "a step score outside [0, 1]": (
        edit_record(PRM, 4, _outside),
        (f"{PRM}:record 5", "score[1]", "outside [0, 1]", "geometric_mean", "1.7"),
    ),
    "a pairwise letter other than A/B/null": (
        edit_record(PAIRWISE, 3, _letter),
        (f"{PAIRWISE}:record 4", "score[5]", '"A", "B" or null', "C"),
    ),
    "no human_to_GPT-4 solution": (
        edit_record(CLASSIFIER, 7, lambda r: r["solution_reference"].__setitem__(0, "gpt-4o")),
        (f"{CLASSIFIER}:record 8", "solution_reference", "human_to_GPT-4", "found 0"),
    ),
    "a file whose problems are not the suite's": (
        _other_problem,
        ("beaver_reward.json.gz", "not the suite's", "capital of France"),
    ),
}


@pytest.fixture
def data(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-hub-cache"))
    root = tmp_path / "data"
    classifier(root, "ArmoRM", 1)
    classifier(root, "internlm2", 2)
    prm(root, "Easy_to_hard", 4)
    pairwise(root, "gpt4", 5)
    return root


def audit(rmaudit, data: Path, db: Path):
    return rmaudit(
        "audit", "--suite", "rewardmath", "--recorded-judges", "--data-dir", str(data),
        "--db", str(db),
    )  # fmt: skip


@pytest.mark.parametrize("earlier", [False, True], ids=["new DB", "earlier DB"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_malformed_results_file_is_one_line_and_leaves_the_db_alone(
    rmaudit, data, tmp_path, case, earlier
):
    edit, needles = CASES[case]
    db = tmp_path / "audit.db"
    if earlier:
        assert audit(rmaudit, data, db).code == 0
    check = untouched(db)
    edit(data)
    line = refused(audit(rmaudit, data, db), *needles)
    assert line.startswith(f"Error: {folder(data)}"), line
    check()


def test_a_step_outside_0_1_is_refused_under_mean_logit_and_audited_under_min(rmaudit, data):
    edit_record(PRM, 4, _outside)(data)
    path = folder(data) / PRM
    recipe = data.parent / "recipe.toml"
    for aggregation in ("mean_logit", "min"):
        recipe.write_text(
            f"""
[benchmark]
name = "rewardmath"
root = "{data / "rewardmath"}"
results = ["results/RewardMATH/*_reward.json*"]

[[reward_models]]
label = "prm"
name = "rewardmath-scores"
path = "{path}"
aggregation = "{aggregation}"

[[metrics]]
name = "one-to-many"
""",
            encoding="utf-8",
        )
        db = data.parent / f"{aggregation}.db"
        check = untouched(db)
        done = rmaudit("run", str(recipe), "--db", str(db))
        if aggregation == "mean_logit":
            refused(done, f"{PRM}:record 5", "score[1]", "mean_logit", "outside [0, 1]")
            check()
        else:
            assert done.code == 0, done.err
