"""How a Hugging Face RM's weights load (issue 53): straight to the device in the target dtype,
and once per process while a component holds them — an audit builds a component per suite,
each of which loaded the checkpoint again.  Scores are checked against the model loaded the
plain way (``from_pretrained``, then ``.to``) and run by plain transformers calls."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from rmaudit.default_plugins.huggingface import DPOImplicit, HFClassifier  # noqa: E402
from rmaudit.recipe.validation import validate_options  # noqa: E402


def build(cls, **options):
    return cls(validate_options(cls, options, field=cls.name, file=None, base_dir=None))


@pytest.fixture
def loads(monkeypatch) -> list[dict]:
    """The keyword arguments of every from_pretrained call of a sequence classifier or a
    causal LM from now on."""
    seen: list[dict] = []
    for auto in (
        transformers.AutoModelForSequenceClassification,
        transformers.AutoModelForCausalLM,
    ):
        original = auto.from_pretrained

        def spy(*args, _original=original, **kwargs):
            seen.append(kwargs)
            return _original(*args, **kwargs)

        monkeypatch.setattr(auto, "from_pretrained", spy)
    gc.collect()  # models of earlier tests that nothing holds any more are gone
    return seen


def plain_scores(path: str, rm: HFClassifier, pairs) -> np.ndarray:
    """Each pair's score by the model loaded the plain way, one unpadded sequence a call."""
    model = transformers.AutoModelForSequenceClassification.from_pretrained(path).to("cpu")
    model.eval()
    scores = []
    with torch.inference_mode():
        for prompt, response in pairs:
            encoded, _ = rm.encode(prompt, response)
            inputs = {name: torch.tensor([ids]) for name, ids in encoded.items()}
            scores.append(float(model(**inputs).logits[0].mean()))
    return np.array(scores)


@pytest.mark.parametrize("name", ["gpt2-rm", "llama-rm", "deberta-rm"])
def test_weights_load_straight_to_the_device_and_score_as_loaded_plainly(
    name, tiny_models, pairs, loads
):
    pytest.importorskip("accelerate")
    rm = build(HFClassifier, model=tiny_models[name], device="cpu", dtype="float32")
    scores = np.array(rm.score(pairs))
    (kwargs,) = loads
    assert kwargs["device_map"] == {"": "cpu"} and kwargs["dtype"] == torch.float32
    assert {(p.device.type, p.dtype) for p in rm.model.parameters()} == {("cpu", torch.float32)}
    expected = plain_scores(tiny_models[name], rm, pairs)
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-5 * max(1, np.abs(expected).max()))


def test_without_accelerate_the_weights_load_on_the_host_then_move(
    tiny_models, pairs, loads, monkeypatch
):
    import sys

    monkeypatch.setitem(sys.modules, "accelerate", None)  # its import fails
    rm = build(HFClassifier, model=tiny_models["llama-rm"], device="cpu")
    scores = np.array(rm.score(pairs))
    assert "device_map" not in loads[0]
    np.testing.assert_allclose(scores, plain_scores(tiny_models["llama-rm"], rm, pairs), atol=1e-5)


def test_a_model_loads_once_while_a_component_holds_it(tiny_models, pairs, loads):
    path = tiny_models["gpt2-rm"]
    first, second = build(HFClassifier, model=path), build(HFClassifier, model=path, batch_size=3)
    scores = first.score(pairs)
    assert second.score(pairs) == pytest.approx(scores, abs=1e-5)
    assert second.model is first.model and len(loads) == 1
    # other loading options are another model: here a config override
    other = build(HFClassifier, model=path, config_overrides={"resid_pdrop": 0.0})
    other.score(pairs[:1])
    assert other.model is not first.model and len(loads) == 2
    del first, second
    gc.collect()
    again = build(HFClassifier, model=path)
    again.score(pairs[:1])
    assert len(loads) == 3  # none held it any more: loaded anew


def test_a_dpo_reference_loaded_as_another_s_policy_is_the_same_model(tiny_models, pairs, loads):
    policy, reference = tiny_models["gpt2-lm"], tiny_models["gpt2-lm-ref"]
    dpo = build(DPOImplicit, model=policy, reference=reference)
    swapped = build(DPOImplicit, model=reference, reference=policy)
    scores = np.array(dpo.score(pairs))
    np.testing.assert_allclose(np.array(swapped.score(pairs)), -scores, atol=1e-5)
    assert swapped.reference is dpo.policy and swapped.policy is dpo.reference
    assert len(loads) == 2


WAIT = 60.0  # seconds a thread waits for the other before the test calls them not overlapped


@pytest.mark.parametrize("cls", [HFClassifier, DPOImplicit])
def test_the_first_call_encodes_its_inputs_while_the_weights_load(
    cls, tiny_models, pairs, loads, monkeypatch
):
    """The first score() encodes its batch in a thread of its own while from_pretrained reads
    the weights (here from_pretrained waits until the encoding has begun: a load before the
    encoding would wait in vain); the scores are, bit for bit, those of a model loaded before
    its first call."""
    options = (
        {"model": tiny_models["llama-rm"]}
        if cls is HFClassifier
        else {"model": tiny_models["gpt2-lm"], "reference": tiny_models["gpt2-lm-ref"]}
    )
    began, threads = threading.Event(), []
    encode_many = cls.encode_many

    def encoding(self, batch):
        threads.append(threading.current_thread().name)
        began.set()
        return encode_many(self, batch)

    monkeypatch.setattr(cls, "encode_many", encoding)
    waited = []
    for auto in (
        transformers.AutoModelForSequenceClassification,
        transformers.AutoModelForCausalLM,
    ):
        loading = auto.from_pretrained

        def after_the_encoding_began(*args, _loading=loading, **kwargs):
            waited.append(began.wait(WAIT))
            return _loading(*args, **kwargs)

        monkeypatch.setattr(auto, "from_pretrained", after_the_encoding_began)
    first = build(cls, **options)
    scores = first.score(pairs)
    assert waited and all(waited) and threads[0] == "rmaudit-hf-encoding"
    loaded = build(cls, **options)
    loaded._load()
    threads.clear()
    np.testing.assert_array_equal(loaded.score(pairs), scores)
    assert set(threads) == {"rmaudit-hf-prefetch"}  # encoded as the engine asks, as before
    assert first.report()["inputs truncated"] == loaded.report()["inputs truncated"]


def test_an_error_while_encoding_ahead_is_the_one_a_loaded_model_raises(tiny_models, pairs):
    broken = {"model": tiny_models["gpt2-rm"], "chat_template": "{{ raise_exception('no') }}"}
    with pytest.raises(Exception) as ahead:
        build(HFClassifier, **broken).score(pairs)
    loaded = build(HFClassifier, **broken)
    loaded._load()
    with pytest.raises(Exception) as after:
        loaded.score(pairs)
    assert (type(ahead.value), str(ahead.value)) == (type(after.value), str(after.value))
    assert "rmaudit-hf-encoding" not in {t.name for t in threading.enumerate()}
