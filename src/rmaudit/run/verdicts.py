"""Stage "verdicts: <judge>": a pairwise judge's verdict on every pair the run audits (and on
the shifted copies of a shift sweep), each pair shown in both orders (chosen first, then
rejected first), keyed by (judge, showing): a showing judged once is never judged again, in
this run or another (docs/judges.md).

This is the pair-level seam beside the response-level "scores" stage: an RM whose
:meth:`~rmaudit.components.RewardModel.judges_pairs` is true gets :class:`PairShown` records
through ``judge_pairs`` instead of responses through ``score``, and the pair metrics get its
verdicts (:func:`judged_pairs`) and logits made from them (:func:`judge_logits`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from rmaudit.components import (
    VERDICTS,
    JudgedPairs,
    PairInputs,
    PairShown,
    PairVerdict,
    RewardModel,
    shown_key,
)
from rmaudit.errors import BadInput
from rmaudit.recipe import ComponentSpec
from rmaudit.store.pair_records import PairIds

from .batches import BatchCall, map_calls
from .context import RunContext, StageCount, Work
from .pairs import PairSet
from .shift import Sweep

#: a probability this close to 0 or 1 is read as that much (a finite logit for the pair metrics)
_CLIP = 1e-6


def pair_ids(pair_set: PairSet, shifted: Sweep | None) -> list[PairIds]:
    """Every pair the run audits, then every shifted copy, without repeats."""
    found = _ids(pair_set)
    for by_level in (shifted or {}).values():
        for level_pairs in by_level.values():
            found += [PairIds(s.prompt_id, s.chosen_id, s.rejected_id) for s in level_pairs]
    return list(dict.fromkeys(found))


def _ids(pair_set: PairSet) -> list[PairIds]:
    return [PairIds(p.prompt.id, p.chosen.id, p.rejected.id) for p in pair_set.pairs]


def check_recipe(ctx: RunContext, spec: ComponentSpec) -> None:
    """A pairwise judge needs pairs to judge (it scores no response of a benchmark), so it
    cannot be the cheap judge either."""
    if ctx.recipe.cheap_reward_model == spec.label:
        raise BadInput(
            "a pairwise judge scores no response, so it cannot predict the oracle's labels: "
            'use the judge with mode = "rating" as the cheap judge',
            file=ctx.recipe.path,
            field="cheap_oracle.reward_model",
            value=spec.label,
        )
    if ctx.recipe.pair_source is None:
        raise BadInput(
            "a pairwise judge judges preference pairs: give the recipe [pairs], or use mode = "
            '"rating" to score responses',
            file=ctx.recipe.path,
            field=spec.field,
        )


def stage(
    ctx: RunContext,
    spec: ComponentSpec,
    model: RewardModel,
    pairs: list[PairIds] | None,
    execute: bool,
    bound: int = 0,
    checked: PairSet | None = None,
) -> None:
    """``pairs`` None: a plan before the pairs exist; then at most ``bound`` showings.  When
    the stage has work, the judge checks every pair of ``checked`` in both orders first
    (``RewardModel.check_pairs``: a recorded judge's files read only then)."""
    name = f"verdicts: {spec.label}"
    with ctx.timed(name):
        found = () if pairs is None else tuple(pairs)
        keys = [key for both in showing_keys(found) for key in both]
        stored = ctx.judged(model.key, keys)
        pending = [i for i, key in enumerate(keys) if key not in stored]
        total = len(keys) if pairs is not None else bound
        count = StageCount(name, total, len(keys) - len(pending), at_most=pairs is None)
        ctx.counts.append(count)
        ctx.check_ready(spec, count)
        if checked is not None and pending:
            try:
                model.check_pairs(checked.showings)
            except BadInput as error:
                raise ctx.located(error, spec) from None
        if execute:
            _judge(ctx, spec, model, Work(count, _shown(ctx, found, pending)))


def showings_bound(ctx: RunContext, pair_bound: int | None) -> int:
    """At most how many showings a plan's pairs (at most ``pair_bound``) and their shifted
    copies make: two per pair."""
    if not pair_bound:
        return 0
    shift = ctx.recipe.shift if ctx.recipe.perturber is not None else None
    copies = 1 + (
        len([p for p in shift.levels if p > 0]) * len(shift.targets) if shift is not None else 0
    )
    return 2 * pair_bound * copies


def _shown(ctx: RunContext, pairs: Sequence[PairIds], pending: list[int]) -> list[PairShown]:
    """The pending showings as the judge sees them: showing 2i is pair i chosen first,
    2i + 1 rejected first."""
    shown = [(pairs[i // 2], i % 2 == 1) for i in pending]  # (the pair, rejected first)
    firsts = [
        (p.rejected_id, p.chosen_id) if swap else (p.chosen_id, p.rejected_id) for p, swap in shown
    ]
    responses = iter(ctx.load_responses([rid for ids in firsts for rid in ids]))
    return [PairShown(ctx.prompt(p.prompt_id), next(responses), next(responses)) for p, _ in shown]


@functools.lru_cache(maxsize=8)
def showing_keys(pairs: tuple[PairIds, ...]) -> tuple[tuple[str, str], ...]:
    """The keys of each pair shown chosen first, and rejected first: the same for every
    judge of a pair set."""
    return tuple(
        (
            shown_key(p.prompt_id, p.chosen_id, p.rejected_id),
            shown_key(p.prompt_id, p.rejected_id, p.chosen_id),
        )
        for p in pairs
    )


def _judge(ctx: RunContext, spec: ComponentSpec, model: RewardModel, todo: Work[PairShown]) -> None:
    ctx.add_components(model)
    store = ctx.store
    assert store is not None  # a run, not a plan

    def write(batch: Sequence[PairShown], verdicts: list[PairVerdict]) -> None:
        if len(verdicts) != len(batch):
            raise RuntimeError(
                f"judge {spec.label!r} returned {len(verdicts)} verdicts for {len(batch)} pairs"
            )
        for verdict in verdicts:
            if verdict.verdict not in VERDICTS or not _probability_ok(verdict):
                raise BadInput(
                    f"judge {spec.label!r} returned verdict {verdict.verdict!r} with "
                    f"P(first) {verdict.p_first!r}",
                    file=ctx.recipe.path,
                    field=spec.field,
                )
        store.verdicts.add(model.key, [shown.ids for shown in batch], verdicts)

    map_calls(ctx, todo, BatchCall(spec, model, "judge_pairs", list), write)


def _probability_ok(verdict: PairVerdict) -> bool:
    if verdict.verdict == "unparsed":
        return math.isnan(verdict.p_first)
    return 0.0 <= verdict.p_first <= 1.0


def judged_pairs(stored: dict[str, PairVerdict], pairs: Sequence[PairIds]) -> JudgedPairs:
    """The stored verdicts of ``pairs``, in both orders, aligned with them."""
    shown = showing_keys(tuple(pairs))
    firsts = [stored[first] for first, _ in shown]
    seconds = [stored[second] for _, second in shown]
    return JudgedPairs(
        tuple(v.verdict for v in firsts),
        tuple(v.verdict for v in seconds),
        np.array([v.p_first for v in firsts], float),
        np.array([v.p_first for v in seconds], float),
        from_logprobs=bool(shown) and all(v.from_logprobs for v in [*firsts, *seconds]),
        replies=tuple(zip([v.reply for v in firsts], [v.reply for v in seconds], strict=True)),
    )


def judge_logits(judged: JudgedPairs) -> tuple[np.ndarray, np.ndarray]:
    """(chosen, rejected) "logits" that the response-level pair metrics read: the chosen one
    is logit P(chosen preferred) averaged over both orders, the rejected one 0, so their
    difference is the judge's log-odds (accuracy, ECE and the sweep's metrics then read the
    judge as they read an RM).  A pair unparsed in both orders has P ½, logit 0: a tie —
    counted apart by the judge metrics' parse-failure rate."""
    p = np.clip(np.nan_to_num(judged.p_chosen, nan=0.5), _CLIP, 1.0 - _CLIP)
    return np.log(p / (1.0 - p)), np.zeros_like(p)


def pair_inputs(
    ctx: RunContext, label: str, model: RewardModel, pair_set: PairSet, shifted: Sweep | None
) -> PairInputs:
    """A pairwise judge's :class:`PairInputs`: its verdicts in both orders, and the logits of
    :func:`judge_logits` for the pairs and every shifted copy."""
    assert ctx.store is not None  # metrics run on a store
    stored = ctx.store.verdicts.of(model.key)
    judged = judged_pairs(stored, _ids(pair_set))
    unparsed = int(np.isnan(judged.p_chosen).sum())
    if unparsed:  # said, never silently scored
        ctx.notes.append(
            f"{label}: {unparsed} of {len(pair_set.pairs)} pairs have no verdict in either "
            "order (judge-audit counts them as parse failures; the pair metrics as ties)"
        )
    chosen, rejected = judge_logits(judged)
    sweep = {
        target: {
            0.0: (chosen, rejected),
            **{
                level: judge_logits(
                    judged_pairs(
                        stored,
                        [PairIds(s.prompt_id, s.chosen_id, s.rejected_id) for s in level_pairs],
                    )
                )
                for level, level_pairs in by_level.items()
            },
        }
        for target, by_level in (shifted or {}).items()
    }
    return pair_set.inputs(chosen, rejected, sweep, verdicts=judged)
