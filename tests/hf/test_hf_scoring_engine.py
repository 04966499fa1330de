"""How Hugging Face RMs batch on tiny models (CPU, float32): token budgets, out-of-memory
back-off, padding-free packing, fixed shapes, background tokenisation and the report.

The reference for every score is the same RM scoring one input per call (batch size 1,
no padding), which tests/hf/test_hf_reward_models.py checks against plain transformers.
"""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from rmaudit.backends.hf.engine import Engine, Limits  # noqa: E402
from rmaudit.backends.hf.inputs import ModelInput  # noqa: E402
from rmaudit.components.stopping import CallStopped, stoppable  # noqa: E402
from rmaudit.default_plugins.huggingface import DPOImplicit, HFClassifier  # noqa: E402
from rmaudit.errors import BadInput  # noqa: E402
from rmaudit.recipe.validation import validate_options  # noqa: E402

CLASSIFIERS = ["gpt2-rm", "llama-rm", "deberta-rm"]
DECODERS = {
    "gpt2-rm": HFClassifier,
    "llama-rm": HFClassifier,
    "gpt2-lm": DPOImplicit,
    "llama-lm": DPOImplicit,
}
MAX_LENGTH = 96


def build(cls, **options):
    return cls(validate_options(cls, options, field=cls.name, file=None, base_dir=None))


@pytest.fixture(scope="module")
def alone(tiny_models, pairs):
    """name -> scores of each pair scored in a call of its own."""

    def scores(name):
        cls = DPOImplicit if name.endswith("-lm") else HFClassifier
        rm = build(cls, model=tiny_models[name], max_length=MAX_LENGTH)
        return np.array([rm.score([pair])[0] for pair in pairs])

    return {name: scores(name) for name in [*CLASSIFIERS, "gpt2-lm", "llama-lm"]}


def rm_for(name, tiny_models, **options):
    cls = DPOImplicit if name.endswith("-lm") else HFClassifier
    return build(cls, model=tiny_models[name], max_length=MAX_LENGTH, **options)


def scorer_of(rm):
    rm._load()
    return rm.scorers[0] if hasattr(rm, "scorers") else rm.scorer


def recorded_batches(rm, monkeypatch) -> list:
    """The batches (their arrays) the RM's model is run on from now on."""
    scorer = scorer_of(rm)
    seen, original = [], scorer.forward

    def forward(batch, tensors):
        seen.append(batch)
        return original(batch, tensors)

    monkeypatch.setattr(scorer, "forward", forward)
    return seen


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_padding_free_scores_equal_padded_scores(name, tiny_models, pairs, alone):
    for options in (
        {"packing": True},
        {"packing": True, "max_batch_tokens": 160, "pad_to_multiple": 16},
        {"packing": True, "batch_size": 3, "pad_to_multiple": 64},
    ):
        rm = rm_for(name, tiny_models, **options)
        np.testing.assert_allclose(
            rm.score(pairs), alone[name], rtol=1e-5, atol=1e-5, err_msg=str(options)
        )
        assert rm.report()["padding-free"] == "yes"


def test_packs_hold_several_sequences_with_restarting_positions(tiny_models, pairs, monkeypatch):
    rm = rm_for("llama-rm", tiny_models, packing=True, max_batch_tokens=200)
    seen = recorded_batches(rm, monkeypatch)
    rm.score(pairs)
    assert seen and all(
        batch.shape[0] == 1 and "attention_mask" not in batch.arrays for batch in seen
    )
    restarts = [int((batch.arrays["position_ids"][0] == 0).sum()) for batch in seen]
    assert max(restarts) > 1 and sum(batch.shape[1] for batch in seen) < len(pairs) * MAX_LENGTH


def test_a_model_that_packing_would_change_is_scored_padded(tiny_models, pairs, alone):
    """DeBERTa's relative attention ignores position_ids: packed, its sequences would mix."""
    rm = rm_for("deberta-rm", tiny_models, packing=True)
    np.testing.assert_allclose(rm.score(pairs), alone["deberta-rm"], rtol=0, atol=1e-5)
    assert rm.report()["padding-free"].startswith("no: this model's outputs change")


@pytest.mark.parametrize("name", [*CLASSIFIERS, "llama-lm"])
def test_scores_do_not_depend_on_budget_rounding_order_or_prefetch(name, tiny_models, pairs, alone):
    order = list(range(len(pairs)))
    random.Random(1).shuffle(order)
    for options in (
        {"max_batch_tokens": 64},
        {"max_batch_tokens": 150, "pad_to_multiple": 16},
        {"max_batch_tokens": 1000, "pad_to_multiple": 64, "prefetch": 0},
        {"batch_size": 2, "prefetch": 1},
        {"batch_size": 16, "prefetch": 5},
    ):
        rm = rm_for(name, tiny_models, **options)
        shuffled = np.array(rm.score([pairs[i] for i in order]))[np.argsort(order)]
        np.testing.assert_allclose(
            shuffled, alone[name], rtol=1e-5, atol=1e-5, err_msg=str(options)
        )


@pytest.mark.parametrize("packing", [False, True])
def test_token_budget_batches_never_exceed_the_budget(packing, tiny_models, pairs, monkeypatch):
    budget, multiple = 128, 16  # the longest input (MAX_LENGTH) fits: no batch is excused
    rm = rm_for(
        "gpt2-rm", tiny_models, max_batch_tokens=budget, pad_to_multiple=multiple, packing=packing
    )
    seen = recorded_batches(rm, monkeypatch)
    rm.score(pairs)
    shapes = [batch.shape for batch in seen]
    assert len(shapes) > 2 and max(s[0] * s[1] for s in shapes) <= budget
    assert all(s[1] % multiple == 0 for s in shapes)
    if not packing:
        assert max(s[0] for s in shapes) > 1  # the budget, not a row limit, cut the batches


@pytest.mark.parametrize(
    "name,options", [("llama-rm", {}), ("deberta-rm", {}), ("gpt2-lm", {"packing": True})]
)
def test_out_of_memory_halves_the_budget_and_keeps_every_score_once(
    name, options, tiny_models, pairs, alone, monkeypatch
):
    rm = rm_for(name, tiny_models, max_batch_tokens=2000, **options)
    scorer = scorer_of(rm)
    runs = []
    original = scorer.forward

    def forward(batch, tensors):  # a device that holds 200 tokens at a time
        tokens = int(np.prod(batch.shape))
        if tokens > 200:
            raise torch.OutOfMemoryError(f"CUDA out of memory (simulated: {tokens} tokens)")
        runs.append(batch.counts)
        return original(batch, tensors)

    monkeypatch.setattr(scorer, "forward", forward)
    scores = rm.score(pairs)
    np.testing.assert_allclose(scores, alone[name], rtol=1e-5, atol=1e-5)
    assert sum(len(counts) for counts in runs) == len(pairs)  # each input run once, after back-off
    assert scorer.engine.limits.max_tokens <= 200
    assert rm.report()["out-of-memory back-offs"] >= 1
    assert "rmaudit-hf-prefetch" not in {t.name for t in threading.enumerate()}


def test_an_input_that_runs_out_of_memory_alone_is_bad_input(tiny_models, pairs, monkeypatch):
    rm = rm_for("llama-rm", tiny_models)
    rm._load()

    def forward(batch, tensors):
        raise torch.OutOfMemoryError("CUDA out of memory (simulated)")

    monkeypatch.setattr(rm.scorer, "forward", forward)
    with pytest.raises(BadInput, match="does not fit in the device's memory even alone") as caught:
        rm.score(pairs[:3])
    assert caught.value.field == "max_length"


def test_errors_of_the_tokenising_thread_reach_the_caller_and_stop_it():
    engine = Engine(
        torch.device("cpu"),
        Limits(batch_size=2, max_tokens=None),
        pad_id=0,
        read_positions=lambda row: [0],
        prefetch=2,
    )

    def encode(indices):
        if max(indices) >= 64:  # the second group
            raise ValueError("bad template")
        return [ModelInput([1, 2, 3]) for _ in indices]

    with pytest.raises(ValueError, match="bad template"):
        engine.run(range(100), encode, lambda batch, tensors: torch.zeros(len(batch.lengths), 1))
    assert "rmaudit-hf-prefetch" not in {t.name for t in threading.enumerate()}


def test_an_engine_asked_to_stop_runs_no_further_batch():
    """Inside a call the run asked to stop (the local executor's worker on Ctrl-C), the
    engine ends before its next batch and leaves no tokenising thread behind."""
    engine = Engine(
        torch.device("cpu"),
        Limits(batch_size=2, max_tokens=None),
        pad_id=0,
        read_positions=lambda row: [0],
        prefetch=2,
    )
    stop, forwards = threading.Event(), []

    def forward(batch, tensors):
        forwards.append(batch)
        stop.set()  # the run stops while this batch runs
        return torch.zeros(len(batch.lengths), 1)

    with stoppable(stop), pytest.raises(CallStopped):
        engine.run(range(100), lambda indices: [ModelInput([1, 2, 3]) for _ in indices], forward)
    assert len(forwards) == 1
    assert "rmaudit-hf-prefetch" not in {t.name for t in threading.enumerate()}


@pytest.fixture
def restore_determinism():
    yield
    torch.use_deterministic_algorithms(False)


@pytest.mark.parametrize("name", ["llama-rm", "deberta-rm", "gpt2-lm"])
def test_deterministic_mode_gives_the_same_bits_whatever_the_batch(
    name, tiny_models, pairs, alone, restore_determinism
):
    rm = rm_for(name, tiny_models, deterministic=True, batch_size=4)
    together = rm.score(pairs)
    one_by_one = [rm.score([pair])[0] for pair in pairs]
    order = list(range(len(pairs)))[::-1]
    reversed_ = list(np.array(rm.score([pairs[i] for i in order]))[np.argsort(order)])
    halves = rm.score(pairs[1::2]) + rm.score(pairs[::2])
    assert together == one_by_one == reversed_
    assert sorted(halves) == sorted(together)
    np.testing.assert_allclose(together, alone[name], rtol=1e-5, atol=1e-5)
    report = rm.report()
    assert report["deterministic"] and report["padding-free"].startswith("no: deterministic")


def test_compile_runs_the_model_through_torch_compile(tiny_models, pairs, alone):
    from torch._dynamo.utils import counters

    before = counters["frames"]["ok"]
    rm = rm_for("llama-rm", tiny_models, compile="eager", batch_size=4)
    np.testing.assert_allclose(rm.score(pairs), alone["llama-rm"], rtol=0, atol=1e-5)
    assert counters["frames"]["ok"] > before and rm.report()["compiled"] == "eager"
    with pytest.raises(BadInput, match="not a torch.compile backend") as caught:
        rm_for("llama-rm", tiny_models, compile="no-such-backend").score(pairs[:1])
    assert caught.value.field == "compile"
