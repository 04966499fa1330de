"""The scoring checks of the Hugging Face reward models (docs/real-models.md, "Scoring
checks"): the sample scored the ways the checks compare — in the run's batches (scores the run
keeps), alone where its batch padded it, a few short items alone again, some in another
dtype — and its inputs rendered, handed to :mod:`rmaudit.backends.hf.scoring_checks` to judge; and
the batch invariance check alone, on the run's first scores, for a run that skipped them."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rmaudit.backends.conversation import conversation_messages
from rmaudit.backends.hf.batching import round_up
from rmaudit.components import Prompt, Response
from rmaudit.components.scoring_checks import ScoringCheck, ScoringChecks

if TYPE_CHECKING:
    from rmaudit.backends.hf.scoring_checks import RenderedInput

#: a loaded Hugging Face RM (common.HFRewardModel, which imports this module)
HFRewardModel = Any

Pair = tuple[Prompt, Response]
#: Items scored twice alone for determinism: a nondeterministic model or kernel moves every
#: score, so a few items show it, and the shortest cost least.
DETERMINISM_ITEMS = 4
#: Items (at least; half the sample where that is more) scored in float32 for the numerics of
#: a half-precision run: C(16, 2) = 120 pairs at the least, C(32, 2) = 496 on a sample of 64.
#: A float32 run always passes numerics (bfloat16's figures are for information), so it
#: scores only the determinism items in bfloat16 (slow on most CPUs).
NUMERICS_ITEMS = 16
#: Padded tokens a batch of the checks computes, at most, per token of its rows: the run's
#: length-sorted batches pad little, a sample's spread of lengths would pad far more.
PADDED_PER_TOKEN = 1.5


@dataclass(frozen=True)
class Passes:
    """Which of the sample's items (by index) each pass scores: ``batches`` every item, as
    the run batches them (the scores the run keeps); ``padded`` the rows that read padding
    there, scored alone for batch invariance; ``repeated`` scored alone twice
    (determinism); ``compared`` scored alone in the other dtype (numerics)."""

    batches: list[list[int]]
    padded: list[int]
    repeated: list[int]
    compared: list[int]

    @property
    def alone(self) -> list[int]:
        """Every item scored alone in the run's dtype (once: determinism repeats some)."""
        return sorted({*self.padded, *self.repeated, *self.compared})


def plan(
    sizes: Sequence[int], *, half: bool, pad_multiple: int = 1, packed: bool = False
) -> Passes:
    """The passes over a sample of items of ``sizes`` tokens (``half``: a half-precision
    run; ``pad_multiple``, ``packed``: the run's batching).  The longest item is a batch of
    its own: the run batches it with items of its own length, and it would pad any of the
    sample's.  A row as long as its batch's width (its longest row's, rounded up to
    ``pad_multiple``) reads no padding, so what batch invariance catches (a pooling that
    reads a pad token, a mask ignored, padding on the wrong side) cannot show on it: only
    the rows that read padding are scored alone (every row, packed: a pack moves them all).
    The longest item is left out of every extra pass (it costs the most alone);
    determinism takes the shortest items, numerics items spread evenly over the others'
    lengths (as long as the sample's on average)."""
    by_length = sorted(range(len(sizes)), key=lambda i: (sizes[i], i))
    rest = by_length[:-1] if len(by_length) > 2 else by_length
    batches = [by_length[-1:], *_neighbour_batches(by_length[:-1], sizes)] if sizes else []
    width = {
        i: round_up(max(sizes[j] for j in batch), pad_multiple) for batch in batches for i in batch
    }
    padded = sorted(i for i in rest if packed or sizes[i] < width[i]) or sorted(rest)
    repeated = sorted(rest[:DETERMINISM_ITEMS])
    if not half:
        return Passes(batches, padded, repeated, repeated)
    count = min(max(NUMERICS_ITEMS, len(sizes) // 2), len(rest))
    picks = np.linspace(0, len(rest) - 1, count).round().astype(int)
    return Passes(batches, padded, repeated, sorted(rest[int(j)] for j in picks))


def _neighbour_batches(chosen: Sequence[int], sizes: Sequence[int]) -> list[list[int]]:
    """``chosen`` cut, longest first, into runs of neighbouring lengths each padding at most
    PADDED_PER_TOKEN times its tokens (the run's batch size still cuts each run)."""
    batches: list[list[int]] = []
    for i in sorted(chosen, key=lambda i: (-sizes[i], i)):
        current = batches[-1] if batches else []
        grown = [*current, i]
        if current and len(grown) * sizes[current[0]] <= PADDED_PER_TOKEN * sum(
            sizes[j] for j in grown
        ):
            current.append(i)
        else:
            batches.append([i])
    return batches


def _scores_alone(rm: HFRewardModel, sample: Sequence[Pair], chosen: list[int]) -> np.ndarray:
    return np.array(rm._scores([sample[i] for i in chosen], alone=True)[0])


def _run_dtype(rm: HFRewardModel) -> str:
    return str(next(rm.scorers[0].model.parameters()).dtype).removeprefix("torch.")


def batch_invariance_of(
    rm: HFRewardModel, pairs: Sequence[Pair], batched: Sequence[float]
) -> ScoringCheck:
    """The batch invariance check of ``pairs`` whose scores in the run's batches were
    ``batched``: each scored alone and judged as :func:`run_checks` judges its sample (a
    run whose checks were skipped measures its batch dependence so, after it)."""
    from rmaudit.backends.hf import scoring_checks

    alone = _scores_alone(rm, pairs, list(range(len(pairs))))
    return scoring_checks.batch_invariance(np.asarray(batched, dtype=float), alone, _run_dtype(rm))


def run_checks(
    rm: HFRewardModel, sample: Sequence[Pair], *, position_limit: int | None
) -> ScoringChecks:
    """Every check of ``rm`` (loaded) on ``sample``; the rendered input shown is the shortest
    item's; ``position_limit``: the longest input the model reads (None: unknown).

    The sample's scores in the run's batches are the run's own (``ScoringChecks.scores``: the
    run keeps them, so that pass costs only its batches' extra padding); the checks add the
    passes :func:`plan` lays out: the rows their batch padded alone, the shortest items alone
    again, and some items in the other dtype."""
    from rmaudit.backends.hf import scoring_checks

    started = time.perf_counter()
    rendered = rendered_inputs(rm, sample)
    model = rm.scorers[0].model
    run_dtype = _run_dtype(rm)
    other_dtype = "bfloat16" if run_dtype == "float32" else "float32"
    limits = rm.scorers[0].engine.limits
    passes = plan(
        [len(item.ids) for item in rendered],
        half=run_dtype != "float32",
        pad_multiple=limits.pad_multiple,
        packed=limits.packed,
    )
    batched = np.empty(len(sample))
    for batch in passes.batches:
        batched[batch] = rm.score_counted([sample[i] for i in batch])
    alone = dict(zip(passes.alone, _scores_alone(rm, sample, passes.alone), strict=True))
    again = _scores_alone(rm, sample, passes.repeated)
    with _in_dtype(rm, other_dtype):
        other = _scores_alone(rm, sample, passes.compared)
    tokenizer = rm.tokenizer
    closing = set(tokenizer.all_special_ids) - {
        tokenizer.pad_token_id,
        tokenizer.bos_token_id,
        tokenizer.unk_token_id,
    }
    checks = (
        scoring_checks.batch_invariance(
            batched[passes.padded], np.array([alone[i] for i in passes.padded]), run_dtype
        ),
        scoring_checks.template(
            rendered,
            source=rm.input_format,
            bos_id=tokenizer.bos_token_id,
            closing_ids=closing,
        ),
        scoring_checks.truncation(
            rendered,
            max_length=rm.max_length,
            side=rm.options.truncation_side,
            position_limit=position_limit,
        ),
        scoring_checks.numerics(
            np.array([alone[i] for i in passes.compared]),
            other,
            run_dtype=run_dtype,
            other_dtype=other_dtype,
            attention=getattr(model.config, "_attn_implementation", None) or "default",
        ),
        scoring_checks.determinism(np.array([alone[i] for i in passes.repeated]), again),
    )
    shortest = min(rendered, key=lambda item: len(item.full))
    shown = tokenizer.decode(shortest.ids, skip_special_tokens=False)
    return ScoringChecks(
        "",
        len(sample),
        checks,
        rendered_input=shown,
        seconds=time.perf_counter() - started,
        scores=tuple(float(score) for score in batched),
    )


@contextmanager
def _in_dtype(rm: HFRewardModel, dtype: str) -> Iterator[None]:
    """``rm`` scoring through copies of its models in ``dtype`` (its own are not touched)."""
    from rmaudit.backends.hf.runtime import DTYPES

    saved = rm.scorers
    rm.scorers = [scorer.in_dtype(DTYPES[dtype]) for scorer in saved]
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
    from rmaudit.backends.hf.scoring_checks import RenderedInput

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
    from rmaudit.backends.hf.runtime import render_chat
    from rmaudit.backends.hf.scoring_checks import RenderedInput

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
