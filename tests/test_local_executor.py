"""The local executor's overlap: the component computes batch k + 1 in a worker thread while
the driver writes batch k; batches come back in order, each once, only after their call
returned; inputs are made in the driver thread; errors and early stops leave no call running.
And the batch size a component asks for (``preferred_batch_items``) beats the recipe's."""

from __future__ import annotations

import sqlite3
import threading
import types

import pytest
from _support import SMALL_RECIPE

from rmaudit import hookimpl
from rmaudit.backends.simulated import SimulatedRewardModel
from rmaudit.components import RewardModel
from rmaudit.components.stopping import CallStopped, raise_if_stopped
from rmaudit.recipe import load_recipe
from rmaudit.recipe.executor_options import LocalExecutorOptions
from rmaudit.run import Runner
from rmaudit.run.executors import LocalExecutor
from rmaudit.store import Store

WAIT = 5.0  # seconds a thread waits for the other before the test calls it not overlapped


class Doubler:
    """A component whose ``score`` doubles numbers and notes which thread ran which call."""

    kind, name = "reward_model", "doubler"

    def __init__(self, fail_on: int | None = None) -> None:
        self.calls: list[tuple[int, str]] = []
        self.started = {i: threading.Event() for i in range(100)}
        self.fail_on = fail_on

    def score(self, inputs: list[int]) -> list[int]:
        batch = inputs[0] // 10
        self.calls.append((batch, threading.current_thread().name))
        self.started[batch].set()
        if batch == self.fail_on:
            raise ValueError(f"batch {batch} fails")
        return [2 * x for x in inputs]


def batches(count: int, made_in: list[str] | None = None):
    for k in range(count):
        if made_in is not None:
            made_in.append(threading.current_thread().name)
        yield k, [10 * k, 10 * k + 1]


@pytest.mark.parametrize("overlap", [True, False])
def test_the_next_batch_computes_while_the_driver_handles_the_last(overlap):
    component = Doubler()
    executor = LocalExecutor(LocalExecutorOptions(overlap=overlap))
    made_in: list[str] = []
    seen, overlapped = [], []
    for tag, outputs in executor.map(component, "score", batches(4, made_in)):
        seen.append((tag, outputs))
        if tag < 3:  # "writing" batch k: does batch k + 1 start meanwhile?
            overlapped.append(component.started[tag + 1].wait(WAIT if overlap else 0.2))
    assert seen == [(k, [20 * k, 20 * k + 2]) for k in range(4)]
    assert overlapped == [overlap] * 3
    assert [batch for batch, _ in component.calls] == [0, 1, 2, 3]  # each once, in order
    main = threading.current_thread().name
    assert made_in == [main] * 4  # inputs (which may read the store) stay in the driver
    workers = {thread for _, thread in component.calls}
    assert (main not in workers) if overlap else (workers == {main})


class ThreadRecorder:
    """A component noting the thread of each of its calls."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def score(self, inputs: list[int]) -> list[int]:
        self.threads.append(threading.get_ident())
        return inputs


def test_a_stage_makes_all_its_calls_in_one_worker_thread_that_ends_with_it():
    """One long-lived worker per stage, not a thread per batch: every call of a stream runs in
    the same thread (not the driver's), which is gone once the stream is."""
    stages = [ThreadRecorder(), ThreadRecorder()]
    for component in stages:
        tags = [tag for tag, _ in LocalExecutor().map(component, "score", batches(5))]
        assert tags == list(range(5))
        assert [t for t in threading.enumerate() if t.name == "rmaudit-local-executor"] == []
    for component in stages:
        assert len(component.threads) == 5 and len(set(component.threads)) == 1
        assert threading.get_ident() not in component.threads


def test_a_failing_call_stops_the_stream_after_every_earlier_batch():
    component = Doubler(fail_on=2)
    got = []
    with pytest.raises(ValueError, match="batch 2 fails"):
        for tag, _ in LocalExecutor().map(component, "score", batches(5)):
            got.append(tag)
    assert got == [0, 1]
    assert [batch for batch, _ in component.calls] == [0, 1, 2]  # nothing after the failure


def test_failing_inputs_still_hand_back_the_batch_already_computed():
    def inputs():
        yield 0, [0, 1]
        raise KeyError("response r9 is not stored")

    got = []
    with pytest.raises(KeyError, match="r9"):
        for tag, outputs in LocalExecutor().map(Doubler(), "score", inputs()):
            got.append((tag, outputs))
    assert got == [(0, [0, 2])]


def test_a_consumer_that_stops_early_leaves_no_call_running():
    release = threading.Event()

    class Slow(Doubler):
        def score(self, inputs):
            out = super().score(inputs)
            if inputs[0] == 10:
                release.wait(WAIT)
            return out

    component = Slow()
    stream = LocalExecutor().map(component, "score", batches(3))
    assert next(stream)[0] == 0
    assert component.started[1].wait(WAIT)  # batch 1 runs in the worker
    threading.Timer(0.2, release.set).start()
    stream.close()  # e.g. the write of batch 0 failed: waits for batch 1's call to end
    assert release.is_set()
    assert [t for t in threading.enumerate() if t.name == "rmaudit-local-executor"] == []
    assert [batch for batch, _ in component.calls] == [0, 1]  # batch 2 never started


def test_a_consumer_that_stops_early_asks_the_running_call_to_stop():
    """A long call that checks between its batches ends at its next check once the run stops
    (Ctrl-C, a failed write), and the stream closes only after it ended."""
    ended: list[str] = []

    class Long(Doubler):
        def score(self, inputs):
            out = super().score(inputs)
            if inputs[0] == 10:
                try:
                    for _ in range(int(WAIT / 0.01)):  # a long call, checking between batches
                        raise_if_stopped()
                        threading.Event().wait(0.01)
                except CallStopped:
                    ended.append("stopped")
                    raise
                ended.append("ran to its end")
            return out

    component = Long()
    stream = LocalExecutor().map(component, "score", batches(3))
    assert next(stream)[0] == 0
    assert component.started[1].wait(WAIT)  # batch 1 runs in the worker
    stream.close()
    assert ended == ["stopped"]
    assert [t for t in threading.enumerate() if t.name == "rmaudit-local-executor"] == []
    assert [batch for batch, _ in component.calls] == [0, 1]


class Chunky(RewardModel):
    """The honest simulated RM, asking for calls of 5 items and noting each call's size."""

    name = "chunky"
    sizes: list[int] = []

    def preferred_batch_items(self) -> int:
        return 5

    def score(self, batch):
        Chunky.sizes.append(len(batch))
        model = SimulatedRewardModel(seed=7)
        return [model.score(p.text, r.text) for p, r in batch]


@hookimpl
def register_reward_models(register):
    register(Chunky)


def _scores(db) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "select rm_key, response_id, score from rm_scores order by rm_key, response_id"
        ).fetchall()


def test_a_run_stores_the_same_scores_with_and_without_overlap_in_the_calls_the_rm_asks_for(
    tmp_path, register_plugin
):
    plugin = types.ModuleType("chunky_plugin")
    plugin.Chunky, plugin.register_reward_models = Chunky, register_reward_models
    body = SMALL_RECIPE.replace(
        "{extra_rms}", '[[reward_models]]\nlabel = "chunky"\nname = "chunky"\n'
    )
    stored = {}
    with register_plugin(plugin):
        for overlap in (True, False):
            recipe_path = tmp_path / f"overlap-{overlap}.toml"
            recipe_path.write_text(
                f'{body}\n[executor]\nname = "local"\noverlap = {str(overlap).lower()}\n'
            )
            recipe = load_recipe(recipe_path)
            assert recipe.executor == LocalExecutorOptions(overlap=overlap)
            Chunky.sizes = []
            store = Store.open(tmp_path / f"overlap-{overlap}.db")
            try:
                Runner(recipe, store).run()
            finally:
                store.close()
            assert Chunky.sizes == [5] * 25 + [3]  # 8 prompts × 16 responses, not batch_size 32
            stored[overlap] = _scores(tmp_path / f"overlap-{overlap}.db")
    assert len(stored[True]) == 3 * 128
    assert stored[True] == stored[False]
