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

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        rows = scores.detach().float().cpu()
        chosen = [self.draw(rows[r], self.generators[r]) for r in range(rows.shape[0])]
        forced = torch.full_like(scores, float("-inf"))
        forced[torch.arange(len(chosen)), torch.tensor(chosen, device=scores.device)] = 0.0
        return forced


def generate(model, prompts: Sequence[Sequence[int]], seeds: Sequence[int], *, pad_id: int,
             eos_ids: Sequence[int], temperature: float, top_p: float,
             max_new_tokens: int) -> list[list[int]]:
    """New token ids for each prompt (left-padded batch; generate derives the positions from
    the attention mask), cut after the first EOS, which is kept."""
    device = next(model.parameters()).device
    width = max(len(p) for p in prompts)
    input_ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, prompt in enumerate(prompts):
        input_ids[i, width - len(prompt):] = torch.tensor(prompt, dtype=torch.long)
        attention_mask[i, width - len(prompt):] = 1
    # a fresh config: the checkpoint's own defaults (sampling flags, repetition penalties)
    # must not reach the distribution the recipe asked for
    config = transformers.GenerationConfig(max_new_tokens=max_new_tokens, do_sample=False,
                                           eos_token_id=list(eos_ids), pad_token_id=pad_id)
    sampler = PerRowSampler(seeds, temperature=temperature, top_p=top_p)
    with torch.inference_mode():
        sequences = model.generate(input_ids=input_ids.to(device),
                                   attention_mask=attention_mask.to(device),
                                   generation_config=config,
                                   logits_processor=transformers.LogitsProcessorList([sampler]))
    new_tokens = []
    for row in sequences[:, width:].tolist():
        end = next((j + 1 for j, token in enumerate(row) if token in eos_ids), len(row))
        new_tokens.append(row[:end])
    return new_tokens
