"""A Hugging Face RM's inputs rendered as the model reads them, for the scoring checks
(docs/real-models.md, "Scoring checks"): each item's tokens as scored and before truncation,
where its response lies, and the special tokens the tokenizer would add to the text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rmaudit.backends.conversation import conversation_messages
from rmaudit.backends.hf.input_checks import RenderedInput
from rmaudit.components import Prompt, Response

#: a loaded Hugging Face RM (reward_model._HFRewardModel)
HFRewardModel = Any
#: what a reward model scores: a prompt and one response to it
PromptResponse = tuple[Prompt, Response]


def closing_ids(tokenizer) -> set[int]:
    """Special tokens that close a turn: the EOS, also where it is the BOS or the pad token
    too (GPT-2's ``<|endoftext|>`` is all three), and every other special token but pad,
    BOS and unknown."""
    closing = set(tokenizer.all_special_ids) - {
        tokenizer.pad_token_id,
        tokenizer.bos_token_id,
        tokenizer.unk_token_id,
    }
    if tokenizer.eos_token_id is not None:
        closing.add(tokenizer.eos_token_id)
    return closing


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def rendered_inputs(rm: HFRewardModel, sample: Sequence[PromptResponse]) -> list[RenderedInput]:
    """Each item's tokens as scored and before truncation, and where its response lies."""
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


def _rendered_chat(rm: HFRewardModel, pair: PromptResponse, ids: list[int]) -> RenderedInput:
    """The response starts where the conversation's tokens stop matching those of the prompt
    rendered with the generation prompt, and ends where the template's closing text starts."""
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
    front, back = _added(list(rm.tokenizer(text)["input_ids"]), full)
    return RenderedInput(text, list(ids), full, start, end, front, back)


def _added(with_specials: list[int], plain: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The tokens a tokenizer adds before and after ``plain`` (a text's tokens without its
    special tokens) to give ``with_specials``; none where it does not wrap them so."""
    for front in range(len(with_specials) - len(plain) + 1):
        if with_specials[front : front + len(plain)] == plain:
            return tuple(with_specials[:front]), tuple(with_specials[front + len(plain) :])
    return (), ()
