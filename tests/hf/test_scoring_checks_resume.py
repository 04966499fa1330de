"""Scoring checks follow the scoring settings: a run stopped part-way through its scores at
batch size 1 and resumed at batch size 8 checks the model again under 8, and mixes the
scores made both ways only where batch invariance passes under each; a model whose scores
move with the batch is refused in one line, the DB untouched, and finishes under the
settings its stored scores were made with (docs/real-models.md, "Scoring checks").  The
simulated responses run past the tiny models' 256 positions, so truncation fails throughout:
--strict only where a refusal comes first."""

from __future__ import annotations

import sqlite3

import pytest

pytest.importorskip("torch")

import _tiny_defects  # noqa: E402

from rmaudit.default_plugins.huggingface import HFClassifier  # noqa: E402

RECIPE = """
title = "checks across settings"
[prompts.source]
name = "simulated-helpful"
[prompts.sampler]
name = "random"
k = 8
[responses]
per_prompt = 4
[responses.policy]
name = "simulated-policy"
[oracle]
name = "simulated-judge"
[[reward_models]]
label = "tiny"
name = "hf-classifier"
model = "{model}"
trust_remote_code = true
device = "cpu"
batch_size = {batch_size}
items_per_call = 4
[[metrics]]
name = "pairwise-accuracy"
"""

#: the sample's size (the checks keep its scores) and the stage's: 32 responses
SAMPLE, ITEMS = 16, 32


@pytest.fixture
def run(rmaudit, tmp_path):
    def invoke(model, batch_size: int, *flags: str):
        recipe = tmp_path / f"recipe-{batch_size}.toml"
        text = RECIPE.replace("{model}", str(model)).replace("{batch_size}", str(batch_size))
        recipe.write_text(text, encoding="utf-8")
        return rmaudit("run", str(recipe), "--db", str(tmp_path / "run.db"), *flags)

    return invoke


def killed(run, model, monkeypatch) -> None:
    """A run at batch size 1 that stops on its third score() call, two stored."""
    calls = []
    score = HFClassifier.score

    def stopping(self, batch):
        calls.append(len(batch))
        if len(calls) == 3:
            raise RuntimeError("killed")
        return score(self, batch)

    with monkeypatch.context() as patch:
        patch.setattr(HFClassifier, "score", stopping)
        assert run(model, 1).code == 1
    assert calls == [4, 4, 4]


def scores_stored(db) -> int:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "select count(*) from rm_scores where rm_key in "
            "(select rm_key from run_reward_models where label = 'tiny')"
        ).fetchone()[0]


def test_a_model_whose_scores_move_with_the_batch_is_not_resumed_under_another(
    run, monkeypatch, tmp_path
):
    model = _tiny_defects.build_pooled(tmp_path / "models", pool_last_position=True)
    killed(run, model, monkeypatch)
    db = tmp_path / "run.db"
    assert scores_stored(db) == SAMPLE + 8
    before = db.read_bytes()
    for flags in ((), ("--strict",)):
        resumed = run(model, 8, *flags)
        assert resumed.code == 2, resumed.err
        (line,) = resumed.err.strip().splitlines()[-1:]
        assert f"{SAMPLE + 8} of its {ITEMS} scores were made under other scoring settings" in line
        assert "batch_size 1 (this run: 8)" in line
        assert "this run's batch invariance is fail" in line
        assert "finish it with the settings the stored scores were made under" in line
        assert db.read_bytes() == before  # checked in the plan: nothing written
    # the settings the stored scores were made under finish the stage, checks reused
    finished = run(model, 1)
    assert finished.code == 0, finished.err
    assert scores_stored(db) == ITEMS


def test_a_model_that_passes_under_both_settings_is_resumed_under_another(
    run, monkeypatch, tmp_path
):
    model = _tiny_defects.build_pooled(tmp_path / "models", pool_last_position=False)
    killed(run, model, monkeypatch)
    resumed = run(model, 8)
    assert resumed.code == 0, resumed.err
    assert (
        f"tiny: {SAMPLE + 8} of its scores were made under other settings "
        "(batch_size 1 (this run: 8)); batch invariance passes under both"
        in resumed.err
        + resumed.out
    )
    assert scores_stored(tmp_path / "run.db") == ITEMS
    with sqlite3.connect(tmp_path / "run.db") as connection:
        stored = dict(connection.execute("select status, count(*) from scoring_checks group by 1"))
    assert sum(stored.values()) == 2  # checked under each batch size


def test_strict_on_items_made_in_the_run_writes_nothing(run, rmaudit, tmp_path):
    """Responses the run generates are not known to its plan: the checks run once they are
    made, the run holding its writes until they pass, so a --strict stop writes nothing, as
    in the plan: no DB where there was none, an existing DB byte-identical."""
    model = _tiny_defects.build_pooled(tmp_path / "models", pool_last_position=True)
    db = tmp_path / "run.db"
    result = run(model, 8, "--strict")
    assert result.code == 2, result.err
    (line,) = result.err.strip().splitlines()[-1:]
    assert "scoring check 'truncation' of tiny is fail" in line, line
    assert "(--strict stops on any warning; nothing was written)" in line
    assert not db.exists()
    for suffix in ("-wal", "-shm", "-journal", ".lock"):
        assert not db.with_name(db.name + suffix).exists(), suffix
    # a DB holding another run before
    other = tmp_path / "other.toml"
    other.write_text(SIMULATED, encoding="utf-8")
    assert rmaudit("run", str(other), "--db", str(db)).code == 0
    before = dumped(db)
    assert run(model, 8, "--strict").code == 2
    assert dumped(db) == before  # its rows (opening it to write rewrote the header's counters)
    # without --strict the same run goes on (and stores its checks)
    assert run(model, 8).code == 0
    with sqlite3.connect(db) as connection:
        assert connection.execute("select status from scoring_checks").fetchall() == [("fail",)]


def dumped(db) -> list[str]:
    connection = sqlite3.connect(db)
    try:
        return list(connection.iterdump())
    finally:
        connection.close()


SIMULATED = """
title = "another recipe"
[prompts.source]
name = "simulated-helpful"
[prompts.sampler]
name = "random"
k = 4
[responses]
per_prompt = 4
[responses.policy]
name = "simulated-policy"
[oracle]
name = "simulated-judge"
[[reward_models]]
name = "simulated-rm"
"""
