"""The conformance kit (rmaudit.testing) catches each broken contract, and its fixtures work.

Each broken component below breaks exactly one contract; the kit must name that contract.
Conforming components are checked in test_conformance_builtins.py.
"""

from __future__ import annotations

import itertools
import threading
import types

import numpy as np
import pytest

from rmaudit import hookimpl, plugins
from rmaudit.components import (
    Generation,
    Metric,
    MetricOutput,
    MetricValue,
    PerPair,
    ReferencePolicy,
    RewardModel,
)
from rmaudit.default_plugins.metrics import BestKOfN
from rmaudit.errors import BadInput
from rmaudit.metrics import MetricResult
from rmaudit.testing import (
    ConformanceError,
    check_metric,
    check_reference_policy,
    check_reward_model,
    sample_benchmark,
)


def _metric(name: str, per_prompt, *, bounds=(None, None), higher_is_better=True):
    """A metric class whose per-prompt value is ``per_prompt(oracle, scores)``."""

    class Toy(Metric):
        __doc__ = f"Toy metric {name}."

        def compute(self, inputs):
            values = [per_prompt(j, y) for j, y in zip(inputs.oracle, inputs.scores, strict=True)]
            result = MetricResult.from_per_prompt(np.array(values))
            return MetricOutput(
                values=[
                    MetricValue("v", "v", result.value, result.stderr, per_prompt=result.per_prompt)
                ]
            )

    Toy.name, Toy.bounds, Toy.higher_is_better = name, bounds, higher_is_better
    return Toy


def _require_finite(*pools):
    if not all(np.all(np.isfinite(pool)) for pool in pools):
        raise BadInput("expected finite scores, got nan")


def _top_pick_oracle(j, y):
    """The oracle score of the RM's favourite: a conforming per-prompt metric."""
    _require_finite(j, y)
    return float(j[np.argmax(y)])


def _first_listed_oracle(j, y):
    """The oracle score of whichever response happens to be listed first."""
    _require_finite(j, y)
    return float(j[0])


def test_a_conforming_metric_passes():
    check_metric(_metric("top-pick", _top_pick_oracle, bounds=(1.0, 10.0)))


def test_catches_a_metric_that_depends_on_response_order():
    with pytest.raises(ConformanceError, match="response order"):
        check_metric(_metric("first-listed", _first_listed_oracle))


def test_catches_a_metric_that_depends_on_prompt_order():
    class PromptWeighted(Metric):
        """Weights later prompts more (order-dependent)."""

        name = "prompt-weighted"

        def compute(self, inputs):
            _require_finite(*inputs.oracle, *inputs.scores)
            weights = np.arange(1, len(inputs.oracle) + 1)
            value = float(
                np.average(
                    [j[np.argmax(y)] for j, y in zip(inputs.oracle, inputs.scores, strict=True)],
                    weights=weights,
                )
            )
            return MetricOutput(values=[MetricValue("v", "v", value)])

    with pytest.raises(ConformanceError, match="prompt order"):
        check_metric(PromptWeighted)


def test_catches_values_outside_the_declared_bounds():
    with pytest.raises(ConformanceError, match="declared bounds"):
        check_metric(_metric("too-wide", _top_pick_oracle, bounds=(0.0, 1.0)))


def test_catches_a_metric_whose_direction_is_declared_wrong():
    with pytest.raises(ConformanceError, match="perfect RM"):
        check_metric(_metric("inverted", _top_pick_oracle, higher_is_better=False))


def test_catches_a_metric_that_swallows_nan():
    with pytest.raises(ConformanceError, match="NaN in oracle should raise"):
        check_metric(_metric("nan-blind", lambda j, y: float(np.nanmax(j))))


def test_catches_a_metric_that_crashes_on_nan_instead_of_a_bad_input():
    def crashes(j, y):
        if np.isnan(j).any():
            raise FloatingPointError("nan")
        return float(j[np.argmax(y)])

    with pytest.raises(ConformanceError, match="got FloatingPointError"):
        check_metric(_metric("crashes", crashes))


def test_catches_a_metric_whose_options_need_more_responses():
    best_2_of_64 = BestKOfN(BestKOfN.Options(n=64, k=2))
    with pytest.raises(ConformanceError, match="bigger pools"):
        check_metric(best_2_of_64)
    check_metric(best_2_of_64, sample_benchmark(per_prompt=64))


class _ShareRight(Metric):
    """The share of pairs whose chosen logit is higher, declaring its per-pair credits."""

    name = "share-right"
    scope = "pairs"
    needs = ("pairs",)

    def compute(self, inputs):
        return MetricOutput(
            values=[MetricValue("right", "right", float(self.credit(inputs).mean()))]
        )

    def credit(self, inputs):
        if not np.all(np.isfinite(inputs.chosen - inputs.rejected)):
            raise BadInput("expected finite logits")
        return (inputs.chosen > inputs.rejected).astype(float)

    def per_pair(self, inputs):
        return {"right": PerPair(self.credit(inputs))}


def test_a_pair_metric_whose_per_pair_values_give_its_value_passes():
    check_metric(_ShareRight)


@pytest.mark.parametrize(
    ("declared", "contract"),
    [
        (lambda credit: {"right": PerPair(1.0 - credit)}, "average to"),
        (lambda credit: {"wrong": PerPair(credit)}, "which compute does not return"),
        (lambda credit: {"right": PerPair(credit[:-1])}, "one per pair"),
    ],
)
def test_catches_per_pair_values_that_are_not_the_values(declared, contract):
    class Broken(_ShareRight):
        def per_pair(self, inputs):
            return declared(self.credit(inputs))

    with pytest.raises(ConformanceError, match=contract):
        check_metric(Broken)


class _Counting(RewardModel):
    """Scores by how many texts it has seen: order- and batch-dependent hidden state."""

    name = "counting"

    def __init__(self, options=None):
        super().__init__(options)
        self.counter = itertools.count()

    def score(self, batch):
        return [float(next(self.counter)) for _ in batch]


class _BatchNormalised(RewardModel):
    """Length minus the batch mean: the same text scores differently in different batches."""

    name = "batch-normalised"

    def score(self, batch):
        lengths = np.array([len(r.text) for _, r in batch], float)
        return list(lengths - lengths.mean())


class _Unseeded(RewardModel):
    """Draws fresh randomness per instance: not reproducible."""

    name = "unseeded"

    def __init__(self, options=None):
        super().__init__(options)
        self.offset = float(np.random.default_rng().normal())

    def score(self, batch):
        return [len(r.text) + self.offset for _, r in batch]


class _FirstWord(RewardModel):
    """Crashes with an IndexError on an empty response."""

    name = "first-word"

    def score(self, batch):
        return [float(len(r.text.split()[0])) for _, r in batch]


class _MainThreadOnly(RewardModel):
    """Refuses to score outside the main thread (as some signal-based timeouts do)."""

    name = "main-thread-only"

    def score(self, batch):
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("signal only works in main thread")
        return [float(len(r.text)) for _, r in batch]


class _ZeroPerCall(RewardModel):
    """Asks for calls of no items."""

    name = "zero-per-call"

    def preferred_batch_items(self):
        return 0

    def score(self, batch):
        return [float(len(r.text)) for _, r in batch]


@pytest.mark.parametrize(
    "model, contract",
    [
        (_MainThreadOnly, "signal only works in main thread"),
        (_ZeroPerCall, "preferred_batch_items"),
        (_Counting, "batch size"),
        (_BatchNormalised, "batch size"),
        (_Unseeded, "determinism"),
        (_FirstWord, "empty text"),
    ],
)
def test_catches_broken_reward_models(model, contract):
    with pytest.raises(ConformanceError, match=contract):
        check_reward_model(model)


def test_a_reward_model_may_refuse_empty_text_with_bad_input():
    class Strict(RewardModel):
        """Length, refusing empty texts."""

        name = "strict"

        def score(self, batch):
            if any(not r.text for _, r in batch):
                raise BadInput("expected a non-empty response, got ''")
            return [float(len(r.text)) for _, r in batch]

    check_reward_model(Strict)


def test_catches_a_policy_whose_output_depends_on_its_batch():
    class Positional(ReferencePolicy):
        """Numbers its answers by position in the batch."""

        name = "positional"

        def generate(self, batch):
            return [Generation(f"answer {i}") for i, _ in enumerate(batch)]

    with pytest.raises(ConformanceError, match="batch size"):
        check_reference_policy(Positional)


def test_rmaudit_db_fixture_is_a_migrated_empty_store(rmaudit_db, tmp_path):
    assert rmaudit_db.path == str(tmp_path / "rmaudit.db")
    assert {"runs", "responses", "metric_results"} <= rmaudit_db.tables()
    assert rmaudit_db.read.runs() == []


def test_register_plugin_registers_for_the_block_only(register_plugin):
    module = types.ModuleType("top_pick_plugin")
    TopPick = _metric("top-pick", _top_pick_oracle)

    @hookimpl
    def register_metrics(register):
        register(TopPick)

    module.register_metrics = register_metrics
    with register_plugin(module):
        assert plugins.resolve("metric", "top-pick").cls is TopPick
        assert plugins.resolve("metric", "top_pick_plugin:top-pick").cls is TopPick
    with pytest.raises(BadInput, match="unknown metric"):
        plugins.resolve("metric", "top-pick")


def test_register_plugin_rejects_a_misspelt_hook_and_cleans_up(register_plugin):
    class Typo:
        @hookimpl
        def register_metric(self, register):  # singular: no such hook
            pass

    with pytest.raises(Exception, match="unknown hook"):
        with register_plugin(Typo(), name="typo"):
            pass
    assert plugins.pm.get_plugin("typo") is None


def test_run_level_metrics_get_a_study_of_several_rms():
    class BestRM(Metric):
        """Per prompt, the number of RMs whose favourite is the oracle's favourite."""

        name = "best-rm-count"
        scope = "run"

        def compute(self, inputs):
            _require_finite(*inputs.oracle, *(y for s in inputs.scores.values() for y in s))
            hits = [
                sum(np.argmax(scores[q]) == np.argmax(j) for scores in inputs.scores.values())
                for q, j in enumerate(inputs.oracle)
            ]
            return MetricOutput(values=[MetricValue("hits", "hits", float(np.mean(hits)))])

    check_metric(BestRM)

    class FirstListed(BestRM):
        """Reads the first-listed response of each prompt."""

        name = "first-listed-study"

        def compute(self, inputs):
            _require_finite(*inputs.oracle)
            return MetricOutput(
                values=[MetricValue("v", "v", float(np.mean([j[0] for j in inputs.oracle])))]
            )

    with pytest.raises(ConformanceError, match="response order"):
        check_metric(FirstListed)
