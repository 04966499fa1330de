"""Stage "shifted pairs": the shift sweep (RMs Under Distribution Shift, arXiv 2311.14743, Sec. 4.2)
— every pair with its prompt, its responses or both perturbed at each level p > 0 — stored with the
perturbed texts.

A shifted pair's ids depend on the perturber (whose key includes p), the sweep seed and the
original ids — not on the perturbed texts — so what is stored is known without perturbing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rmaudit.components import Prompt, Response, ShiftPerturber, SourcedPair
from rmaudit.components.keys import pair_id, shifted_prompt_id, shifted_response_id
from rmaudit.components.vocabulary import shifts_prompt, shifts_responses
from rmaudit.recipe.model import ShiftSection
from rmaudit.store.pair_records import StoredPair

from .batches import map_here
from .context import (
    Keys,
    RunContext,
    StageCount,
    Work,
    prompt_row,
    required,
    slot_class,
    text_response_rows,
)
from .pairs import PairSet, PairStage

STAGE = "shifted pairs"
#: target → level p > 0 → the shifted pairs, aligned with the pair set
Sweep = dict[str, dict[float, list["ShiftedPair"]]]


@dataclass(frozen=True)
class ShiftedPair:
    """A pair of the sweep: ``original`` with its prompt, its responses or both perturbed."""

    id: str
    original: SourcedPair
    original_id: str
    target: str
    level: float
    perturber: ShiftPerturber
    perturber_key: str  # computed once per level: a perturber's identity reads package metadata
    prompt_id: str
    chosen_id: str
    rejected_id: str


def sweep(ctx: RunContext, pair_set: PairSet) -> Sweep:
    """Level 0 is the unshifted pairs themselves (the in-distribution reference): not here.
    Made once per pair set: a run reuses its plan's."""
    if ctx.swept is None or ctx.swept[0] != pair_set.key:
        ctx.swept = pair_set.key, _sweep(ctx, pair_set)
    made: Sweep = ctx.swept[1]
    return made


def _sweep(ctx: RunContext, pair_set: PairSet) -> Sweep:
    shift, spec = _shift(ctx), required(ctx.recipe.perturber, "[pairs.shift.perturber]")
    found: Sweep = {target: {} for target in shift.targets}
    for level in _levels(ctx):
        perturber = slot_class(spec, ShiftPerturber)(spec.options.model_copy(update={"p": level}))
        perturber_key = perturber.key
        for target in shift.targets:
            found[target][level] = [
                _shifted_pair(ctx, pair, pid, target, level, perturber, perturber_key)
                for pair, pid in zip(pair_set.pairs, pair_set.ids, strict=True)
            ]
    return found


def _shift(ctx: RunContext) -> ShiftSection:
    return required(ctx.recipe.shift, "[pairs.shift]")


def _levels(ctx: RunContext) -> list[float]:
    return [float(p) for p in _shift(ctx).levels if p > 0]


def _shifted_pair(
    ctx: RunContext,
    pair: SourcedPair,
    original_id: str,
    target: str,
    level: float,
    perturber: ShiftPerturber,
    perturber_key: str,
) -> ShiftedPair:
    seed = _shift(ctx).seed
    shift_prompt, shift_responses = shifts_prompt(target), shifts_responses(target)
    prompt = (
        shifted_prompt_id(perturber_key, seed, pair.prompt.id) if shift_prompt else pair.prompt.id
    )
    # A prompt-only shift keeps the response texts but needs new response items: an RM
    # score belongs to a response *and* the prompt it answers.
    chosen, rejected = (
        shifted_response_id(perturber_key if shift_responses else None, seed, r.id, prompt)
        for r in (pair.chosen, pair.rejected)
    )
    return ShiftedPair(
        pair_id(prompt, chosen, rejected, pair.subset),
        pair,
        original_id,
        target,
        level,
        perturber,
        perturber_key,
        prompt,
        chosen,
        rejected,
    )


def stage(
    ctx: RunContext, pairs: PairStage, benchmark_responses: int, execute: bool
) -> tuple[Sweep | None, Keys]:
    """The sweep and the ids of its responses (to be scored).  In a plan whose pairs are only
    bounded, both are counted: one new response per original response, level and target."""
    with ctx.timed(STAGE):
        if pairs.pair_set is None:
            if pairs.bound is None:
                ctx.counts.append(
                    StageCount(f"{STAGE} (counted once the benchmark is built)", 0, 0)
                )
                return None, Keys()
            copies = len(_levels(ctx)) * len(_shift(ctx).targets)
            ctx.counts.append(StageCount(STAGE, pairs.bound * copies, 0, at_most=True))
            responses = min(benchmark_responses, 2 * pairs.bound)
            return None, Keys(unlisted=responses * copies, at_most=True)
        found = sweep(ctx, pairs.pair_set)
        shifted = [s for by_level in found.values() for level in by_level.values() for s in level]
        stored = ctx.stored_pairs([s.id for s in shifted])
        pending = [s for s in shifted if s.id not in stored]
        work = Work(StageCount(STAGE, len(shifted), len(shifted) - len(pending)), pending)
        ctx.counts.append(work.count)
        if execute:
            _perturb(ctx, work)
        return found, Keys(
            list(dict.fromkeys(i for s in shifted for i in (s.chosen_id, s.rejected_id)))
        )


def _perturb(ctx: RunContext, work: Work[ShiftedPair]) -> None:
    """Write the shifted copies not yet stored, in batches; each perturbed text is made once."""
    seed = _shift(ctx).seed
    texts: dict[tuple[str, str], str] = {}  # (perturber key, original id) → perturbed text

    def perturbed(s: ShiftedPair, item: Prompt | Response) -> str:
        key = (s.perturber_key, item.id)
        if key not in texts:
            texts[key] = s.perturber.perturb(item.text, seed=seed)
        return texts[key]

    def perturb_batch(batch: Sequence[ShiftedPair]) -> None:
        """One ``perturb_batch`` call per perturber (level): a model or an API batches."""
        todo: dict[str, tuple[ShiftPerturber, dict[str, str]]] = {}
        for s in batch:
            items = ([s.original.prompt] if s.target != "response" else []) + (
                [s.original.chosen, s.original.rejected] if s.target != "prompt" else []
            )
            for item in items:
                if (s.perturber_key, item.id) not in texts:
                    todo.setdefault(s.perturber_key, (s.perturber, {}))[1][item.id] = item.text
        for key, (perturber, by_id) in todo.items():
            done = perturber.perturb_batch(list(by_id.values()), seed=seed)
            texts.update(((key, item_id), text) for item_id, text in zip(by_id, done, strict=True))

    def write(batch: Sequence[ShiftedPair]) -> None:
        perturb_batch(batch)
        prompts: dict[str, Prompt] = {}
        responses: dict[str, Response] = {}
        rows = []
        for s in batch:
            original = s.original
            if s.prompt_id != original.prompt.id:
                prompts[s.prompt_id] = Prompt(
                    s.prompt_id,
                    perturbed(s, original.prompt),
                    {**original.prompt.meta, "shifted_from": original.prompt.id},
                )
            for new_id, r in ((s.chosen_id, original.chosen), (s.rejected_id, original.rejected)):
                text = perturbed(s, r) if s.target != "prompt" else r.text
                responses[new_id] = Response(
                    new_id, s.prompt_id, None, text, {"shifted_from": r.id}
                )
            rows.append(
                StoredPair(
                    s.id,
                    s.prompt_id,
                    s.chosen_id,
                    s.rejected_id,
                    original.subset,
                    original.stored_meta,
                    s.target,
                    s.level,
                    s.perturber_key,
                    s.original_id,
                )
            )
        items = ctx.db.items
        items.add_prompts(prompt_row(p) for p in prompts.values())
        items.add_responses(text_response_rows(list(responses.values())))
        items.add_pairs(rows)
        ctx.prompts.update(prompts)
        ctx.responses.update(responses)

    if work.pending:
        ctx.add_components(*{s.perturber_key: s.perturber for s in work.pending}.values())
    map_here(ctx, work, write)
