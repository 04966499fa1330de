"""The batch dependence an RM's report states after a run (``run_reward_models.report``):
with the scoring checks it is their batch invariance figure and nothing is scored after the
full scoring; with the checks skipped the run's first inputs are re-scored alone after it.
Either way a model that reads padding without the mask is reported, a correct one is not,
and the figure agrees with the stored scores against each item scored alone."""

from __future__ import annotations

import json
import sqlite3
from typing import NamedTuple

import numpy as np
import pytest

pytest.importorskip("torch")

import _tiny_defects  # noqa: E402

from rmaudit.components.scoring_checks import (  # noqa: E402
    AFTER_THE_RUN,
    BY_THE_CHECKS,
    CheckSettings,
    ScoringChecks,
)
from rmaudit.default_plugins.huggingface import HFClassifier  # noqa: E402
from rmaudit.recipe import load_recipe  # noqa: E402
from rmaudit.recipe.validation import validate_options  # noqa: E402
from rmaudit.run import Runner  # noqa: E402
from rmaudit.store import Store  # noqa: E402

RECIPE = """
title = "batch dependence"
batch_size = 8

[prompts.source]
name = "simulated-helpful"

[prompts.sampler]
name = "random"
k = 10

[responses]
per_prompt = 3

[responses.policy]
name = "simulated-policy"

[oracle]
name = "simulated-judge"

[[reward_models]]
label = "rm"
name = "hf-classifier"
model = "{model}"
trust_remote_code = true

[[metrics]]
name = "pairwise-accuracy"
"""
MAX_DIFF = "batch dependence: max |score - score alone|"


class Call(NamedTuple):
    ids: tuple[str, ...]
    alone: bool


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pooled-models")
    return {
        "reads padding": str(_tiny_defects.build_pooled(folder, pool_last_position=True)),
        "correct": str(_tiny_defects.build_pooled(folder, pool_last_position=False)),
    }


class Spy(NamedTuple):
    """Every call of the classifier's scoring, in order, the items it was given by response
    id, and the samples its scoring checks were given."""

    calls: list[Call]
    items: dict[str, tuple]
    samples: list[list[str]]

    def alone_counts(self) -> dict[str, int]:
        """How many times each response was scored alone."""
        counts: dict[str, int] = {}
        for call in self.calls:
            for rid in call.ids if call.alone else ():
                counts[rid] = counts.get(rid, 0) + 1
        return counts


@pytest.fixture
def spied(monkeypatch) -> Spy:
    """The classifier scores as before: the spy only records."""
    spy = Spy([], {}, [])
    scores, checks = HFClassifier._scores, HFClassifier.scoring_checks

    def recorded_scores(self, batch, *, alone, encoded=None):
        spy.calls.append(Call(tuple(response.id for _, response in batch), alone))
        spy.items.update((pair[1].id, pair) for pair in batch)
        return scores(self, batch, alone=alone, encoded=encoded)

    def recorded_checks(self, sample):
        spy.samples.append([response.id for _, response in sample])
        return checks(self, sample)

    monkeypatch.setattr(HFClassifier, "_scores", recorded_scores)
    monkeypatch.setattr(HFClassifier, "scoring_checks", recorded_checks)
    return spy


def run(model: str, folder, *, checks: bool):
    """The run's stored report of the RM, its scores (response id → score) and checks."""
    recipe = folder / "recipe.toml"
    recipe.write_text(RECIPE.replace("{model}", model), encoding="utf-8")
    store = Store.open(folder / "run.db")
    try:
        Runner(load_recipe(recipe), store, checks=CheckSettings(enabled=checks)).run()
    finally:
        store.close()
    with sqlite3.connect(folder / "run.db") as connection:
        (report,) = connection.execute("select report from run_reward_models").fetchone()
        scores = dict(connection.execute("select response_id, score from rm_scores"))
        (stored,) = connection.execute("select checks from scoring_checks").fetchone()
    return json.loads(report), scores, ScoringChecks.from_stored(json.loads(stored))


def classifier(model: str, **options) -> HFClassifier:
    options = {"model": model, "trust_remote_code": True, **options}
    return HFClassifier(
        validate_options(HFClassifier, options, field="rm", file=None, base_dir=None)
    )


def agrees_with_alone(report: dict, model: str, scores: dict[str, float], items: list) -> None:
    """The reported figure against an independent one: the items' stored scores against
    each scored in a call of its own by a fresh copy of the model; a model that reads padding
    moves by over a tenth of the scores' spread, a correct one by float32 rounding."""
    single = classifier(model, batch_size=1)
    alone = np.array([single.score([item])[0] for item in items])
    stored = np.array([scores[response.id] for _, response in items])
    assert report[MAX_DIFF] == pytest.approx(float(np.max(np.abs(stored - alone))), abs=1e-6)
    values = np.array(list(scores.values()))
    if single.model.config.pool_last_position:
        assert report[MAX_DIFF] > 0.1 * float(np.std(values, ddof=1))
    else:
        assert report[MAX_DIFF] <= 1e-5 * max(1.0, float(np.max(np.abs(values))))


@pytest.mark.parametrize("model", ["reads padding", "correct"])
def test_with_the_checks_the_report_takes_their_figures_and_nothing_is_scored_after(
    model, models, spied, tmp_path
):
    report, scores, checks = run(models[model], tmp_path, checks=True)
    invariance = {c.name: c for c in checks.checks}["batch invariance"]
    assert invariance.status == ("fail" if model == "reads padding" else "pass")
    assert report[MAX_DIFF] == invariance.figures["largest difference"]
    assert report["batch dependence: inputs checked"] == invariance.figures["items compared"]
    assert report["batch dependence: measured by"] == BY_THE_CHECKS

    # each stored item scored once in batches, and after the full scoring nothing at all
    batched = [rid for call in spied.calls if not call.alone for rid in call.ids]
    assert sorted(batched) == sorted(scores)
    assert not spied.calls[-1].alone
    # alone, the run scores exactly what the checks score alone on their sample
    (sample,) = spied.samples
    items = [spied.items[rid] for rid in sample]
    during_run = spied.alone_counts()
    spied.calls.clear()
    classifier(models[model]).scoring_checks(items)
    assert during_run == spied.alone_counts() and set(during_run) <= set(sample)
    # the checks' batches gave the sample's stored scores
    agrees_with_alone(report, models[model], scores, items)


@pytest.mark.parametrize("model", ["reads padding", "correct"])
def test_with_the_checks_skipped_the_run_measures_batch_dependence_after_it(
    model, models, spied, tmp_path
):
    report, scores, checks = run(models[model], tmp_path, checks=False)
    assert checks.status == "skipped" and not spied.samples
    # the run's first inputs (batch_dependence_sample: 16) re-scored alone once it ended,
    # and the first 4 of them once more: two passes alone measure the model's own noise
    first = tuple(rid for call in spied.calls for rid in call.ids)[:16]
    assert spied.calls[-2:] == [Call(first, True), Call(first[:4], True)]
    assert not any(call.alone for call in spied.calls[:-2])
    assert report["batch dependence: inputs checked"] == 16
    assert report["batch dependence: measured by"] == AFTER_THE_RUN
    agrees_with_alone(report, models[model], scores, [spied.items[rid] for rid in first])


def test_a_resumed_run_reports_the_stored_checks_figures_and_scores_nothing_alone(
    models, spied, tmp_path
):
    """A run that finds its checks stored (one killed after them) reads them back: its
    report states their figures, and it scores alone nothing at all."""
    first, scores, _ = run(models["reads padding"], tmp_path, checks=True)
    lost = sorted(scores)[::3]
    with sqlite3.connect(tmp_path / "run.db") as connection:
        connection.executemany("delete from rm_scores where response_id = ?", [[r] for r in lost])
    spied.calls.clear()
    again, rescored, _ = run(models["reads padding"], tmp_path, checks=True)
    assert lost and rescored.keys() == scores.keys()
    assert sorted(rid for call in spied.calls for rid in call.ids) == lost
    # the first run checked; the second read its checks back and scored nothing alone
    assert not any(call.alone for call in spied.calls) and len(spied.samples) == 1
    assert again["inputs scored"] == len(lost)
    dependence = {k: v for k, v in first.items() if k.startswith("batch dependence")}
    assert len(dependence) == 3 and again.items() >= dependence.items()
