"""Stage "oracle labels": the oracle's score of every benchmark response, keyed by (response,
oracle).  A label whose judge samples all failed is not stored (a rerun asks again); its
failures go to the ``failures`` table."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from rmaudit.components import Oracle, OracleLabel
from rmaudit.errors import BadInput
from rmaudit.store import utc_now

from .batches import BatchCall, map_calls
from .context import Keys, RunContext, StageCount, Work

STAGE = "oracle labels"


def work(ctx: RunContext, oracle: Oracle, response_ids: Keys) -> Work[str]:
    known = response_ids.known
    stored = ctx.store.items.labelled(oracle.key, known) if ctx.store and known else set()
    pending = [rid for rid in known if rid not in stored]
    unsure = bool(response_ids.unlisted and ctx.store and ctx.store.items.has_labels(oracle.key))
    return Work(
        StageCount(
            STAGE,
            response_ids.total,
            len(known) - len(pending),
            oracle.calls_per_label(),
            response_ids.at_most or unsure,
        ),
        pending,
    )


def label(ctx: RunContext, oracle: Oracle, todo: Work[str]) -> None:
    recipe = ctx.recipe
    ctx.remember(oracle)
    failed = 0

    def write(ids: Sequence[str], labels: list[OracleLabel]) -> None:
        nonlocal failed
        rows, failures = [], []
        for rid, label in zip(ids, labels, strict=True):
            failures += [(rid, message, utc_now()) for message in label.failures]
            if label.failed:  # no usable sample: not stored, so a rerun asks again
                continue
            if not np.isfinite(label.score):
                raise BadInput(
                    "oracle returned a non-finite score",
                    field=recipe.oracle.field,
                    file=recipe.path,
                    value=label.score,
                )
            rows.append(
                (
                    rid,
                    oracle.key,
                    float(label.score),
                    json.dumps(list(label.samples)),
                    label.cost_usd,
                    label.prompt_tokens,
                    label.completion_tokens,
                )
            )
        ctx.store.items.add_labels(rows)
        ctx.store.runs.retried(recipe.run_key, STAGE, ids, failures)
        failed += len(failures)

    call = BatchCall(
        recipe.oracle,
        oracle,
        "label",
        lambda ids: [(ctx.prompt(r.prompt_id), r) for r in ctx.load_responses(ids)],
    )
    map_calls(ctx, todo, call, write)
    if failed:
        ctx.notes.append(
            f"oracle: {failed} failed judge samples recorded in the failures table "
            f"(stage '{STAGE}'); a rerun retries labels with none"
        )
