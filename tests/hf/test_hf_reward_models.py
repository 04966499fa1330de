"""hf-classifier and dpo-implicit on tiny GPT-2, Llama and DeBERTa-v2 models built offline.

Every expected value comes from an independent computation: the model run by plain
transformers calls on one unpadded sequence, never through rmaudit's batching.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import _tiny_hf  # noqa: E402

from rmaudit.components import Prompt, Response  # noqa: E402
from rmaudit.default_plugins.huggingface import DPOImplicit, HFClassifier  # noqa: E402
from rmaudit.errors import BadInput  # noqa: E402
from rmaudit.recipe.validation import validate_options  # noqa: E402

CLASSIFIERS = ["gpt2-rm", "llama-rm", "deberta-rm"]


def build(cls, **options):
    return cls(validate_options(cls, options, field=cls.name, file=None, base_dir=None))


def pair(prompt: str, response: str, **prompt_meta) -> tuple[Prompt, Response]:
    return Prompt("p", prompt, prompt_meta), Response("r", "p", 0, response)


def one_at_a_time(model, pairs):
    return np.array([model.score([pair])[0] for pair in pairs])


def reference_logits(path: str, pairs, *, max_length: int) -> np.ndarray:
    """Logits of each (prompt, response), unpadded and alone, encoded as the tokenizer says:
    its chat template when it has one, else a text pair; left truncation."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    tokenizer.truncation_side = "left"
    model = transformers.AutoModelForSequenceClassification.from_pretrained(path).eval()
    rows = []
    for prompt, response in pairs:
        if tokenizer.chat_template:
            text = tokenizer.apply_chat_template(
                [
                    {"role": "user", "content": prompt.text},
                    {"role": "assistant", "content": response.text},
                ],
                tokenize=False,
            )
            encoded = tokenizer(
                text,
                add_special_tokens=False,
                truncation=True,
                max_length=max_length,
                return_tensors="pt",
            )
        else:
            encoded = tokenizer(
                prompt.text,
                response.text,
                truncation=True,
                max_length=max_length,
                return_tensors="pt",
            )
        encoded = {k: v for k, v in encoded.items() if k in tokenizer.model_input_names}
        with torch.no_grad():
            rows.append(model(**encoded).logits[0].numpy())
    return np.array(rows)


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_classifier_scores_match_an_unpadded_forward_pass_alone(name, tiny_models, pairs):
    rm = build(HFClassifier, model=tiny_models[name], max_length=96)
    expected = reference_logits(tiny_models[name], pairs, max_length=96).mean(axis=1)
    assert np.ptp(expected) > 0.1  # distinct scores, so the tolerance below means something
    np.testing.assert_allclose(one_at_a_time(rm, pairs), expected, rtol=0, atol=1e-5)


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_classifier_scores_do_not_depend_on_batch_size_or_order(name, tiny_models, pairs):
    alone = one_at_a_time(build(HFClassifier, model=tiny_models[name], max_length=96), pairs)
    order = list(range(len(pairs)))
    random.Random(0).shuffle(order)
    for batch_size in (1, 2, 3, 7, len(pairs)):
        rm = build(HFClassifier, model=tiny_models[name], max_length=96, batch_size=batch_size)
        np.testing.assert_allclose(
            rm.score(pairs), alone, rtol=0, atol=1e-5, err_msg=f"batch_size={batch_size}"
        )
        shuffled = rm.score([pairs[i] for i in order])
        np.testing.assert_allclose(
            np.array(shuffled)[np.argsort(order)],
            alone,
            rtol=0,
            atol=1e-5,
            err_msg=f"batch_size={batch_size}, shuffled",
        )


def test_token_budget_batches_score_like_single_sequences(tiny_models, pairs):
    alone = one_at_a_time(build(HFClassifier, model=tiny_models["llama-rm"], max_length=96), pairs)
    rm = build(
        HFClassifier,
        model=tiny_models["llama-rm"],
        max_length=96,
        batch_size=16,
        max_batch_tokens=200,
    )
    np.testing.assert_allclose(rm.score(pairs), alone, rtol=0, atol=1e-5)


def test_multi_head_rm_is_reduced_as_head_aggregate_says(tiny_models, pairs):
    path = tiny_models["llama-rm"]  # three heads
    logits = reference_logits(path, pairs, max_length=96)
    assert logits.shape == (len(pairs), 3)
    for options, expected in (
        ({}, logits.mean(axis=1)),
        ({"head_aggregate": "first"}, logits[:, 0]),
        ({"head_aggregate": "index", "head_index": 2}, logits[:, 2]),
    ):
        rm = build(HFClassifier, model=path, max_length=96, batch_size=5, **options)
        np.testing.assert_allclose(
            rm.score(pairs), expected, rtol=0, atol=1e-5, err_msg=str(options)
        )


def test_head_index_beyond_the_model_s_heads_is_bad_input(tiny_models, pairs):
    rm = build(HFClassifier, model=tiny_models["llama-rm"], head_aggregate="index", head_index=3)
    with pytest.raises(BadInput, match=r"head_index.*3 heads"):
        rm.score(pairs[:1])


def test_head_index_without_index_aggregate_is_rejected_by_the_options():
    with pytest.raises(BadInput, match="head_index"):
        build(HFClassifier, model="x", head_index=1)


def test_truncated_inputs_are_counted_and_cut_on_the_chosen_side(tiny_models, pairs):
    path = tiny_models["deberta-rm"]
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    full_lengths = [len(tokenizer(p.text, r.text)["input_ids"]) for p, r in pairs]
    limit = 40
    expected = sum(length > limit for length in full_lengths)
    assert 0 < expected < len(pairs)
    rm = build(HFClassifier, model=path, max_length=limit, batch_size=4)
    rm.score(pairs[:7])
    rm.score(pairs[7:])
    report = rm.report()
    assert (report["inputs scored"], report["inputs truncated"]) == (len(pairs), expected)
    assert report["max_length"] == limit and report["truncation side"] == "left"

    long_pair = pairs[full_lengths.index(max(full_lengths))]
    full = tokenizer(long_pair[0].text, long_pair[1].text)["input_ids"]
    for side in ("left", "right"):
        rm = build(HFClassifier, model=path, max_length=limit, truncation_side=side)
        rm._load()
        ids, truncated = rm.encode(*long_pair)
        assert truncated and len(ids["input_ids"]) == limit
        # the pair's special tokens stay; the cut side loses text
        assert ids["input_ids"][0] == tokenizer.cls_token_id
        assert ids["input_ids"][-1] == tokenizer.sep_token_id
        kept_tail = ids["input_ids"][-10:-1] == full[-10:-1]
        assert kept_tail == (side == "left")


def test_chat_templates_are_applied_as_the_tokenizer_defines(tiny_models):
    gpt2 = build(HFClassifier, model=tiny_models["gpt2-rm"])
    gpt2._load()
    ids, _ = gpt2.encode(*pair("Hi there", "Hello!"))
    rendered = "<|user|>\nHi there</s>\n<|assistant|>\nHello!</s>\n"
    assert gpt2.tokenizer.decode(ids["input_ids"]) == rendered
    assert ids["input_ids"] == gpt2.tokenizer(rendered, add_special_tokens=False)["input_ids"]
    assert gpt2.report()["input format"] == "the tokenizer's chat template"

    llama = build(HFClassifier, model=tiny_models["llama-rm"], fallback_chat_template="IGNORED")
    llama._load()
    ids, _ = llama.encode(*pair("Hi there", "Hello!"))
    # the tokenizer's own template wins over the fallback; BOS is written once, by the template
    assert llama.tokenizer.decode(ids["input_ids"]) == "<s>[INST] Hi there [/INST] Hello!</s>"


def test_a_dialogue_prompt_is_scored_as_its_messages(tiny_models):
    dialogue = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Tell me a joke"},
    ]
    rm = build(HFClassifier, model=tiny_models["gpt2-rm"])
    rm._load()
    ids, _ = rm.encode(*pair("Human: Hi ...", "No.", messages=dialogue))
    assert rm.tokenizer.decode(ids["input_ids"]) == (
        "<|user|>\nHi</s>\n<|assistant|>\nHello.</s>\n<|user|>\nTell me a joke</s>\n"
        "<|assistant|>\nNo.</s>\n"
    )

    dpo = build(DPOImplicit, model=tiny_models["gpt2-lm"])
    dpo._load()
    ids, start, _ = dpo.encode(*pair("Human: Hi ...", "No.", messages=dialogue))
    assert dpo.tokenizer.decode(ids[start:]) == "No.</s>\n"  # only the final answer is scored


def test_fallback_template_applies_when_the_tokenizer_has_none(tiny_models):
    path = tiny_models["deberta-rm"]
    plain = build(HFClassifier, model=path)
    plain._load()
    ids, _ = plain.encode(*pair("Hi there", "Hello!"))
    assert plain.tokenizer.decode(ids["input_ids"]) == "[CLS]Hi there[SEP]Hello![SEP]"
    assert ids["token_type_ids"].count(1) > 0  # the response is segment B

    templated = build(
        HFClassifier,
        model=path,
        fallback_chat_template=_tiny_hf.TURN_TEMPLATE.replace("eos_token", "'|'"),
    )
    templated._load()
    ids, _ = templated.encode(*pair("Hi there", "Hello!"))
    assert templated.tokenizer.decode(ids["input_ids"]) == (
        "<|user|>\nHi there|\n<|assistant|>\nHello!|\n"
    )
    assert templated.report()["input format"] == "the recipe's fallback chat template"


@pytest.mark.parametrize("enabled", [False, True])
def test_trust_remote_code_is_passed_and_off_by_default(enabled, tiny_models, pairs, monkeypatch):
    seen = []
    for auto in (transformers.AutoTokenizer, transformers.AutoModelForSequenceClassification):
        original = auto.from_pretrained

        def spy(*args, _original=original, **kwargs):
            seen.append(kwargs.get("trust_remote_code", "missing"))
            return _original(*args, **kwargs)

        monkeypatch.setattr(auto, "from_pretrained", spy)
    options = {"trust_remote_code": True} if enabled else {}
    build(HFClassifier, model=tiny_models["gpt2-rm"], **options).score(pairs[:1])
    assert seen == [enabled, enabled]


def test_loading_options_reach_from_pretrained_and_keep_the_scores(tiny_models, pairs, monkeypatch):
    """revision, dtype, attn_implementation and device_map are passed as the recipe gives
    them; eager attention and a device_map placement score as the default does."""
    path = tiny_models["llama-rm"]
    base = build(HFClassifier, model=path).score(pairs)
    eager = build(HFClassifier, model=path, attn_implementation="eager")
    assert eager.score(pairs) == pytest.approx(base, abs=1e-5)
    assert eager.model.config._attn_implementation == "eager"
    pytest.importorskip("accelerate")
    placed = build(HFClassifier, model=path, device_map={"": "cpu"})
    assert placed.score(pairs) == pytest.approx(base, abs=1e-5)
    assert next(placed.model.parameters()).device.type == "cpu"
    half = build(HFClassifier, model=path, dtype="bfloat16")
    half.score(pairs[:1])
    assert next(half.model.parameters()).dtype == torch.bfloat16
    seen = {}
    original = transformers.AutoModelForSequenceClassification.from_pretrained

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(transformers.AutoModelForSequenceClassification, "from_pretrained", spy)
    build(
        HFClassifier, model=path, revision="v1.0", device_map="cpu", attn_implementation="eager"
    ).score(pairs[:1])
    assert {k: seen[k] for k in ("revision", "device_map", "attn_implementation")} == {
        "revision": "v1.0",
        "device_map": "cpu",
        "attn_implementation": "eager",
    }
    with pytest.raises((BadInput, ValueError), match="device or device_map, not both"):
        build(HFClassifier, model=path, device="cpu", device_map="cpu")


def test_device_map_without_accelerate_is_bad_input_naming_it(tiny_models, pairs, monkeypatch):
    monkeypatch.setitem(sys.modules, "accelerate", None)
    with pytest.raises(BadInput, match="device_map needs the accelerate package") as caught:
        build(HFClassifier, model=tiny_models["gpt2-rm"], device_map="cpu").score(pairs[:1])
    assert caught.value.field == "device_map"


def test_an_unknown_model_is_bad_input_naming_the_option(pairs, monkeypatch):
    import huggingface_hub.constants

    # offline even if huggingface_hub was imported before conftest set HF_HUB_OFFLINE
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    rm = build(HFClassifier, model="rmaudit-tests/no-such-model")
    with pytest.raises(BadInput) as caught:
        rm.score(pairs[:1])
    assert caught.value.field == "model" and caught.value.value == "rmaudit-tests/no-such-model"


def test_nothing_loads_until_the_first_score(tiny_models):
    rm = build(HFClassifier, model=tiny_models["gpt2-rm"])
    assert rm.report() == {} and not hasattr(rm, "model")


def test_runtime_options_do_not_change_the_identity(tiny_models):
    base = build(HFClassifier, model=tiny_models["gpt2-rm"])
    assert (
        build(
            HFClassifier,
            model=tiny_models["gpt2-rm"],
            batch_size=32,
            device="cpu",
            max_batch_tokens=4096,
        ).key
        == base.key
    )
    assert build(HFClassifier, model=tiny_models["gpt2-rm"], max_length=64).key != base.key


def test_a_model_folder_resolves_relative_to_the_recipe(tiny_models, tmp_path):
    folder = Path(tiny_models["gpt2-rm"])
    options = validate_options(
        HFClassifier, {"model": folder.name}, field="rm", file=None, base_dir=folder.parent
    )
    assert options.model == str(folder.resolve())
    hub_id = validate_options(
        HFClassifier, {"model": "org/reward-model"}, field="rm", file=None, base_dir=tmp_path
    )
    assert hub_id.model == "org/reward-model"


# -- DPO implicit reward ------------------------------------------------------------------


def reference_response_logprobs(path: str, prompt: str, response: str) -> np.ndarray:
    """log p(token | everything before it) for the response tokens of the chat-templated
    conversation under the causal LM at ``path``; the prompt's tokens (the prompt rendered
    with the generation prompt) are left out."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    user = [{"role": "user", "content": prompt}]
    prompt_ids = tokenizer.apply_chat_template(user, add_generation_prompt=True, return_dict=False)
    full_ids = tokenizer.apply_chat_template(
        user + [{"role": "assistant", "content": response}], return_dict=False
    )
    assert full_ids[: len(prompt_ids)] == prompt_ids
    with torch.no_grad():
        logits = model(torch.tensor([full_ids])).logits[0]
    logprobs = torch.log_softmax(logits.double(), dim=-1)
    positions = range(len(prompt_ids), len(full_ids))
    return np.array([logprobs[j - 1, full_ids[j]].item() for j in positions])


@pytest.fixture(scope="module")
def dpo_pairs(pairs):
    return [pair for i, pair in enumerate(pairs) if i % 4 != 3]  # no long answers: no truncation


def test_dpo_reward_is_the_log_ratio_over_response_tokens(tiny_models, dpo_pairs):
    policy, reference = tiny_models["gpt2-lm"], tiny_models["gpt2-lm-ref"]
    logp = [reference_response_logprobs(policy, p.text, r.text) for p, r in dpo_pairs]
    logp_ref = [reference_response_logprobs(reference, p.text, r.text) for p, r in dpo_pairs]
    expected = {
        ("sum", True): [a.sum() - b.sum() for a, b in zip(logp, logp_ref, strict=True)],
        ("mean", True): [a.mean() - b.mean() for a, b in zip(logp, logp_ref, strict=True)],
        ("sum", False): [a.sum() for a in logp],
        ("mean", False): [a.mean() for a in logp],
    }
    for (aggregate, with_reference), want in expected.items():
        rm = build(
            DPOImplicit,
            model=policy,
            aggregate=aggregate,
            batch_size=3,
            reference=reference if with_reference else None,
        )
        np.testing.assert_allclose(
            rm.score(dpo_pairs),
            want,
            rtol=1e-5,
            atol=1e-5,
            err_msg=f"{aggregate}, reference={with_reference}",
        )
    rm = build(DPOImplicit, model=policy, reference=reference, beta=0.1)
    np.testing.assert_allclose(
        rm.score(dpo_pairs), 0.1 * np.array(expected[("sum", True)]), rtol=1e-5, atol=1e-6
    )


def test_dpo_scores_exactly_the_response_tokens(tiny_models, dpo_pairs):
    """The scored tokens are the response and the tokens the template closes its turn with;
    'mean' divides by their count."""
    prompt, response = dpo_pairs[0]
    rm = build(DPOImplicit, model=tiny_models["gpt2-lm"])
    rm._load()
    ids, start, _ = rm.encode(prompt, response)
    assert rm.tokenizer.decode(ids[:start]).endswith(prompt.text + "</s>\n<|assistant|>\n")
    assert rm.tokenizer.decode(ids[start:]) == response.text + "</s>\n"
    total = rm.score([(prompt, response)])[0]
    mean = build(DPOImplicit, model=tiny_models["gpt2-lm"], aggregate="mean").score(
        [(prompt, response)]
    )[0]
    assert mean == pytest.approx(total / (len(ids) - start), rel=1e-9)


def test_dpo_scores_do_not_depend_on_batch_size_or_order(tiny_models, pairs):
    options = {"model": tiny_models["llama-lm"], "max_length": 96}
    alone = one_at_a_time(build(DPOImplicit, **options), pairs)
    order = list(range(len(pairs)))[::-1]
    for batch_size in (2, 7, len(pairs)):
        rm = build(DPOImplicit, batch_size=batch_size, **options)
        np.testing.assert_allclose(rm.score(pairs), alone, rtol=1e-5, atol=1e-5)
        reordered = np.array(rm.score([pairs[i] for i in order]))[np.argsort(order)]
        np.testing.assert_allclose(reordered, alone, rtol=1e-5, atol=1e-5)


def test_dpo_truncation_keeps_the_end_and_is_counted(tiny_models, pairs):
    untruncated = build(DPOImplicit, model=tiny_models["gpt2-lm"], max_length=10_000)
    untruncated._load()
    full_lengths = [len(untruncated.encode(p, r)[0]) for p, r in pairs]
    rm = build(DPOImplicit, model=tiny_models["gpt2-lm"], max_length=48)
    rm._load()
    prompt, response = pairs[3]  # the long answer
    ids, start, truncated = rm.encode(prompt, response)
    assert truncated and len(ids) == 48 and start == 1  # the prompt is gone, the response stays
    assert rm.tokenizer.decode(ids).endswith(response.text[-20:] + "</s>\n")
    rm.score(pairs)
    assert rm.report()["inputs truncated"] == sum(length > 48 for length in full_lengths) > 0


def test_dpo_needs_a_chat_template(tiny_models, pairs):
    rm = build(DPOImplicit, model=tiny_models["deberta-rm"])
    with pytest.raises(BadInput) as caught:
        rm.score(pairs[:1])
    assert caught.value.field == "fallback_chat_template"


def test_dpo_reference_must_share_the_tokenizer(tiny_models, pairs):
    rm = build(
        DPOImplicit, model=tiny_models["gpt2-lm"], reference=tiny_models["gpt2-lm-other-vocab"]
    )
    with pytest.raises(BadInput) as caught:
        rm.score(pairs[:1])
    assert caught.value.field == "reference"
