"""Stage "pairs": the preference pairs a run audits, from a pair file or derived from the
benchmark, stored once (with their prompts and responses) as an ordered pair set keyed by
the source and the pairs' own keys."""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass

import numpy as np

from rmaudit.components import (
    BenchmarkData,
    JudgedPairs,
    PairInputs,
    PairShown,
    RejectedRecord,
    SourcedPair,
)
from rmaudit.components.keys import content_key, pair_id
from rmaudit.errors import BadInput
from rmaudit.store.pair_records import StoredPair

from .batches import write_whole
from .benchmark import BenchmarkStages, benchmark_data
from .context import Keys, RunContext, StageCount, prompt_row, required, text_response_rows

STAGE = "pairs"


@dataclass
class PairSet:
    """The preference pairs a run audits, in source order, with their content keys."""

    key: str
    pairs: list[SourcedPair]
    ids: list[str]
    rejected: list[RejectedRecord]
    records: int  # records the source read: those that gave pairs + the rejected ones

    def inputs(
        self,
        chosen: np.ndarray,
        rejected: np.ndarray,
        sweep: dict[str, dict[float, tuple[np.ndarray, np.ndarray]]],
        verdicts: JudgedPairs | None = None,
    ) -> PairInputs:
        """What a pair metric gets: one RM's logits of each pair (and of the shifted copies in
        ``sweep``), or a pairwise judge's ``verdicts`` beside its logits."""
        return PairInputs(
            tuple(self.ids),
            chosen,
            rejected,
            tuple(p.subset for p in self.pairs),
            tuple(p.meta for p in self.pairs),
            sweep,
            tuple(p.prompt.id for p in self.pairs),
            verdicts=verdicts,
            places=tuple(p.place for p in self.pairs),
        )

    def report(self) -> str:
        """One line: pairs, records, and the rejected records by reason."""
        line = f"pairs: {len(self.ids):,} from {self.records:,} records"
        if self.rejected:
            reasons = Counter(r.reason for r in self.rejected)
            line += (
                f"; {len(self.rejected):,} rejected (stored in the failures table): "
                + ", ".join(f"{reason} ×{n}" for reason, n in reasons.most_common())
                + f"; first: {self.rejected[0].one_line()}"
            )
        return line

    def response_ids(self) -> Keys:
        return Keys(list(dict.fromkeys(r.id for p in self.pairs for r in (p.chosen, p.rejected))))

    @functools.cached_property
    def showings(self) -> list[PairShown]:
        """Every pair in both orders, chosen first then rejected first, as a pairwise judge
        sees it: made once for all the judges of a run."""
        return [
            PairShown(p.prompt, first, second)
            for p in self.pairs
            for first, second in ((p.chosen, p.rejected), (p.rejected, p.chosen))
        ]


@dataclass
class PairStage:
    """What the pairs stage leaves for the shift sweep and scoring."""

    pair_set: PairSet | None  # None in a plan whose benchmark is not built yet
    bound: int | None = None  # then: at most this many pairs (None: the source cannot tell)


def load(ctx: RunContext, benchmark: BenchmarkData | None) -> PairSet:
    """Ask the pair source for its pairs; key them and their set by content."""
    spec = required(ctx.recipe.pair_source, "[pairs.source]")
    source = ctx.component(spec)
    try:
        loaded = source.load_pairs(benchmark)
    except BadInput as error:
        raise ctx.located(error, spec) from None
    if not loaded.pairs:
        rejected = (
            f" ({len(loaded.rejected)} records rejected; first: {loaded.rejected[0].one_line()})"
            if loaded.rejected
            else ""
        )
        raise BadInput(
            f"the pair source gave no pairs{rejected}", file=ctx.recipe.path, field=spec.field
        )
    ids = [pair_id(p.prompt.id, p.chosen.id, p.rejected.id, p.subset) for p in loaded.pairs]
    return PairSet(
        content_key("pair-set", source.key, ids), loaded.pairs, ids, loaded.rejected, loaded.records
    )


def stage(ctx: RunContext, built: BenchmarkStages | None, execute: bool) -> PairStage:
    """The pairs; a pair set is stored in one transaction, so it is there whole or not at all."""
    source = ctx.component(ctx.recipe.pair_source)
    with ctx.timed(STAGE):
        benchmark = built.benchmark if built is not None else None
        if source.needs_benchmark and benchmark is None and not execute:
            bound = (
                source.planned_size(built.prompts, ctx.recipe.per_prompt)
                if built is not None
                else None
            )
            ctx.counts.append(
                StageCount(STAGE, bound, 0, at_most=True)
                if bound is not None
                else StageCount(f"{STAGE} (counted once the benchmark is built)", 0, 0)
            )
            return PairStage(None, bound)
        if source.needs_benchmark:
            pair_set = load(ctx, benchmark_data(ctx, benchmark) if benchmark else None)
        else:  # once per run: its plan loads them first
            ctx.loaded_pairs = ctx.loaded_pairs or load(ctx, None)
            pair_set = ctx.loaded_pairs
        total = len(pair_set.ids)
        stored = ctx.store is not None and bool(ctx.store.items.pair_set(pair_set.key))
        write_whole(ctx, STAGE, total, stored, execute, functools.partial(_write, ctx, pair_set))
        if execute and stored and ctx.db.items.lacks_pair_set_meta(pair_set.key):  # schema < 10
            ctx.db.items.fill_pair_set_meta(pair_set.key, [p.stored_meta for p in pair_set.pairs])
        # in a plan too: the scores stages check the pairs' texts against scores files
        ctx.prompts.update((p.prompt.id, p.prompt) for p in pair_set.pairs)
        ctx.responses.update((r.id, r) for p in pair_set.pairs for r in (p.chosen, p.rejected))
        return PairStage(pair_set)


def _write(ctx: RunContext, pair_set: PairSet) -> None:
    items = ctx.db.items
    with ctx.db.transaction():
        ctx.add_components(ctx.component(ctx.recipe.pair_source))
        items.add_prompts(prompt_row(p.prompt) for p in pair_set.pairs)
        items.add_responses(
            text_response_rows([r for p in pair_set.pairs for r in (p.chosen, p.rejected)])
        )
        stored = [
            StoredPair(pid, p.prompt.id, p.chosen.id, p.rejected.id, p.subset, p.stored_meta)
            for pid, p in zip(pair_set.ids, pair_set.pairs, strict=True)
        ]
        items.add_pairs(stored)
        items.add_pair_set(pair_set.key, stored)
