"""Batched sampling whose every row draws from its own seeded generator.

``transformers``' sampling draws from the global torch RNG, so a row's text would depend on
which rows share its batch.  Here a logits processor does the sampling — temperature, top-p,
then one draw from the row's own ``torch.Generator`` — and hands greedy decoding a logit
vector with a single finite entry.  A row's text is then a function of its prompt and its
generator's seed alone (up to float rounding across batch shapes, which could only flip a
draw that lands within rounding of a probability boundary).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import torch
import transformers


def item_seed(seed: int, prompt_id: str, sample_index: int, turn: int = 0) -> int:
    """A 63-bit seed for one (seed, prompt, sample index, turn of a multi-turn prompt)."""
    digest = hashlib.sha256(f"{seed}:{prompt_id}:{sample_index}:{turn}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


class PerRowSampler(transformers.LogitsProcessor):
    """Samples each row's next token with that row's generator; greedy decoding then picks it."""

    def __init__(self, seeds: Sequence[int], *, temperature: float, top_p: float) -> None:
        self.generators = [torch.Generator().manual_seed(s) for s in seeds]
        self.temperature = temperature
        self.top_p = top_p

    def draw(self, logits: torch.Tensor, generator: torch.Generator) -> int:
        if self.temperature == 0.0:
            return int(logits.argmax())
        probs = torch.softmax(logits.double() / self.temperature, dim=-1)
        if self.top_p < 1.0:
            sorted_probs, order = probs.sort(descending=True, stable=True)
            # keep the smallest prefix whose mass reaches top_p (the first token always)
            outside = (sorted_probs.cumsum(-1) - sorted_probs) >= self.top_p
            probs = probs.clone()
            probs[order[outside]] = 0.0
        return int(torch.multinomial(probs, 1, generator=generator))

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.Tensor:
        rows = scores.detach().float().cpu()
        chosen = [self.draw(rows[r], self.generators[r]) for r in range(rows.shape[0])]
        forced = torch.full_like(scores, float("-inf"))
        forced[torch.arange(len(chosen)), torch.tensor(chosen, device=scores.device)] = 0.0
        return forced


def _left_padded(
    prompts: Sequence[Sequence[int]], pad_id: int
) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(p) for p in prompts)
    input_ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, prompt in enumerate(prompts):
        input_ids[i, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
        attention_mask[i, width - len(prompt) :] = 1
    return input_ids, attention_mask


def _shared_prefill(model, prompts: Sequence[Sequence[int]], pad_id: int, device):
    """The key-value cache of every prompt but its last token, computed once per distinct
    prompt and copied to each row that asks for it, or None when every prompt is distinct.

    The prefill uses the positions ``generate`` derives from a left-padded mask (cumulative
    sum of the mask, minus one), so the rows continue exactly as an unshared batch would."""
    distinct = list(dict.fromkeys(tuple(p) for p in prompts))
    if len(distinct) == len(prompts) or max(len(p) for p in distinct) < 2:
        return None
    input_ids, attention_mask = _left_padded(distinct, pad_id)
    positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    with torch.inference_mode():
        cache = model(
            input_ids=input_ids[:, :-1].to(device),
            attention_mask=attention_mask[:, :-1].to(device),
            position_ids=positions[:, :-1].to(device),
            use_cache=True,
        ).past_key_values
    which = {prompt: i for i, prompt in enumerate(distinct)}
    cache.batch_select_indices(torch.tensor([which[tuple(p)] for p in prompts], device=device))
    return cache


def generate(
    model,
    prompts: Sequence[Sequence[int]],
    seeds: Sequence[int],
    *,
    pad_id: int,
    eos_ids: Sequence[int],
    temperature: float,
    top_p: float,
    max_new_tokens: int,
    share_prefill: bool = False,
) -> list[list[int]]:
    """New token ids for each prompt (left-padded batch; generate derives the positions from
    the attention mask), cut after the first EOS, which is kept.  ``share_prefill``: rows
    with the same prompt (a prompt's N samples) run its prefill once (:func:`_shared_prefill`)."""
    device = next(model.parameters()).device
    input_ids, attention_mask = _left_padded(prompts, pad_id)
    width = input_ids.shape[1]
    cache = _shared_prefill(model, prompts, pad_id, device) if share_prefill else None
    # a fresh config: the checkpoint's own defaults (sampling flags, repetition penalties)
    # must not reach the distribution the recipe asked for
    config = transformers.GenerationConfig(
        max_new_tokens=max_new_tokens,
        do_sample=False,
        eos_token_id=list(eos_ids),
        pad_token_id=pad_id,
    )
    sampler = PerRowSampler(seeds, temperature=temperature, top_p=top_p)
    with torch.inference_mode():
        sequences = model.generate(
            input_ids=input_ids.to(device),
            attention_mask=attention_mask.to(device),
            past_key_values=cache,
            generation_config=config,
            logits_processor=transformers.LogitsProcessorList([sampler]),
        )
    new_tokens = []
    for row in sequences[:, width:].tolist():
        end = next((j + 1 for j, token in enumerate(row) if token in eos_ids), len(row))
        new_tokens.append(row[:end])
    return new_tokens
