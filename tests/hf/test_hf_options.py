"""Hugging Face options that decide precision and what a GPU run looks like: the dtype's
device default, which options enter a component's key, the float32 classifier head, the
auto-sized token budget, and the batch dependence measured after a run without the scoring
checks."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from rmaudit.backends.hf import token_budget as budget  # noqa: E402
from rmaudit.default_plugins.huggingface import DPOImplicit, HFCausalLM, HFClassifier  # noqa: E402
from rmaudit.recipe.validation import validate_options  # noqa: E402

OPERATIONAL = {
    "batch_size": 3,
    "max_batch_tokens": 512,
    "pad_to_multiple": 64,
    "packing": True,
    "compile": "eager",
    "prefetch": 0,
    "batch_dependence_sample": 0,
    "device": "cpu",
    "items_per_call": 64,
}


def build(cls, **options):
    return cls(validate_options(cls, options, field=cls.name, file=None, base_dir=None))


def test_dtype_defaults_to_bfloat16_on_a_gpu_and_the_key_records_it():
    assert build(HFClassifier, model="m", device="cuda").options.dtype == "bfloat16"
    assert build(HFClassifier, model="m", device="cuda:1").options.dtype == "bfloat16"
    assert build(HFClassifier, model="m", device="cpu").options.dtype == "auto"
    assert build(HFCausalLM, model="m", device="cuda").options.dtype == "bfloat16"
    assert build(HFClassifier, model="m", device="cuda", dtype="float32").options.dtype == "float32"
    if not torch.cuda.is_available():
        assert build(HFClassifier, model="m").options.dtype == "auto"
    assert (
        build(HFClassifier, model="m", device="cuda").key
        != build(HFClassifier, model="m", device="cpu").key
    )


@pytest.mark.parametrize("cls", [HFClassifier, DPOImplicit])
def test_a_gpu_rm_asks_the_scores_stage_for_thousands_of_inputs_per_call(cls):
    assert build(cls, model="m", device="cuda").preferred_batch_items() == 4096
    assert build(cls, model="m", device_map="auto").preferred_batch_items() == (
        4096 if torch.cuda.is_available() else None
    )
    assert (
        build(cls, model="m", device="cpu").preferred_batch_items() is None
    )  # recipe's batch_size
    assert build(cls, model="m", device="cpu", items_per_call=50).preferred_batch_items() == 50
    assert build(cls, model="m", device="cuda", items_per_call=50).preferred_batch_items() == 50


@pytest.mark.parametrize("cls", [HFClassifier, DPOImplicit])
def test_options_that_only_change_speed_keep_the_key_and_output_options_change_it(cls):
    base = build(cls, model="m", device="cpu")
    assert build(cls, model="m", **OPERATIONAL).key == base.key
    assert build(cls, model="m", device="cpu", deterministic=True).key != base.key
    assert build(cls, model="m", device="cpu", dtype="bfloat16").key != base.key
    policy = build(HFCausalLM, model="m", device="cpu")
    assert build(HFCausalLM, model="m", device="cpu", share_prefill=False).key == policy.key


def test_the_head_of_a_half_precision_classifier_runs_in_float32(tiny_models, pairs):
    """Expected: the bf16 model's own hidden state at the pooled token, times the head's
    bf16 weights, summed in float64 — a score with more bits than bf16 holds."""
    path = tiny_models["gpt2-rm"]
    rm = build(HFClassifier, model=path, dtype="bfloat16", max_length=96)
    scores = np.array([rm.score([pair])[0] for pair in pairs])
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        path, dtype=torch.bfloat16
    ).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    tokenizer.truncation_side = "left"
    expected, rounded = [], []
    for prompt, response in pairs:
        text = tokenizer.apply_chat_template(
            [
                {"role": "user", "content": prompt.text},
                {"role": "assistant", "content": response.text},
            ],
            tokenize=False,
        )
        ids = tokenizer(
            text, add_special_tokens=False, truncation=True, max_length=96, return_tensors="pt"
        )["input_ids"]
        with torch.no_grad():
            hidden = model.transformer(ids).last_hidden_state[0, -1]
            rounded.append(model(ids).logits[0, 0].item())
            expected.append((hidden.double() @ model.score.weight[0].double()).item())
    np.testing.assert_allclose(scores, expected, rtol=1e-5, atol=1e-5)
    # the model's own bf16 logits are the same scores rounded to bf16's 8 mantissa bits
    np.testing.assert_allclose(rounded, expected, rtol=2**-7)
    assert any(s != np.float32(torch.tensor(s).bfloat16().item()) for s in scores)


def test_auto_budget_is_the_measured_optimum_unless_free_memory_holds_less(
    tiny_models, monkeypatch
):
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        tiny_models["llama-rm"], attn_implementation="eager"
    )
    cuda = torch.device("cuda")
    per_token = budget.bytes_per_token(model, logits=False, width=512)
    assert per_token == 4 * (8 * 32 + 3 * 64) + 4 * 4 * 512  # float32, hidden 32, 4 heads
    assert budget.bytes_per_token(model, logits=True, width=512) == per_token + 4 * 400
    assert (
        budget.auto_token_budget(
            model, torch.device("cpu"), max_length=512, logits=False, pad_multiple=64
        )
        is None
    )
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (80 * 2**30, 80 * 2**30))
    assert (
        budget.auto_token_budget(model, cuda, max_length=512, logits=False, pad_multiple=64)
        == budget.PREFERRED_GPU_TOKENS
    )
    free = 20_000 * per_token  # holds 10,000 tokens at MEMORY_SHARE 0.5
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (free, 80 * 2**30))
    assert (
        budget.auto_token_budget(model, cuda, max_length=512, logits=False, pad_multiple=64)
        == 10_000 // 64 * 64
    )
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (per_token, 80 * 2**30))
    assert (
        budget.auto_token_budget(model, cuda, max_length=500, logits=False, pad_multiple=64) == 512
    )  # never below one longest input


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_batch_dependence_after_a_run_is_measured_on_a_sample(dtype, tiny_models, pairs):
    """The deviation measured after a run without the scoring checks equals one recomputed
    here from one-input calls; in bf16 it is not zero, so the check can see batching move a
    score."""
    options = {"model": tiny_models["llama-rm"], "max_length": 96, "dtype": dtype}
    rm = build(HFClassifier, batch_size=16, batch_dependence_sample=10, **options)
    batched = rm.score(pairs)
    single = build(HFClassifier, batch_size=1, **options)
    alone = [single.score([pair])[0] for pair in pairs[:10]]
    figures = rm.batch_dependence().figures
    assert figures["items compared"] == 10
    expected = max(abs(a - b) for a, b in zip(alone, batched[:10], strict=True))
    assert figures["largest difference"] == pytest.approx(expected, abs=1e-12)
    assert (expected < 1e-5) if dtype == "float32" else (expected > 0)
    report = rm.report()
    assert {"dtype", "attention", "batching", "batch shapes", "padding-free"} <= set(report)
    assert not any(k.startswith("batch dependence") for k in report)  # the run adds it
    quiet = build(HFClassifier, batch_dependence_sample=0, **options)
    quiet.score(pairs[:2])
    assert quiet.batch_dependence() is None
