"""Stage "responses": N responses per benchmark prompt from the reference policy, keyed by
(policy, prompt, sample index)."""

from __future__ import annotations

from collections.abc import Sequence

from rmaudit.components import Generation, Prompt, ReferencePolicy
from rmaudit.store.item_records import StoredResponse

from .batches import BatchCall, map_calls
from .context import RunContext, StageCount, Work, required, response_from_row

#: (prompt, sample index, response id)
Item = tuple[Prompt, int, str]


def work(
    ctx: RunContext, policy: ReferencePolicy, prompts: list[Prompt] | None, k: int
) -> Work[Item]:
    """The responses of ``prompts``; in a plan whose prompts are not sampled yet, their count."""
    n = required(ctx.recipe.per_prompt, "[responses] per_prompt")
    if prompts is None:  # their keys are not known: counted as to do
        unsure = ctx.store is not None and ctx.store.items.has_responses(policy.key)
        return Work(StageCount("responses", k * n, 0, at_most=unsure), [])
    items = [
        (p, i, rid) for p in prompts for i, rid in enumerate(ctx.response_ids(policy.key, p.id, n))
    ]
    stored = ctx.stored_responses([rid for _, _, rid in items])
    pending = [item for item in items if item[2] not in stored]
    return Work(StageCount("responses", len(items), len(items) - len(pending)), pending)


def generate(ctx: RunContext, policy: ReferencePolicy, todo: Work[Item]) -> None:
    ctx.add_components(policy)

    def write(batch: Sequence[Item], generations: list[Generation]) -> None:
        rows = [
            StoredResponse(rid, p.id, policy.key, i, g.text, g.meta)
            for (p, i, rid), g in zip(batch, generations, strict=True)
        ]
        # the later stages get them from memory, as the store gives them back
        for row in ctx.db.items.add_responses(rows, read_back=True):
            ctx.responses[row.id] = response_from_row(row)

    call = BatchCall(
        required(ctx.recipe.policy, "[responses.policy]"),
        policy,
        "generate",
        lambda batch: [(p, i) for p, i, _ in batch],
    )
    map_calls(ctx, todo, call, write)
