"""Stage "scores: <RM>": one RM's score of every response the run audits (the benchmark's,
the pairs', the shifted ones), keyed by (response, RM); a response several pairs share is
scored once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rmaudit.components import RewardModel
from rmaudit.errors import BadInput
from rmaudit.recipe import ComponentSpec

from .batches import BatchCall, map_calls
from .context import Keys, RunContext, StageCount, Work
from .scoring_checks import Checked, Sampled, ScoresToCheck, keep, report


def target(
    ctx: RunContext, spec: ComponentSpec, model: RewardModel, response_ids: Keys, sampled: Keys
) -> ScoresToCheck:
    """The stage's items as its scoring checks see them: every one, those to score, and
    those its sample is drawn from (``sampled``)."""

    def read(ids: Sequence[str]) -> list[Sampled]:
        return [
            Sampled(response.id, len(prompt.text) + len(response.text), (prompt, response))
            for prompt, response in ctx.known_items(ids)
        ]

    def accept(ids: Sequence[str], scores: list[float]) -> list[float]:
        return _finite(ctx, spec, ids, scores)

    return ScoresToCheck(
        spec,
        model,
        response_ids.known,
        _pending(ctx, model, response_ids),
        sampled.known,
        read,
        accept,
        sampled.unlisted,
    )


def _pending(ctx: RunContext, model: RewardModel, response_ids: Keys) -> list[str]:
    """Those of the stage's known items not scored yet (by a run, or earlier in this one)."""
    known = response_ids.known
    stored = ctx.scored(model.key, known)
    earlier = ctx.prescored.get(model.key)
    if earlier is not None and earlier.known:  # a label design's guides scored some already
        stored |= set(earlier.known) & set(known)
    return [rid for rid in known if rid not in stored]


def stage(
    ctx: RunContext,
    spec: ComponentSpec,
    model: RewardModel,
    response_ids: Keys,
    execute: bool,
    checked: Checked | None = None,
) -> None:
    """``checked``: the model's scoring checks, made before any RM scored (the scores of
    their sample it keeps)."""
    name = f"scores: {spec.label}"
    with ctx.timed(name):
        known = response_ids.known
        earlier = ctx.prescored.get(model.key, Keys())
        pending = _pending(ctx, model, response_ids)
        unsure = bool(response_ids.unlisted and ctx.store and ctx.store.items.has_scores(model.key))
        work = Work(
            StageCount(
                name,
                response_ids.total,
                len(known) - len(pending) + min(earlier.unlisted, response_ids.unlisted),
                at_most=response_ids.at_most or unsure,
            ),
            pending,
        )
        ctx.counts.append(work.count)
        ctx.pending[name] = pending
        ctx.check_ready(spec, work.count)
        if ctx.strict:
            try:
                _check_items(ctx, model, pending, unlisted=bool(response_ids.unlisted))
            except BadInput as error:
                raise ctx.located(error, spec) from None
        if execute:

            def write(ids: Sequence[str], scores: list[float]) -> None:
                _write(ctx, spec, model, ids, scores)

            ctx.add_components(model)
            map_calls(
                ctx,
                keep(checked, work, write),
                BatchCall(spec, model, "score", ctx.prompted_responses),
                write,
            )
            report(ctx, spec, model, checked)


def _check_items(ctx: RunContext, model: RewardModel, pending: list[str], unlisted: bool) -> None:
    """In the plan: a model that checks items (a scores file) is shown those the plan knows,
    read for it only then, and by id every one it will score when some are not made yet
    (``unlisted``: the responses a policy will generate for the plan's draw)."""
    items = ctx.known_items(pending) if pending and _overrides(model, "check_items") else []
    if _overrides(model, "check_response_ids"):
        planned = ctx.planned_responses() if unlisted else []
        scored = ctx.scored(model.key, planned)
        ids = pending + [rid for rid in planned if rid not in scored]
        if len(ids) > len(items):
            model.check_response_ids(ids)
    if items:
        model.check_items(items)


def _overrides(model: RewardModel, method: str) -> bool:
    return getattr(type(model), method) is not getattr(RewardModel, method)


def _write(
    ctx: RunContext,
    spec: ComponentSpec,
    model: RewardModel,
    ids: Sequence[str],
    scores: list[float],
) -> None:
    ctx.db.items.add_scores(model.key, dict(zip(ids, _finite(ctx, spec, ids, scores), strict=True)))


def _finite(
    ctx: RunContext, spec: ComponentSpec, ids: Sequence[str], scores: list[float]
) -> list[float]:
    """The scores as floats, or BadInput naming the RM, the response and the value."""
    values = np.asarray(scores, dtype=float)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise BadInput(
            f"reward model {spec.label!r} returned a non-finite score for response {ids[bad[0]]}",
            file=ctx.recipe.path,
            field=spec.field,
            value=float(values[bad[0]]),
        )
    return values.tolist()
