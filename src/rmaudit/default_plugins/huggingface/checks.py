"""The scoring checks of the Hugging Face reward models (docs/real-models.md, "Scoring
checks"): the sample scored the ways the checks compare — in the run's batches twice, each
item alone, in another dtype — and its inputs rendered, handed to
:mod:`rmaudit.backends.hf.preflight` to judge."""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from rmaudit.backends.conversation import conversation_messages
from rmaudit.components import Prompt, Response
from rmaudit.components.scoring_checks import ScoringChecks

if TYPE_CHECKING:
    from rmaudit.backends.hf.preflight import RenderedInput

#: a loaded Hugging Face RM (common.HFRewardModel, which imports this module)
HFRewardModel = Any

Pair = tuple[Prompt, Response]
#: Items of the sample scored twice for determinism and in the other dtype for numerics (its
#: C(32, 2) = 496 pairs): the checks then cost about 3.5 passes over a sample of 64, not 5.
REPEATED_ITEMS = 32


def _repeated(sample: Sequence[Pair]) -> list[Pair]:
    """The sample's first REPEATED_ITEMS but its longest (in characters), which batch
    invariance and truncation need and which would pad every batch it sits in."""
    if len(sample) <= REPEATED_ITEMS:
        return list(sample)
    longest = max(range(len(sample)), key=lambda i: len(sample[i][0].text) + len(sample[i][1].text))
    return [pair for i, pair in enumerate(sample) if i != longest][:REPEATED_ITEMS]


def run_checks(
    rm: HFRewardModel, sample: Sequence[Pair], *, position_limit: int | None
) -> ScoringChecks:
    """Every check of ``rm`` (loaded) on ``sample``; the rendered input shown is the shortest
    item's; ``position_limit``: the longest input the model reads (None: unknown)."""
    from rmaudit.backends.hf import preflight

    started = time.perf_counter()
    batched = np.array(rm._scores(sample, alone=False)[0])
    alone = np.array(rm._scores(sample, alone=True)[0])
    subset = _repeated(sample)
    first = np.array(rm._scores(subset, alone=False)[0])
    again = np.array(rm._scores(subset, alone=False)[0])
    model = rm.scorers[0].model
    run_dtype = str(next(model.parameters()).dtype).removeprefix("torch.")
    other_dtype = "bfloat16" if run_dtype == "float32" else "float32"
    with _in_dtype(rm, other_dtype):
        other = np.array(rm._scores(subset, alone=False)[0])
    rendered = rendered_inputs(rm, sample)
    tokenizer = rm.tokenizer
    closing = set(tokenizer.all_special_ids) - {
        tokenizer.pad_token_id,
        tokenizer.bos_token_id,
        tokenizer.unk_token_id,
    }
    checks = (
        preflight.batch_invariance(batched, alone, run_dtype),
        preflight.template(
            rendered,
            source=rm.input_format,
            bos_id=tokenizer.bos_token_id,
            closing_ids=closing,
        ),
        preflight.truncation(
            rendered,
            max_length=rm.max_length,
            side=rm.options.truncation_side,
            position_limit=position_limit,
        ),
        preflight.numerics(
            first,
            other,
            run_dtype=run_dtype,
            other_dtype=other_dtype,
            attention=getattr(model.config, "_attn_implementation", None) or "default",
        ),
        preflight.determinism(first, again),
    )
    shortest = min(rendered, key=lambda item: len(item.full))
    shown = tokenizer.decode(shortest.ids, skip_special_tokens=False)
    return ScoringChecks(
        "", len(sample), checks, rendered_input=shown, seconds=time.perf_counter() - started
    )


@contextmanager
def _in_dtype(rm: HFRewardModel, dtype: str) -> Iterator[None]:
    """``rm`` scoring through copies of its models in ``dtype`` (a float32 run's models are
    not touched: casting them down and back would round their weights)."""
    from rmaudit.backends.hf.runtime import DTYPES
    from rmaudit.backends.hf.scorer import Scorer

    options = rm.options.model_copy(update={"compile": False})
    saved = rm.scorers
    rm.scorers = [
        Scorer(
            copy.deepcopy(scorer.model).to(DTYPES[dtype]),
            options,
            kind=scorer.kind,
            max_length=rm.max_length,
            filler_id=scorer.filler_id,
        )
        for scorer in saved
    ]
    try:
        yield
    finally:
        rm.scorers = saved


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def rendered_inputs(rm: HFRewardModel, sample: Sequence[Pair]) -> list[RenderedInput]:
    """Each item's tokens as scored and before truncation, and where its response lies."""
    from rmaudit.backends.hf.preflight import RenderedInput

    scored = rm.scored_ids(sample)
    if rm.use_chat:
        return [_rendered_chat(rm, pair, ids) for pair, ids in zip(sample, scored, strict=True)]
    tokenizer = rm.tokenizer
    specials = set(tokenizer.all_special_ids)
    out = []
    for (prompt, response), ids in zip(sample, scored, strict=True):
        full = tokenizer(prompt.text, response.text)["input_ids"]
        start = _common_prefix(full, tokenizer(prompt.text, "")["input_ids"])
        end = len(full)
        while end > start and full[end - 1] in specials:
            end -= 1
        out.append(RenderedInput(None, list(ids), list(full), start, end))
    return out


def _rendered_chat(rm: HFRewardModel, pair: Pair, ids: list[int]) -> RenderedInput:
    """The response starts where the conversation's tokens stop matching those of the prompt
    rendered with the generation prompt, and ends where the template's closing text starts."""
    from rmaudit.backends.hf.preflight import RenderedInput
    from rmaudit.backends.hf.runtime import render_chat

    def tokens(text: str) -> list[int]:
        return list(rm.tokenizer(text, add_special_tokens=False)["input_ids"])

    messages = conversation_messages(*pair)
    text = render_chat(rm.tokenizer, rm.template, messages, add_generation_prompt=False)
    prompt = render_chat(rm.tokenizer, rm.template, messages[:-1], add_generation_prompt=True)
    full = tokens(text)
    start = _common_prefix(full, tokens(prompt))
    response = pair[1].text
    at = text.rfind(response) if response else -1
    closing = tokens(text[at + len(response) :]) if at >= 0 else []
    end = max(start, len(full) - len(closing))
    return RenderedInput(text, list(ids), full, start, end)
