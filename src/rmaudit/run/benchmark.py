"""The benchmark: built by the stages prompts → responses → oracle labels, or imported from a
benchmark file; and read back for pair sources and metrics."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

import numpy as np

from rmaudit.benchmark.portable import (
    header_design,
    imported_keys,
    refuse_conflicts,
    store_benchmark,
)
from rmaudit.benchmark.portable_read import read_benchmark
from rmaudit.components import BenchmarkData, Prompt, Response
from rmaudit.components.keys import content_key, response_id
from rmaudit.errors import BadInput
from rmaudit.recipe import check_pool_size
from rmaudit.store import utc_now
from rmaudit.store.records import BenchmarkRow

from . import design, labels, prompts, responses
from .context import Keys, RunContext, StageCount, locate, required, response_from_row

#: a benchmark as the stages build it and read it back: the store's record
Benchmark = BenchmarkRow


@dataclass
class BenchmarkStages:
    """What the benchmark stages leave for the later ones."""

    #: None in a plan while some of its responses or labels are still to be made
    benchmark: Benchmark | None
    #: its responses, to be scored
    response_ids: Keys
    prompts: int


def build(ctx: RunContext, execute: bool) -> BenchmarkStages:
    """Prompts, responses and labels; each stage makes (in a run) only what is not stored."""
    recipe = ctx.recipe
    source, policy, oracle = (
        ctx.component(s) for s in (recipe.source, recipe.policy, recipe.oracle)
    )
    selection_key, chosen, k = prompts.select(ctx, execute)
    n = required(recipe.per_prompt, "[responses] per_prompt")
    label_design = None if recipe.label_budget is None else design.record(ctx)
    parts = ["benchmark", selection_key, policy.key, n, oracle.key]
    if label_design is not None:  # a budget is another benchmark; none keeps the old key
        parts.append(label_design.identity())
    benchmark = Benchmark(
        id=content_key(*parts),
        title=recipe.model.title,
        selection_key=selection_key,
        policy_key=policy.key,
        per_prompt=n,
        oracle_key=oracle.key,
        simulated=any(c.simulated for c in (source, policy, oracle)),
        origin="built",
        created_at=utc_now(),
        design=label_design,
    )
    with ctx.timed("responses"):
        generation = responses.work(ctx, policy, chosen, k)
        ctx.counts.append(generation.count)
        ctx.check_ready(recipe.policy, generation.count)
        if execute:
            responses.generate(ctx, policy, generation)
    if chosen is None:
        response_ids = Keys(unlisted=k * n)
        ctx.planned_policy = (policy.key, n)
    else:  # keyed, not read back: the run stored each one (their texts: ctx.load_responses)
        response_ids = Keys([rid for p in chosen for rid in ctx.response_ids(policy.key, p.id, n)])
    drawn = None
    if recipe.label_budget is not None:
        with ctx.timed(design.STAGE):
            drawn = design.draw(ctx, response_ids, n, execute)
    with ctx.timed(labels.STAGE):
        labelling = labels.work(ctx, oracle, drawn.labelled if drawn else response_ids)
        ctx.counts.append(labelling.count)
        ctx.check_prompts(recipe.oracle, labelling.count, chosen or [])
        if execute:
            labels.label(ctx, required(recipe.oracle, "[oracle]"), oracle, labelling)
    if recipe.cheap_oracle is not None:
        cheap = ctx.component(recipe.cheap_oracle)
        with ctx.timed(labels.CHEAP_STAGE):
            cheap_labelling = labels.work(ctx, cheap, response_ids, labels.CHEAP_STAGE)
            ctx.counts.append(cheap_labelling.count)
            ctx.check_prompts(recipe.cheap_oracle, cheap_labelling.count, chosen or [])
            if execute:
                labels.label(ctx, recipe.cheap_oracle, cheap, cheap_labelling)
    if execute:
        if drawn is not None:
            inclusion = required(drawn.inclusion, "the drawn inclusion probabilities")
            ctx.db.items.add_inclusion(benchmark.id, inclusion)
        ctx.db.items.add_benchmark(replace(benchmark, created_at=utc_now()))
    elif generation.count.pending or labelling.count.pending:
        return BenchmarkStages(None, response_ids, k)
    return BenchmarkStages(benchmark, response_ids, k)


def _from_files(ctx: RunContext) -> tuple[dict, list[dict], str]:
    """The recipe's benchmark file, or what its benchmark source read: (header, records,
    origin); a source's notes (unlabelled responses left out, ...) go to the run's notes."""
    recipe = ctx.recipe
    if recipe.benchmark_file is not None:
        if ctx.benchmark_file_records is None:  # once per run: its plan reads it first
            ctx.benchmark_header, ctx.benchmark_file_records = read_benchmark(recipe.benchmark_file)
        assert ctx.benchmark_header is not None
        header, records = ctx.benchmark_header, ctx.benchmark_file_records
        return header, records, f"imported from {recipe.benchmark_file.name}"
    source = ctx.component(recipe.benchmark_source)
    content = ctx.benchmark_content
    if content is None:  # once per run: its plan reads it first
        try:
            content = source.load()
        except BadInput as error:
            raise locate(error, recipe, recipe.benchmark_source) from None
        ctx.benchmark_content = content
    ctx.notes.extend(f"benchmark: {note}" for note in content.notes)
    return content.header, content.records, f"read by {source.name}"


def _file_name(ctx: RunContext) -> str:
    """Where a conflict is reported: the benchmark file, or the recipe of a benchmark source."""
    recipe = ctx.recipe
    return str(recipe.benchmark_file if recipe.benchmark_file is not None else recipe.path)


def imported(ctx: RunContext, execute: bool) -> BenchmarkStages:
    """The recipe's benchmark file or source, stored (all or nothing) unless it already is.
    Its prompts count as stored when their selection is, its responses when they and their
    labels are (the same responses and labels may be in the file from the run that exported
    them)."""
    header, records, origin = _from_files(ctx)
    benchmark_id, selection_key, prompt_ids, per_prompt = imported_keys(header, records, ctx.store)
    ids = _record_ids(ctx, header["policy_key"], prompt_ids, records)
    store = ctx.store
    # in the plan too, so a run refuses before it writes anything; a benchmark its plan found
    # stored was stored whole and is never rewritten, so the plan's check holds for the run
    checked = ctx.found_stored.setdefault(("benchmarks", ""), set())
    if store is not None and not (execute and benchmark_id in checked):
        refuse_conflicts(store, header, records, file=_file_name(ctx), response_ids=ids)
        if store.items.benchmark(benchmark_id) is not None:
            checked.add(benchmark_id)
    selected = len(records) if store is not None and store.items.selection(selection_key) else 0
    labelled = 0
    if store is not None and "design" in header:  # its undrawn responses have no label
        labelled = len(store.items.stored_responses(ids))
    elif store is not None:
        labelled = len(store.items.labelled(header["oracle_key"], ids))
    ctx.counts.append(StageCount("prompts (imported)", len(records), selected))
    ctx.counts.append(StageCount("responses (imported)", len(ids), labelled))
    if not execute:
        _remember_records(ctx, prompt_ids, records, ids)
        ctx.planned_oracle = tuple(
            np.array(
                [
                    np.nan if r["label"] is None else r["label"]["score"]
                    for r in record["responses"]
                ],
                float,
            )
            for record in records
        )
        return BenchmarkStages(
            Benchmark(
                benchmark_id,
                header["title"],
                selection_key,
                header["policy_key"],
                per_prompt,
                header["oracle_key"],
                bool(header.get("simulated")),
                origin,
                utc_now(),
                header_design(header),
            ),
            Keys(ids),
            len(records),
        )
    store = ctx.db
    if store.items.benchmark(benchmark_id) is None:  # stored whole or not at all
        store_benchmark(store, header, records, origin=origin)
    benchmark = load(ctx, benchmark_id)
    # a prompt with fewer responses than a metric needs is skipped by that metric, not fatal;
    # under a label design its unlabelled responses count too (the metrics estimate over them)
    if benchmark.design is not None:
        stored = benchmark_responses(ctx, benchmark)
        check_pool_size(ctx.recipe, max(Counter(r.prompt_id for r in stored).values()))
        return BenchmarkStages(benchmark, Keys([r.id for r in stored]), len(records))
    sizes = {pid: len(labels) for pid, labels in oracle_by_prompt(ctx, benchmark).items()}
    check_pool_size(ctx.recipe, max(sizes.values()))
    # the ids only: a stage reads the texts of the responses it still has to score
    stored_ids = ctx.db.items.benchmark_response_ids(
        benchmark.selection_key, benchmark.policy_key, benchmark.per_prompt
    )
    return BenchmarkStages(benchmark, Keys(stored_ids), len(records))


def _record_ids(
    ctx: RunContext, policy_key: str, prompt_ids: list[str], records: list[dict]
) -> list[str]:
    """The response id of every response of the records, in order (memoised: a plan and its
    run key them all)."""
    ids = []
    for pid, record in zip(prompt_ids, records, strict=True):
        indices = [r["sample_index"] for r in record["responses"]]
        if all(type(index) is int and index >= 0 for index in indices):
            keyed = ctx.response_ids(policy_key, pid, max(indices, default=-1) + 1)
            ids += [keyed[index] for index in indices]
        else:  # a benchmark source of a plugin may number its samples otherwise
            ids += [response_id(policy_key, pid, index) for index in indices]
    return ids


def _remember_records(
    ctx: RunContext, prompt_ids: list[str], records: list[dict], ids: list[str]
) -> None:
    """A plan keeps a file's prompts and responses (``ids``: their ids, in order) in memory,
    so the scores stages can check them against scores files before the run stores them."""
    rids = iter(ids)
    for pid, record in zip(prompt_ids, records, strict=True):
        ctx.prompts[pid] = Prompt(pid, record["prompt"]["text"], record["prompt"].get("meta") or {})
        for r in record["responses"]:
            rid = next(rids)
            ctx.responses[rid] = Response(
                rid, pid, r["sample_index"], r["text"], r.get("meta") or {}
            )


# -- reading the benchmark back -----------------------------------------------------------
def load(ctx: RunContext, benchmark_id: str) -> Benchmark:
    found = ctx.db.items.benchmark(benchmark_id)
    if found is None:
        raise KeyError(f"benchmark {benchmark_id} is not stored")
    return found


def benchmark_responses(ctx: RunContext, benchmark: Benchmark) -> list[Response]:
    return [
        response_from_row(row)
        for row in ctx.db.items.benchmark_responses(
            benchmark.selection_key, benchmark.policy_key, benchmark.per_prompt
        )
    ]


def oracle_by_prompt(ctx: RunContext, benchmark: Benchmark) -> dict[str, dict[str, float]]:
    """Prompt id → response id → oracle score, in benchmark order (labelled responses only:
    under a label design, those its design drew)."""
    return ctx.db.items.benchmark_oracle_scores(benchmark)


def benchmark_data(ctx: RunContext, benchmark: Benchmark) -> BenchmarkData:
    """The benchmark's prompts, responses and oracle scores, for pair sources."""
    oracle = oracle_by_prompt(ctx, benchmark)
    responses = {r.id: r for r in benchmark_responses(ctx, benchmark)}
    prompt_ids = tuple(oracle)
    return BenchmarkData(
        tuple(ctx.prompt(pid) for pid in prompt_ids),
        tuple(tuple(responses[rid] for rid in oracle[pid]) for pid in prompt_ids),
        tuple(np.fromiter(oracle[pid].values(), float) for pid in prompt_ids),
    )
