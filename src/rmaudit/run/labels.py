"""Stage "oracle labels": the oracle's score of every benchmark response, keyed by (response,
oracle).  A label whose judge samples all failed is not stored (a rerun asks again); its
failures go to the ``failures`` table."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rmaudit.components import Oracle, OracleLabel
from rmaudit.errors import BadInput
from rmaudit.recipe import ComponentSpec
from rmaudit.store.item_records import StoredLabel
from rmaudit.store.records import RunFailure

from .batches import BatchCall, map_calls
from .context import Keys, RunContext, StageCount, Work

STAGE = "oracle labels"
#: the stage of a cheap judge beside the oracle (docs/budget.md)
CHEAP_STAGE = "cheap labels"


def work(ctx: RunContext, oracle: Oracle, response_ids: Keys, stage: str = STAGE) -> Work[str]:
    known = response_ids.known
    stored = ctx.labelled(oracle.key, known)
    pending = [rid for rid in known if rid not in stored]
    unsure = bool(response_ids.unlisted and ctx.store and ctx.store.items.has_labels(oracle.key))
    return Work(
        StageCount(
            stage,
            response_ids.total,
            len(known) - len(pending),
            oracle.calls_per_label(),
            response_ids.at_most or unsure,
            response_ids.approximate,
        ),
        pending,
    )


def label(ctx: RunContext, spec: ComponentSpec, oracle: Oracle, todo: Work[str]) -> None:
    """Label ``todo``'s responses with ``oracle`` (the recipe's ``spec``: its oracle, or the
    cheap judge beside it)."""
    stage = todo.count.stage
    recipe = ctx.recipe
    ctx.add_components(oracle)
    failed = 0

    def write(ids: Sequence[str], labels: list[OracleLabel]) -> None:
        nonlocal failed
        rows, failures = [], []
        for rid, label in zip(ids, labels, strict=True):
            failures += [RunFailure(rid, message) for message in label.failures]
            if label.failed:  # no usable sample: not stored, so a rerun asks again
                todo.count.failed += 1
                continue
            if not math.isfinite(label.score):
                raise BadInput(
                    "oracle returned a non-finite score",
                    field=spec.field,
                    file=recipe.path,
                    value=label.score,
                )
            rows.append(
                StoredLabel(
                    rid,
                    oracle.key,
                    float(label.score),
                    tuple(label.samples),
                    label.cost_usd,
                    label.prompt_tokens,
                    label.completion_tokens,
                )
            )
        ctx.db.items.add_labels(rows)
        ctx.db.runs.retried(recipe.run_key, stage, ids, failures)
        failed += len(failures)

    map_calls(ctx, todo, BatchCall(spec, oracle, "label", ctx.prompted_responses), write)
    if failed:
        ctx.notes.append(
            f"{spec.field}: {failed} failed judge samples recorded in the failures table "
            f"(stage '{stage}'); a rerun retries labels with none"
        )
