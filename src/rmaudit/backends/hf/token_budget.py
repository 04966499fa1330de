"""The token budget of a batch on a GPU, sized from free memory and the model's shape.

Bigger is not faster: on an H100 with plain transformers forwards (bf16, SDPA), a budget of
32k tokens per batch beat 128k — a Llama-style 1B classifier reached 42 % of the GPU's
dense bf16 peak against 36 %, an 8B one 49 % against 35 % (rmaudit issue 16's
measurements) — so the budget is that measured optimum, lowered where the device's free
memory would not hold a batch's activations.  Out-of-memory errors still halve it and retry
(:mod:`rmaudit.backends.hf.engine`), so the estimate may err.
"""

from __future__ import annotations

import torch

from rmaudit.backends.hf.batching import round_up

#: Tokens per batch on a CUDA GPU unless memory says fewer (see the module doc).
PREFERRED_GPU_TOKENS = 32768
#: Share of the free device memory one batch's activations may take.
MEMORY_SHARE = 0.5


def _config_size(config, *names: str, default: int = 0) -> int:
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return default


def bytes_per_token(model, *, logits: bool, width: int) -> int:
    """Rough device bytes one token of a batch holds at the peak of a forward pass: a few
    hidden-state copies and the MLP's intermediate activations in the model's dtype, the
    attention probabilities where the attention is eager (one width-long row per head, in
    float32), and the vocabulary's logits where a causal LM's are taken (``logits``)."""
    config = model.config.get_text_config()
    element = next(model.parameters()).element_size()
    hidden = _config_size(config, "hidden_size", "n_embd", "d_model", default=1024)
    intermediate = _config_size(
        config, "intermediate_size", "n_inner", "ffn_dim", default=4 * hidden
    )
    heads = _config_size(config, "num_attention_heads", "n_head", default=hidden // 64 or 1)
    per_token = element * (8 * hidden + 3 * intermediate)
    if getattr(config, "_attn_implementation", "eager") == "eager":
        per_token += 4 * heads * width
    if logits:
        per_token += element * _config_size(config, "vocab_size", default=32000)
    return per_token


def auto_token_budget(
    model, device: torch.device, *, max_length: int | None, logits: bool, pad_multiple: int
) -> int | None:
    """Tokens per batch on a CUDA device (None elsewhere: CPU batching is by rows)."""
    if device.type != "cuda":
        return None
    width = max_length or 512
    free, _ = torch.cuda.mem_get_info(device)
    fits = int(free * MEMORY_SHARE) // bytes_per_token(model, logits=logits, width=width)
    budget = min(PREFERRED_GPU_TOKENS, fits)
    # at least one longest input, so no input is alone only for want of budget
    return max(round_up(width, pad_multiple), budget // pad_multiple * pad_multiple)
