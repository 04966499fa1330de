"""A Hugging Face PRM that cannot score, refused by ``rmaudit audit`` before anything is
written: a tokenizer without the separator, a model whose step scores are NaN, an option
that is invalid for it (a device torch does not know, a config attribute the model lacks, a
truncation side PRMs do not have) — each exit code 2, one line naming the option and the
value, and the DB absent or, holding an earlier audit, byte-identical with the same rows."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from _prm_data import write_processbench  # noqa: E402
from _support import table_counts  # noqa: E402
from test_checked_first import refused, untouched  # noqa: E402


@pytest.fixture
def data(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write_processbench(tmp_path / "data", per_split=6, words=8)


@pytest.fixture(params=["new DB", "earlier DB"])
def db(request, rmaudit, data, tmp_path) -> Path:
    """Where the refused audit writes: no file yet, or one holding an audit of the same
    solutions (their step scores by the baselines)."""
    path = tmp_path / "audit.db"
    if request.param == "earlier DB":
        done = rmaudit(
            "audit", "random", "--suite", "processbench", "--data-dir", str(data), "--db", str(path)
        )
        assert done.code == 0, done.err
    return path


CASES = {
    "no separator": (
        "no-separator-prm",
        (),
        ("process_reward_models[0].separator: not a token of the tokenizer", "'<extra_0>'"),
    ),
    "no separator, no checks": (
        "no-separator-prm",
        ("--no-scoring-checks",),
        ("process_reward_models[0].separator: not a token of the tokenizer", "'<extra_0>'"),
    ),
    "NaN step scores": (
        "nan-prm",
        (),
        (
            "process_reward_models[0]: process reward model 'nan-prm' returned a non-finite score "
            "for step 1 (solution ",
            "(got nan)",
        ),
    ),
    "unknown device": (
        "token-prm",
        ("--device", "tpu"),
        ("process_reward_models[0].device: not a torch device", "(got 'tpu')"),
    ),
    "config attribute it lacks": (
        "token-prm",
        ("--config-override", "no_such_setting=3", "--no-scoring-checks"),
        (
            "process_reward_models[0].config_overrides.no_such_setting: the model's config has "
            "no such attribute",
            "(got 3)",
        ),
    ),
    "truncation side": (
        "token-prm",
        ("--truncation-side", "right"),
        ("process_reward_models[0].truncation_side:", "(got 'right')"),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_prm_that_cannot_score_is_refused_before_the_db(rmaudit, data, db, tiny_prms, case):
    model, flags, needles = CASES[case]
    check = untouched(db)
    counts = table_counts(db) if db.exists() else None
    done = rmaudit(
        "audit",
        tiny_prms[model],
        *flags,
        "--suite",
        "processbench",
        "--data-dir",
        str(data),
        "--db",
        str(db),
    )
    line = refused(done, *needles)
    assert line.startswith("Error: rmaudit audit --suite processbench: "), line
    check()
    assert (table_counts(db) if db.exists() else None) == counts
