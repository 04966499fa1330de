"""The runner: stages as resumable batch maps over content-addressed items (DESIGN.md).

    prompts ─► selection ─► responses ─► oracle labels ─┐
    preference pairs ─► shifted pairs (shift sweep) ────┴─► RM scores (per RM) ─► metrics

A recipe audits a benchmark, preference pairs (from a file, or derived from the benchmark),
or both.  Each item stage computes the keys of every item it should produce, asks the store which
already exist, and maps the component over the rest in batches; each batch is written
in one transaction.  A rerun therefore does no stored work twice, a killed run resumes
where it stopped, and a new RM on an old benchmark only scores.
"""

from __future__ import annotations

import json
import platform
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np

from rmaudit import __version__
from rmaudit.components import (RUN_LEVEL, BenchmarkData, Component, MetricInputs, MetricOutput,
                                OracleLabel, PairInputs, Prompt, RejectedRecord, Response,
                                ShiftPerturber, SourcedPair, StudyInputs)
from rmaudit.errors import BadInput, MetricInputError
from rmaudit.executors import make_executor
from rmaudit.hashing import (content_key, pair_id, prompt_id, response_id, shifted_prompt_id,
                             shifted_response_id)
from rmaudit.recipe import ComponentSpec, Recipe, check_pool_size
from rmaudit.store import Store, dumps, utc_now
from rmaudit.vocabulary import shifts_prompt, shifts_responses
from rmaudit.benchmark_file import import_benchmark, read_benchmark

T = TypeVar("T")


class Progress(Protocol):
    def start(self, stage: str, total: int, done: int) -> None: ...
    def advance(self, stage: str, amount: int) -> None: ...
    def finish(self, stage: str) -> None: ...


class SilentProgress:
    def start(self, stage: str, total: int, done: int) -> None: ...
    def advance(self, stage: str, amount: int) -> None: ...
    def finish(self, stage: str) -> None: ...


@dataclass
class StageCount:
    """How many items a stage needs, how many were stored before, how many it made."""

    stage: str
    total: int
    stored: int
    calls_per_item: int = 1

    @property
    def pending(self) -> int:
        return self.total - self.stored


@dataclass
class Benchmark:
    id: str
    title: str
    selection_key: str
    policy_key: str
    per_prompt: int
    oracle_key: str
    simulated: bool


@dataclass
class PairSet:
    """The preference pairs a run audits, in source order, with their content keys."""

    key: str
    pairs: list[SourcedPair]
    ids: list[str]
    rejected: list[RejectedRecord]
    records: int  # records the source read: those that gave pairs + the rejected ones

    def report(self) -> str:
        """One line: pairs, records, and the rejected records by reason."""
        line = f"pairs: {len(self.ids):,} from {self.records:,} records"
        if self.rejected:
            reasons = Counter(r.reason for r in self.rejected)
            line += (f"; {len(self.rejected):,} rejected (stored in the failures table): "
                     + ", ".join(f"{reason} ×{n}" for reason, n in reasons.most_common())
                     + f"; first: {self.rejected[0].one_line()}")
        return line


@dataclass(frozen=True)
class ShiftedPair:
    """A pair of the shift sweep: ``original`` with its prompt, its responses or both perturbed.

    Its ids depend on the perturber (whose key includes the level p), the sweep seed and the
    original ids — not on the perturbed texts — so what is stored is known without perturbing.
    """

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


@dataclass(frozen=True)
class BatchCall:
    """What a stage asks of a component for each batch of items: ``component.<method>(
    inputs(batch))``.  The recipe's executor runs it (in-process or on Ray workers, which
    rebuild the component from its class and options), so it names the method rather than
    holding a bound one."""

    spec: ComponentSpec
    component: Component
    method: str  # "generate", "label" or "score"
    inputs: Callable[[Sequence[Any]], list[Any]]


@dataclass
class RunResult:
    run_id: str
    benchmark: Benchmark | None
    counts: list[StageCount]
    simulated: bool
    timings: dict[str, float] = field(default_factory=dict)
    #: Lines the CLI prints after the run (e.g. how many pair records were rejected, and why).
    notes: list[str] = field(default_factory=list)


def batched(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def build_components(recipe: Recipe) -> dict[str, Component]:
    """Build every component of a recipe, keyed by its recipe field.

    Done before the store is opened: a component that rejects its options or data files
    (a missing file, a NaN in a scores file) does so before anything is written.
    """
    slots = [recipe.source, recipe.sampler, recipe.policy, recipe.oracle, recipe.pair_source,
             recipe.perturber, *recipe.reward_models, *recipe.metrics]
    if recipe.sampler is not None and recipe.sampler.cls.needs_embeddings:
        slots.append(recipe.embedder)
    components = {}
    for spec in filter(None, slots):
        try:
            components[spec.field] = spec.build()
        except BadInput as error:
            # A data file's error names that file (and line) and the record's field; an
            # options error names the recipe field.
            raise error.located(file=error.file or recipe.path,
                                field=None if error.file else spec.field) from None
    return components


class Runner:
    def __init__(self, recipe: Recipe, store: Store | None, progress: Progress | None = None,
                 components: dict[str, Component] | None = None) -> None:
        self.recipe = recipe
        self.store = store
        self.progress = progress or SilentProgress()
        self.counts: list[StageCount] = []
        self.timings: dict[str, float] = {}
        self.prompts: dict[str, Prompt] = {}
        self.oracle_failures = 0
        self.rm_reports: dict[str, dict[str, Any]] = {}
        #: Responses already in memory (benchmark, pairs, shifted texts written this run), so
        #: scoring reads from the store only what a resumed run did not produce itself.
        self.responses: dict[str, Response] = {}
        self.components = components if components is not None else build_components(recipe)
        self.reward_models = [(spec, self.components[spec.field]) for spec in recipe.reward_models]
        #: Runs the component calls of the item stages; connects to Ray, if at all, on first use.
        self.executor = make_executor(recipe.executor)

    def component(self, spec: ComponentSpec | None) -> Component:
        return self.components[spec.field]

    # -- the plan (--dry-run): what a run would do, without writing anything ------------
    def plan(self) -> list[StageCount]:
        """Count the items of every stage and how many are already stored."""
        counts: list[StageCount] = []
        response_ids: list[str] = []
        unbuilt_responses = 0  # responses of a benchmark not built yet: known by count only
        if self.recipe.benchmark_file is not None:
            header, records = read_benchmark(self.recipe.benchmark_file)
            response_ids = [response_id(header["policy_key"], prompt_id(rec["prompt"]["text"]),
                                        resp["sample_index"])
                            for rec in records for resp in rec["responses"]]
            counts.append(StageCount("prompts (imported)", len(records), len(records)))
            counts.append(StageCount("responses (imported)", len(response_ids), len(response_ids)))
        elif self.recipe.source is not None:
            selection_key, pool = self._pool()
            stored = self._stored_selection(selection_key) if self.store else []
            sampler = self.component(self.recipe.sampler)
            k = len(stored) if stored else sampler.planned_size(len(pool))
            counts.append(StageCount("prompts", k, len(stored)))
            policy, oracle = self.component(self.recipe.policy), self.component(self.recipe.oracle)
            n = self.recipe.per_prompt
            response_ids = [response_id(policy.key, pid, i) for pid in stored for i in range(n)]
            total = k * n
            unbuilt_responses = total - len(response_ids)
            counts.append(StageCount("responses", total, self._count_stored(
                "select id from responses where policy_key = ?", policy.key, response_ids)))
            counts.append(StageCount("oracle labels", total, self._count_stored(
                "select response_id from oracle_labels where oracle_key = ?", oracle.key,
                response_ids), oracle.calls_per_label()))
        if self.recipe.pair_source is not None:
            response_ids = list(dict.fromkeys(response_ids + self._plan_pairs(counts)))
        for spec, model in self.reward_models:
            counts.append(StageCount(f"scores: {spec.label}", len(response_ids) + unbuilt_responses,
                                     self._count_stored(
                                         "select response_id from rm_scores where rm_key = ?",
                                         model.key, response_ids)))
        return counts

    def _plan_pairs(self, counts: list[StageCount]) -> list[str]:
        """Add the pair stages to ``counts``; return the response ids they need scored.

        Pairs derived from the benchmark can be counted only once its labels are stored.
        """
        source = self.component(self.recipe.pair_source)
        benchmark = None
        if source.needs_benchmark:
            benchmark = self._stored_benchmark_for_plan()
            if benchmark is None:
                counts.append(StageCount("pairs (counted once the benchmark is built)", 0, 0))
                return []
        pair_set = self._load_pairs(benchmark)
        stored = self.store is not None and bool(self._stored_pair_set(pair_set.key))
        counts.append(StageCount("pairs", len(pair_set.ids), len(pair_set.ids) if stored else 0))
        ids = [r.id for pair in pair_set.pairs for r in (pair.chosen, pair.rejected)]
        if self.recipe.perturber is not None:
            shifted = [s for by_level in self._plan_shift(pair_set).values()
                       for level_pairs in by_level.values() for s in level_pairs]
            existing = self.store.existing("select id from pairs where perturber_key is not null") \
                if self.store else set()
            counts.append(StageCount("shifted pairs", len(shifted),
                                     sum(s.id in existing for s in shifted)))
            ids += [i for s in shifted for i in (s.chosen_id, s.rejected_id)]
        return ids

    def _stored_benchmark_for_plan(self) -> BenchmarkData | None:
        """The recipe's built benchmark if it is already stored (a plan never builds one)."""
        if self.store is None or self.recipe.source is None:
            return None
        benchmark_id = self._built_benchmark_id(self._pool()[0])
        if self.store.db["benchmarks"].count_where("id = ?", [benchmark_id]) == 0:
            return None
        return self._benchmark_data(self.load_benchmark(benchmark_id))

    def _built_benchmark_id(self, selection_key: str) -> str:
        policy, oracle = self.component(self.recipe.policy), self.component(self.recipe.oracle)
        return content_key("benchmark", selection_key, policy.key, self.recipe.per_prompt, oracle.key)

    def _count_stored(self, sql: str, key: str, ids: list[str]) -> int:
        if self.store is None or not ids:
            return 0
        return len(self.store.existing(sql, [key]).intersection(ids))

    # -- the whole run ----------------------------------------------------------------
    def run(self) -> RunResult:
        try:
            return self._run()
        finally:
            self.executor.close()  # a Ray instance this run started stops with it

    def _run(self) -> RunResult:
        started = time.perf_counter()
        benchmark, responses = self._benchmark() if self.recipe.has_benchmark else (None, [])
        pair_set = shifted = None
        if self.recipe.pair_source is not None:
            pair_set = self._pairs(benchmark)
            responses += [r for pair in pair_set.pairs for r in (pair.chosen, pair.rejected)]
            if self.recipe.perturber is not None:
                shifted = self._shift(pair_set)
        self.responses.update((r.id, r) for r in responses)
        simulated = (benchmark is not None and benchmark.simulated) or any(
            c.simulated for c in self.components.values()
            if c.kind in ("prompt_source", "reward_model"))
        run_id = self.recipe.run_key
        self._start_run(run_id, benchmark, pair_set, simulated)
        notes = []
        if self.oracle_failures:
            notes.append(f"oracle: {self.oracle_failures} failed judge samples recorded in the "
                         f"failures table (stage 'oracle labels'); a rerun retries labels with none")
        try:
            if pair_set is not None:
                self._store_rejections(run_id, pair_set)
                notes.append(pair_set.report())
            to_score = list(dict.fromkeys(
                [r.id for r in responses]
                + [i for by_level in (shifted or {}).values() for level_pairs in by_level.values()
                   for pair in level_pairs for i in (pair.chosen_id, pair.rejected_id)]))
            for spec, model in self.reward_models:
                self._score(spec, model, to_score)
            notes.extend(f"{label}: " + ", ".join(f"{k}: {v}" for k, v in report.items())
                         for label, report in self.rm_reports.items())
            prompt_ids, outputs = self._metrics(benchmark, pair_set, shifted)
            self.timings["total"] = time.perf_counter() - started
            self._finish_run(run_id, prompt_ids, outputs)
        except BaseException as error:
            status = "interrupted" if isinstance(error, KeyboardInterrupt) else "failed"
            self.store.db["runs"].update(run_id, {"status": status, "error": str(error),
                                                  "finished_at": utc_now()})
            raise
        return RunResult(run_id, benchmark, self.counts, simulated, self.timings, notes)

    def _benchmark(self) -> tuple[Benchmark, list[Response]]:
        """Import the recipe's benchmark file, or build the benchmark: prompts, responses, labels."""
        if self.recipe.benchmark_file is not None:
            benchmark_id = import_benchmark(self.store, self.recipe.benchmark_file)
            benchmark = self.load_benchmark(benchmark_id)
            check_pool_size(self.recipe, self._smallest_pool(benchmark))
            return benchmark, self._benchmark_responses(benchmark)
        selection_key, prompts = self._select_prompts()
        policy, oracle = self.component(self.recipe.policy), self.component(self.recipe.oracle)
        n = self.recipe.per_prompt
        self._generate(policy, prompts, n)
        benchmark = Benchmark(
            id=self._built_benchmark_id(selection_key),
            title=self.recipe.model.title, selection_key=selection_key, policy_key=policy.key,
            per_prompt=n, oracle_key=oracle.key,
            simulated=any(c.simulated for c in (self.component(self.recipe.source), policy, oracle)))
        responses = self._benchmark_responses(benchmark)
        self._label(oracle, responses)
        self.store.db["benchmarks"].insert({
            "id": benchmark.id, "title": benchmark.title, "selection_key": selection_key,
            "policy_key": policy.key, "per_prompt": n, "oracle_key": oracle.key,
            "simulated": int(benchmark.simulated), "origin": "built", "created_at": utc_now(),
        }, ignore=True)
        return benchmark, responses

    # -- preference pairs -------------------------------------------------------------
    def _load_pairs(self, benchmark: BenchmarkData | None) -> PairSet:
        """Ask the pair source for its pairs; key them and their set by content."""
        spec = self.recipe.pair_source
        source = self.component(spec)
        try:
            loaded = source.load_pairs(benchmark)
        except BadInput as error:
            raise error.located(file=error.file or self.recipe.path,
                                field=None if error.file else spec.field) from None
        if not loaded.pairs:
            rejected = (f" ({len(loaded.rejected)} records rejected; first: "
                        f"{loaded.rejected[0].one_line()})" if loaded.rejected else "")
            raise BadInput(f"the pair source gave no pairs{rejected}", file=self.recipe.path,
                           field=spec.field)
        ids = [pair_id(p.prompt.id, p.chosen.id, p.rejected.id, p.subset) for p in loaded.pairs]
        key = content_key("pair-set", source.key, ids)
        return PairSet(key, loaded.pairs, ids, loaded.rejected, loaded.records)

    def _stored_pair_set(self, key: str) -> list[str]:
        return [row[0] for row in self.store.db.execute(
            "select pair_id from pair_sets where pair_set_key = ? order by position", [key])]

    def _pairs(self, benchmark: Benchmark | None) -> PairSet:
        """Store the pair source's prompts, responses and pairs (one transaction), once."""
        t0 = time.perf_counter()
        source = self.component(self.recipe.pair_source)
        data = self._benchmark_data(benchmark) if source.needs_benchmark else None
        pair_set = self._load_pairs(data)
        stored = bool(self._stored_pair_set(pair_set.key))
        self.progress.start("pairs", len(pair_set.ids), len(pair_set.ids) if stored else 0)
        if not stored:
            db = self.store.db
            with self.store.transaction():
                self._remember(source)
                db["prompts"].insert_all(({"id": p.prompt.id, "text": p.prompt.text,
                                           "meta": dumps(p.prompt.meta)} for p in pair_set.pairs),
                                         ignore=True)
                db["responses"].insert_all(self._response_rows(
                    r for p in pair_set.pairs for r in (p.chosen, p.rejected)), ignore=True)
                db["pairs"].insert_all(
                    ({"id": pid, "prompt_id": p.prompt.id, "chosen_id": p.chosen.id,
                      "rejected_id": p.rejected.id, "subset": p.subset, "meta": dumps(p.meta)}
                     for pid, p in zip(pair_set.ids, pair_set.pairs)), ignore=True)
                db["pair_sets"].insert_all(
                    {"pair_set_key": pair_set.key, "position": i, "pair_id": pid}
                    for i, pid in enumerate(pair_set.ids))
            self.progress.advance("pairs", len(pair_set.ids))
        self.progress.finish("pairs")
        self.prompts.update((p.prompt.id, p.prompt) for p in pair_set.pairs)
        self.counts.append(StageCount("pairs", len(pair_set.ids), len(pair_set.ids) if stored else 0))
        self.timings["pairs"] = time.perf_counter() - t0
        return pair_set

    @staticmethod
    def _response_rows(responses: Iterable[Response]) -> Iterator[dict[str, Any]]:
        """Rows of responses no policy wrote (pair files, shifted texts): NULL policy_key
        and sample_index; responses a policy wrote are already stored and left alone."""
        for r in responses:
            if r.sample_index is None:
                yield {"id": r.id, "prompt_id": r.prompt_id, "policy_key": None,
                       "sample_index": None, "text": r.text, "meta": dumps(r.meta)}

    def _store_rejections(self, run_id: str, pair_set: PairSet) -> None:
        """Rejected pair records go to ``failures`` (replacing this run's earlier ones)."""
        with self.store.transaction():
            self.store.db.execute("delete from failures where run_id = ? and stage = 'pairs'",
                                  [run_id])
            self.store.db["failures"].insert_all(
                {"run_id": run_id, "stage": "pairs", "item_id": r.where, "error": r.one_line(),
                 "created_at": utc_now()} for r in pair_set.rejected)

    def _plan_shift(self, pair_set: PairSet) -> dict[str, dict[float, list[ShiftedPair]]]:
        """Target → level p > 0 → the shifted pairs, aligned with ``pair_set``.  Level 0 is
        the unshifted pairs themselves (the in-distribution reference): nothing to store."""
        sweep, spec = self.recipe.shift, self.recipe.perturber
        plan: dict[str, dict[float, list[ShiftedPair]]] = {target: {} for target in sweep.targets}
        for level in (float(p) for p in sweep.levels if p > 0):
            perturber = spec.cls(spec.options.model_copy(update={"p": level}))
            perturber_key = perturber.key
            for target in sweep.targets:
                plan[target][level] = [
                    self._shifted_pair(pair, pid, target, level, perturber, perturber_key)
                    for pair, pid in zip(pair_set.pairs, pair_set.ids)]
        return plan

    def _shifted_pair(self, pair: SourcedPair, original_id: str, target: str, level: float,
                      perturber: ShiftPerturber, perturber_key: str) -> ShiftedPair:
        seed = self.recipe.shift.seed
        shift_prompt, shift_responses = shifts_prompt(target), shifts_responses(target)
        prompt = (shifted_prompt_id(perturber_key, seed, pair.prompt.id) if shift_prompt
                  else pair.prompt.id)
        # A prompt-only shift keeps the response texts but needs new response items: an RM
        # score belongs to a response *and* the prompt it answers.
        chosen, rejected = (shifted_response_id(perturber_key if shift_responses else None, seed,
                                                r.id, prompt) for r in (pair.chosen, pair.rejected))
        return ShiftedPair(pair_id(prompt, chosen, rejected, pair.subset), pair, original_id,
                           target, level, perturber, perturber_key, prompt, chosen, rejected)

    def _shift(self, pair_set: PairSet) -> dict[str, dict[float, list[ShiftedPair]]]:
        """Write the shifted copies of the pairs not yet stored, in batches (one transaction each)."""
        t0 = time.perf_counter()
        plan = self._plan_shift(pair_set)
        shifted = [s for by_level in plan.values() for level_pairs in by_level.values()
                   for s in level_pairs]
        existing = self.store.existing("select id from pairs where perturber_key is not null")
        pending = [s for s in shifted if s.id not in existing]
        seed = self.recipe.shift.seed
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
                items = (([s.original.prompt] if s.target != "response" else [])
                         + ([s.original.chosen, s.original.rejected] if s.target != "prompt" else []))
                for item in items:
                    if (s.perturber_key, item.id) not in texts:
                        todo.setdefault(s.perturber_key, (s.perturber, {}))[1][item.id] = item.text
            for key, (perturber, by_id) in todo.items():
                done = perturber.perturb_batch(list(by_id.values()), seed=seed)
                texts.update(((key, item_id), text) for item_id, text in zip(by_id, done))

        def write(batch: Sequence[ShiftedPair]) -> None:
            perturb_batch(batch)
            prompts, responses, pairs = {}, {}, []
            for s in batch:
                original = s.original
                if s.prompt_id != original.prompt.id:
                    prompts[s.prompt_id] = Prompt(s.prompt_id, perturbed(s, original.prompt),
                                                  {**original.prompt.meta,
                                                   "shifted_from": original.prompt.id})
                for new_id, r in ((s.chosen_id, original.chosen), (s.rejected_id, original.rejected)):
                    text = perturbed(s, r) if s.target != "prompt" else r.text
                    responses[new_id] = Response(new_id, s.prompt_id, None, text,
                                                 {"shifted_from": r.id})
                pairs.append({"id": s.id, "prompt_id": s.prompt_id, "chosen_id": s.chosen_id,
                              "rejected_id": s.rejected_id, "subset": original.subset,
                              "meta": dumps(original.meta), "shift_target": s.target,
                              "shift_level": s.level, "perturber_key": s.perturber_key,
                              "original_pair_id": s.original_id})
            with self.store.transaction():
                self.store.db["prompts"].insert_all(
                    ({"id": p.id, "text": p.text, "meta": dumps(p.meta)} for p in prompts.values()),
                    ignore=True)
                self.store.db["responses"].insert_all(self._response_rows(responses.values()),
                                                      ignore=True)
                self.store.db["pairs"].insert_all(pairs, ignore=True)
            self.prompts.update(prompts)
            self.responses.update(responses)

        if pending:
            self._remember(*{s.perturber_key: s.perturber for s in pending}.values())
        self._map("shifted pairs", len(shifted), pending, write)
        self.timings["shifted pairs"] = time.perf_counter() - t0
        return plan

    # -- stages -----------------------------------------------------------------------
    def _pool(self) -> tuple[str, list[Prompt]]:
        """The candidate prompts and the key of the selection the sampler makes from them."""
        source, sampler = self.component(self.recipe.source), self.component(self.recipe.sampler)
        try:
            loaded = source.load()
        except BadInput as error:
            raise error.located(file=error.file or self.recipe.path,
                                field=None if error.file else self.recipe.source.field) from None
        pool, seen = [], set()
        for text, meta in loaded:
            pid = prompt_id(text)
            if pid not in seen:  # identical texts are one prompt
                seen.add(pid)
                pool.append(Prompt(pid, text, meta))
        embedder = self.component(self.recipe.embedder) if sampler.needs_embeddings else None
        selection_key = content_key("selection", source.key, sampler.key,
                                    embedder.key if embedder else None, [p.id for p in pool])
        return selection_key, pool

    def _stored_selection(self, selection_key: str) -> list[str]:
        return [row[0] for row in self.store.db.execute(
            "select prompt_id from selections where selection_key = ? order by position",
            [selection_key])]

    def _select_prompts(self) -> tuple[str, list[Prompt]]:
        t0 = time.perf_counter()
        selection_key, pool = self._pool()
        stored = self._stored_selection(selection_key)
        self.progress.start("prompts", 1, int(bool(stored)))
        if stored:
            by_id = {p.id: p for p in pool}
            chosen = [by_id[pid] for pid in stored]
        else:
            chosen = self._sample(selection_key, pool)
            self.progress.advance("prompts", 1)
        self.progress.finish("prompts")
        self.counts.append(StageCount("prompts", len(chosen), len(chosen) if stored else 0))
        self.timings["prompts"] = time.perf_counter() - t0
        return selection_key, chosen

    def _sample(self, selection_key: str, pool: list[Prompt]) -> list[Prompt]:
        sampler = self.component(self.recipe.sampler)
        embedder = self.component(self.recipe.embedder) if sampler.needs_embeddings else None
        embeddings = embedder.embed_prompts(pool) if embedder else None
        try:
            indices = sampler.sample(pool, embeddings)
        except BadInput as error:
            raise error.located(file=self.recipe.path, field=self.recipe.sampler.field) from None
        chosen = [pool[i] for i in indices]
        with self.store.transaction():
            self._remember(self.component(self.recipe.source), sampler, *filter(None, [embedder]))
            self.store.db["prompts"].insert_all(
                ({"id": p.id, "text": p.text, "meta": dumps(p.meta)} for p in chosen), ignore=True)
            self.store.db["selections"].insert_all(
                ({"selection_key": selection_key, "position": i, "prompt_id": p.id}
                 for i, p in enumerate(chosen)), ignore=True)
        return chosen

    def _generate(self, policy: Component, prompts: list[Prompt], n: int) -> None:
        t0 = time.perf_counter()
        items = [(p, i, response_id(policy.key, p.id, i)) for p in prompts for i in range(n)]
        existing = self.store.existing("select id from responses where policy_key = ?", [policy.key])
        pending = [item for item in items if item[2] not in existing]
        self._remember(policy)
        call = BatchCall(self.recipe.policy, policy, "generate",
                         lambda batch: [(p, i) for p, i, _ in batch])
        self._map_calls("responses", len(items), pending, call,
                        lambda batch, generations: self._write_generations(policy, batch, generations))
        self.timings["responses"] = time.perf_counter() - t0

    def _write_generations(self, policy, batch, generations) -> None:
        if len(generations) != len(batch):
            raise RuntimeError(f"policy {policy.name!r} returned {len(generations)} responses "
                               f"for {len(batch)} requests")
        self.store.insert_batch("responses", [
            {"id": rid, "prompt_id": p.id, "policy_key": policy.key, "sample_index": i,
             "text": g.text, "meta": dumps(g.meta)}
            for (p, i, rid), g in zip(batch, generations)])

    def _label(self, oracle, responses: list[Response]) -> None:
        t0 = time.perf_counter()
        existing = self.store.existing(
            "select response_id from oracle_labels where oracle_key = ?", [oracle.key])
        pending = [r for r in responses if r.id not in existing]
        self._remember(oracle)
        calls = oracle.calls_per_label()

        def write(batch: Sequence[Response], labels: list[OracleLabel]) -> None:
            rows, failures = [], []
            for response, label in zip(batch, labels, strict=True):
                failures.extend({"run_id": self.recipe.run_key, "stage": "oracle labels",
                                 "item_id": response.id, "error": message, "created_at": utc_now()}
                                for message in label.failures)
                if label.failed:  # no usable sample: not stored, so a rerun asks again
                    continue
                if not np.isfinite(label.score):
                    raise BadInput("oracle returned a non-finite score", field=self.recipe.oracle.field,
                                   file=self.recipe.path, value=label.score)
                rows.append({"response_id": response.id, "oracle_key": oracle.key,
                             "score": float(label.score), "samples": json.dumps(list(label.samples)),
                             "cost_usd": label.cost_usd, "prompt_tokens": label.prompt_tokens,
                             "completion_tokens": label.completion_tokens})
            with self.store.transaction():
                self.store.db["oracle_labels"].insert_all(rows, ignore=True)
                self.store.db["failures"].insert_all(failures)
            self.oracle_failures += len(failures)

        call = BatchCall(self.recipe.oracle, oracle, "label",
                         lambda batch: [(self._prompt(r.prompt_id), r) for r in batch])
        self._map_calls("oracle labels", len(responses), pending, call, write, calls_per_item=calls)
        self.timings["oracle labels"] = time.perf_counter() - t0

    def _score(self, spec: ComponentSpec, model, response_ids: list[str]) -> None:
        t0 = time.perf_counter()
        existing = self.store.existing("select response_id from rm_scores where rm_key = ?", [model.key])
        pending = [rid for rid in response_ids if rid not in existing]
        self._remember(model)

        def write(ids: Sequence[str], scores: list[float]) -> None:
            batch = self._load_responses(ids)
            if len(scores) != len(batch):
                raise RuntimeError(f"reward model {spec.label!r} returned {len(scores)} scores "
                                   f"for {len(batch)} responses")
            values = np.asarray(scores, dtype=float)
            bad = np.flatnonzero(~np.isfinite(values))
            if bad.size:
                raise BadInput(f"reward model {spec.label!r} returned a non-finite score for "
                               f"response {batch[bad[0]].id}", file=self.recipe.path,
                               field=spec.field, value=float(values[bad[0]]))
            self.store.insert_batch("rm_scores", [
                {"response_id": r.id, "rm_key": model.key, "score": float(v)}
                for r, v in zip(batch, values)])

        call = BatchCall(spec, model, "score",
                         lambda ids: [(self._prompt(r.prompt_id), r)
                                      for r in self._load_responses(ids)])
        self._map_calls(f"scores: {spec.label}", len(response_ids), pending, call, write)
        self.timings[f"scores: {spec.label}"] = time.perf_counter() - t0
        report = model.report()
        if report:
            with self.store.transaction():
                self.store.db.execute(
                    "update run_reward_models set report = ? where run_id = ? and label = ?",
                    [dumps(report), self.recipe.run_key, spec.label])
            self.rm_reports[spec.label] = report

    def _load_responses(self, ids: Sequence[str]) -> list[Response]:
        """The responses of ``ids``, from memory or (for a resumed run) from the store."""
        missing = [rid for rid in ids if rid not in self.responses]
        for chunk in batched(missing, 500):  # below SQLite's limit on query parameters
            marks = ", ".join("?" * len(chunk))
            for rid, pid, i, text, meta in self.store.db.execute(
                    f"select id, prompt_id, sample_index, text, meta from responses "
                    f"where id in ({marks})", list(chunk)):
                self.responses[rid] = Response(rid, pid, i, text, json.loads(meta))
        return [self.responses[rid] for rid in ids]

    def _start_stage(self, stage: str, total: int, pending: Sequence[Any],
                     calls_per_item: int = 1) -> None:
        self.counts.append(StageCount(stage, total, total - len(pending), calls_per_item))
        self.progress.start(stage, total, total - len(pending))

    def _map(self, stage: str, total: int, pending: Sequence[T],
             write: Callable[[Sequence[T]], None]) -> None:
        """Compute and write ``pending`` batch by batch in this process: for the shift sweep,
        whose batches mix one perturber per level and share perturbed texts across batches."""
        self._start_stage(stage, total, pending)
        for batch in batched(pending, self.recipe.model.batch_size):
            write(batch)
            self.progress.advance(stage, len(batch))
        self.progress.finish(stage)

    def _map_calls(self, stage: str, total: int, pending: Sequence[T], call: BatchCall,
                   write: Callable[[Sequence[T], list[Any]], None], calls_per_item: int = 1) -> None:
        """Have the executor run ``call`` on ``pending`` in batches; ``write`` each batch with its
        outputs as it comes back (in completion order: every item is keyed by content)."""
        self._start_stage(stage, total, pending, calls_per_item)
        tagged = ((batch, call.inputs(batch))
                  for batch in batched(pending, self.recipe.model.batch_size))
        with closing(self.executor.map(call.component, call.method, tagged)) as results:
            while True:
                try:  # only the component's own errors are located at its recipe entry
                    batch, outputs = next(results)
                except StopIteration:
                    break
                except BadInput as error:
                    raise error.located(file=error.file or self.recipe.path,
                                        field=None if error.file else call.spec.field) from None
                write(batch, outputs)
                self.progress.advance(stage, len(batch))
        self.progress.finish(stage)

    # -- reading the benchmark back ---------------------------------------------------
    def _prompt(self, pid: str) -> Prompt:
        prompt = self.prompts.get(pid)
        if prompt is None:
            text, meta = self.store.db.execute("select text, meta from prompts where id = ?",
                                               [pid]).fetchone()
            prompt = self.prompts[pid] = Prompt(pid, text, json.loads(meta))
        return prompt

    def load_benchmark(self, benchmark_id: str) -> Benchmark:
        row = self.store.db["benchmarks"].get(benchmark_id)
        return Benchmark(row["id"], row["title"], row["selection_key"], row["policy_key"],
                         row["per_prompt"], row["oracle_key"], bool(row["simulated"]))

    def _benchmark_responses(self, benchmark: Benchmark) -> list[Response]:
        rows = self.store.db.execute(
            """select r.id, r.prompt_id, r.sample_index, r.text, r.meta
               from selections s join responses r on r.prompt_id = s.prompt_id
               where s.selection_key = ? and r.policy_key = ? and r.sample_index < ?
               order by s.position, r.sample_index""",
            [benchmark.selection_key, benchmark.policy_key, benchmark.per_prompt])
        return [Response(rid, pid, i, text, json.loads(meta)) for rid, pid, i, text, meta in rows]

    def _benchmark_data(self, benchmark: Benchmark) -> BenchmarkData:
        """The benchmark's prompts, responses and oracle scores, for pair sources."""
        oracle = self._oracle_by_prompt(benchmark)
        responses = {r.id: r for r in self._benchmark_responses(benchmark)}
        prompt_ids = tuple(oracle)
        return BenchmarkData(tuple(self._prompt(pid) for pid in prompt_ids),
                             tuple(tuple(responses[rid] for rid in oracle[pid]) for pid in prompt_ids),
                             tuple(np.fromiter(oracle[pid].values(), float) for pid in prompt_ids))

    def _smallest_pool(self, benchmark: Benchmark) -> int:
        return min(len(v) for v in self._oracle_by_prompt(benchmark).values())

    def _oracle_by_prompt(self, benchmark: Benchmark) -> dict[str, dict[str, float]]:
        rows = self.store.db.execute(
            """select r.prompt_id, r.id, l.score
               from selections s join responses r on r.prompt_id = s.prompt_id
               join oracle_labels l on l.response_id = r.id and l.oracle_key = ?
               where s.selection_key = ? and r.policy_key = ? and r.sample_index < ?
               order by s.position, r.sample_index""",
            [benchmark.oracle_key, benchmark.selection_key, benchmark.policy_key, benchmark.per_prompt])
        by_prompt: dict[str, dict[str, float]] = {}
        for pid, rid, score in rows:
            by_prompt.setdefault(pid, {})[rid] = score
        return by_prompt

    # -- metrics ----------------------------------------------------------------------
    def _metrics(self, benchmark: Benchmark | None, pair_set: PairSet | None,
                 shifted: dict[str, dict[float, list[ShiftedPair]]] | None,
                 ) -> tuple[tuple[str, ...], list[tuple[str, ComponentSpec, MetricOutput]]]:
        """Per-RM metrics (benchmark and pairs) for every RM, then run-level metrics with all RMs."""
        t0 = time.perf_counter()
        by_scope = {scope: [m for m in self.recipe.metrics if m.cls.scope == scope]
                    for scope in ("rm", "pairs", "run")}
        outputs = []
        self.progress.start("metrics", len(self.reward_models) * (len(by_scope["rm"])
                            + len(by_scope["pairs"])) + len(by_scope["run"]), 0)
        prompt_ids: tuple[str, ...] = ()
        if benchmark is not None:
            oracle = self._oracle_by_prompt(benchmark)
            prompt_ids = tuple(oracle)
            order = {pid: list(oracle[pid]) for pid in prompt_ids}
            oracle_arrays = tuple(np.fromiter(oracle[pid].values(), float) for pid in prompt_ids)
        scores_by_rm: dict[str, tuple[np.ndarray, ...]] = {}
        for spec, model in self.reward_models:
            scores = dict(self.store.db.execute(
                "select response_id, score from rm_scores where rm_key = ?", [model.key]).fetchall())
            if benchmark is not None:
                scores_by_rm[spec.label] = tuple(np.array([scores[rid] for rid in order[pid]], float)
                                                 for pid in prompt_ids)
                inputs = MetricInputs(prompt_ids, oracle_arrays, scores_by_rm[spec.label])
                for metric_spec in by_scope["rm"]:
                    outputs.append((model.key, metric_spec,
                                    self._compute(metric_spec, inputs, spec.label, prompt_ids)))
            if pair_set is not None:
                inputs = self._pair_inputs(pair_set, shifted, scores)
                for metric_spec in by_scope["pairs"]:
                    outputs.append((model.key, metric_spec, self._compute(
                        metric_spec, inputs, f"{spec.label}'s pairs", inputs.pair_ids)))
        if benchmark is not None:
            study = StudyInputs(prompt_ids, oracle_arrays, scores_by_rm)
            for metric_spec in by_scope["run"]:
                outputs.append((RUN_LEVEL, metric_spec,
                                self._compute(metric_spec, study, "all RMs", prompt_ids)))
        self.progress.finish("metrics")
        self.timings["metrics"] = time.perf_counter() - t0
        return prompt_ids, outputs

    @staticmethod
    def _pair_inputs(pair_set: PairSet, shifted: dict[str, dict[float, list[ShiftedPair]]] | None,
                     scores: dict[str, float]) -> PairInputs:
        """One RM's logits of the pairs, and of their shifted copies at every level."""
        def logits(ids: Iterable[str]) -> np.ndarray:
            return np.fromiter((scores[i] for i in ids), float)

        chosen = logits(p.chosen.id for p in pair_set.pairs)
        rejected = logits(p.rejected.id for p in pair_set.pairs)
        sweep = {target: {0.0: (chosen, rejected),
                          **{level: (logits(s.chosen_id for s in level_pairs),
                                     logits(s.rejected_id for s in level_pairs))
                             for level, level_pairs in by_level.items()}}
                 for target, by_level in (shifted or {}).items()}
        return PairInputs(tuple(pair_set.ids), chosen, rejected,
                          tuple(p.subset for p in pair_set.pairs),
                          tuple(p.meta for p in pair_set.pairs), sweep)

    def _compute(self, metric_spec: ComponentSpec, inputs: MetricInputs | StudyInputs | PairInputs, on: str,
                 prompt_ids: tuple[str, ...]) -> MetricOutput:
        try:
            output = self.component(metric_spec).compute(inputs)
        except MetricInputError as error:
            raise self._locate_metric_error(error, metric_spec, on, prompt_ids) from None
        self.progress.advance("metrics", 1)
        return output

    def _locate_metric_error(self, error: MetricInputError, metric_spec: ComponentSpec, on: str,
                             prompt_ids: tuple[str, ...]) -> BadInput:
        """Name the recipe entry, the RM and the prompt id (not its position) at fault."""
        problem = error.problem
        if error.prompt_index is not None:
            # the metric numbered the prompt by position; say its id instead, once
            problem = problem.replace(f"prompt {error.prompt_index}: ", "", 1)
            problem = f"prompt {prompt_ids[error.prompt_index]}: {problem}"
        field = metric_spec.field
        if error.field in metric_spec.cls.Options.model_fields:
            field += f".{error.field}"
        return BadInput(f"{metric_spec.label} on {on}: {problem}", file=self.recipe.path,
                        field=field, value=error.value)

    # -- run bookkeeping --------------------------------------------------------------
    def _remember(self, *components: Component) -> None:
        for c in components:
            self.store.remember_component(c.key, c.identity(), c.simulated)

    def _start_run(self, run_id: str, benchmark: Benchmark | None, pair_set: PairSet | None,
                   simulated: bool) -> None:
        self.store.db["runs"].upsert({
            "id": run_id, "title": self.recipe.model.title, "recipe_path": self.recipe.path,
            "recipe_text": self.recipe.text, "recipe_json": dumps(self.recipe.model.model_dump(mode="json")),
            "benchmark_id": benchmark.id if benchmark else None,
            "pair_set_key": pair_set.key if pair_set else None,
            "status": "running", "simulated": int(simulated),
            "created_at": utc_now(), "finished_at": None,
            "rmaudit_version": f"rmaudit {__version__}, Python {platform.python_version()}",
            "timings": None, "error": None,
        }, pk="id")
        with self.store.transaction():
            self.store.db.execute("delete from run_reward_models where run_id = ?", [run_id])
            self.store.db["run_reward_models"].insert_all(
                {"run_id": run_id, "position": i, "label": spec.label, "rm_key": model.key}
                for i, (spec, model) in enumerate(self.reward_models))

    def _finish_run(self, run_id: str, prompt_ids: tuple[str, ...],
                    outputs: list[tuple[str, ComponentSpec, MetricOutput]]) -> None:
        db = self.store.db
        with self.store.transaction():
            for table in ("metric_results", "curves", "per_prompt_results"):
                db.execute(f"delete from {table} where run_id = ?", [run_id])
            for rm_key, spec, output in outputs:
                higher = int(spec.cls.higher_is_better)
                base = {"run_id": run_id, "rm_key": rm_key, "metric": spec.label}
                db["metric_results"].insert_all(
                    {**base, "key": v.key, "label": v.label, "params": dumps(v.params),
                     "value": v.value, "stderr": v.stderr, "ci_low": v.ci_low,
                     "ci_high": v.ci_high,
                     "higher_is_better": higher if v.higher_is_better is None else int(v.higher_is_better)}
                    for v in output.values)
                db["per_prompt_results"].insert_all(
                    {**base, "key": v.key, "prompt_id": pid, "value": float(x)}
                    for v in output.values if v.per_prompt is not None
                    for pid, x in zip(prompt_ids, v.per_prompt))
                db["curves"].insert_all(
                    {**base, "key": c.key, "label": c.label, "point": i, "x_label": c.x_label,
                     "x": float(c.x[i]), "value": float(c.value[i]), "stderr": float(c.stderr[i]),
                     "ci_low": float(c.ci_low[i]), "ci_high": float(c.ci_high[i])}
                    for c in output.curves for i in range(len(c.x)))
            db["runs"].update(run_id, {"status": "done", "finished_at": utc_now(),
                                       "timings": json.dumps(self.timings)})
