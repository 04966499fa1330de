"""The runner: stages as resumable batch maps over content-addressed items (DESIGN.md).

    prompts ─► selection ─► responses ─► oracle labels ─► RM scores (per RM) ─► metrics

Each item stage computes the keys of every item it should produce, asks the store which
already exist, and maps the component over the rest in batches; each batch is written
in one transaction.  A rerun therefore does no stored work twice, a killed run resumes
where it stopped, and a new RM on an old benchmark only scores.
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np

from rmaudit import __version__
from rmaudit.components import (RUN_LEVEL, Component, MetricInputs, MetricOutput, Prompt, Response,
                                StudyInputs)
from rmaudit.errors import BadInput, MetricInputError
from rmaudit.hashing import content_key, prompt_id, response_id
from rmaudit.recipe import ComponentSpec, Recipe, check_pool_size
from rmaudit.store import Store, dumps, utc_now
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
class RunResult:
    run_id: str
    benchmark: Benchmark
    counts: list[StageCount]
    simulated: bool
    timings: dict[str, float] = field(default_factory=dict)


def batched(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def build_components(recipe: Recipe) -> dict[str, Component]:
    """Build every component of a recipe, keyed by its recipe field.

    Done before the store is opened: a component that rejects its options or data files
    (a missing file, a NaN in a scores file) does so before anything is written.
    """
    slots = [recipe.source, recipe.sampler, recipe.policy, recipe.oracle, *recipe.reward_models,
             *recipe.metrics]
    if recipe.sampler is not None and recipe.sampler.cls.needs_embeddings:
        slots.append(recipe.embedder)
    components = {}
    for spec in filter(None, slots):
        try:
            components[spec.field] = spec.build()
        except BadInput as error:
            raise error.located(file=error.file or recipe.path, field=spec.field) from None
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
        self.components = components if components is not None else build_components(recipe)
        self.reward_models = [(spec, self.components[spec.field]) for spec in recipe.reward_models]

    def component(self, spec: ComponentSpec | None) -> Component:
        return self.components[spec.field]

    # -- the plan (--dry-run): what a run would do, without writing anything ------------
    def plan(self) -> list[StageCount]:
        """Count the items of every stage and how many are already stored."""
        counts: list[StageCount] = []
        if self.recipe.benchmark_file is not None:
            header, records = read_benchmark(self.recipe.benchmark_file)
            response_ids = [response_id(header["policy_key"], prompt_id(rec["prompt"]["text"]),
                                        resp["sample_index"])
                            for rec in records for resp in rec["responses"]]
            counts.append(StageCount("prompts (imported)", len(records), len(records)))
            counts.append(StageCount("responses (imported)", len(response_ids), len(response_ids)))
        else:
            selection_key, pool = self._pool()
            stored = self._stored_selection(selection_key) if self.store else []
            sampler = self.component(self.recipe.sampler)
            k = len(stored) if stored else sampler.planned_size(len(pool))
            counts.append(StageCount("prompts", k, len(stored)))
            policy, oracle = self.component(self.recipe.policy), self.component(self.recipe.oracle)
            n = self.recipe.per_prompt
            response_ids = [response_id(policy.key, pid, i) for pid in stored for i in range(n)]
            total = k * n
            counts.append(StageCount("responses", total, self._count_stored(
                "select id from responses where policy_key = ?", policy.key, response_ids)))
            counts.append(StageCount("oracle labels", total, self._count_stored(
                "select response_id from oracle_labels where oracle_key = ?", oracle.key,
                response_ids), oracle.calls_per_label()))
        for spec, model in self.reward_models:
            counts.append(StageCount(f"scores: {spec.label}", len(response_ids) or counts[-1].total,
                                     self._count_stored(
                                         "select response_id from rm_scores where rm_key = ?",
                                         model.key, response_ids)))
        return counts

    def _count_stored(self, sql: str, key: str, ids: list[str]) -> int:
        if self.store is None or not ids:
            return 0
        return len(self.store.existing(sql, [key]).intersection(ids))

    # -- the whole run ----------------------------------------------------------------
    def run(self) -> RunResult:
        started = time.perf_counter()
        benchmark, responses = self._benchmark()
        simulated = benchmark.simulated or any(m.simulated for _, m in self.reward_models)
        run_id = self.recipe.run_key
        self._start_run(run_id, benchmark, simulated)
        try:
            for spec, model in self.reward_models:
                self._score(spec, model, responses)
            prompt_ids, outputs = self._metrics(benchmark)
            self.timings["total"] = time.perf_counter() - started
            self._finish_run(run_id, prompt_ids, outputs)
        except BaseException as error:
            status = "interrupted" if isinstance(error, KeyboardInterrupt) else "failed"
            self.store.db["runs"].update(run_id, {"status": status, "error": str(error),
                                                  "finished_at": utc_now()})
            raise
        return RunResult(run_id, benchmark, self.counts, simulated, self.timings)

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
            id=content_key("benchmark", selection_key, policy.key, n, oracle.key),
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
        embeddings = embedder.embed([p.text for p in pool]) if embedder else None
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
        self._map("responses", len(items), pending, lambda batch: self._write_generations(policy, batch))
        self.timings["responses"] = time.perf_counter() - t0

    def _write_generations(self, policy, batch) -> None:
        generations = policy.generate([(p, i) for p, i, _ in batch])
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

        def write(batch: Sequence[Response]) -> None:
            labels = oracle.label([(self._prompt(r.prompt_id), r) for r in batch])
            rows = []
            for response, label in zip(batch, labels, strict=True):
                if not np.isfinite(label.score):
                    raise BadInput("oracle returned a non-finite score", field=self.recipe.oracle.field,
                                   file=self.recipe.path, value=label.score)
                rows.append({"response_id": response.id, "oracle_key": oracle.key,
                             "score": float(label.score), "samples": json.dumps(list(label.samples)),
                             "cost_usd": label.cost_usd, "prompt_tokens": label.prompt_tokens,
                             "completion_tokens": label.completion_tokens})
            self.store.insert_batch("oracle_labels", rows)

        self._map("oracle labels", len(responses), pending, write, calls_per_item=calls)
        self.timings["oracle labels"] = time.perf_counter() - t0

    def _score(self, spec: ComponentSpec, model, responses: list[Response]) -> None:
        t0 = time.perf_counter()
        existing = self.store.existing("select response_id from rm_scores where rm_key = ?", [model.key])
        pending = [r for r in responses if r.id not in existing]
        self._remember(model)

        def write(batch: Sequence[Response]) -> None:
            try:
                scores = model.score([(self._prompt(r.prompt_id), r) for r in batch])
            except BadInput as error:
                raise error.located(file=error.file or self.recipe.path,
                                    field=None if error.file else spec.field) from None
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

        self._map(f"scores: {spec.label}", len(responses), pending, write)
        self.timings[f"scores: {spec.label}"] = time.perf_counter() - t0

    def _map(self, stage: str, total: int, pending: Sequence[T], write: Callable[[Sequence[T]], None],
             calls_per_item: int = 1) -> None:
        self.counts.append(StageCount(stage, total, total - len(pending), calls_per_item))
        self.progress.start(stage, total, total - len(pending))
        for batch in batched(pending, self.recipe.model.batch_size):
            write(batch)
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
    def _metrics(self, benchmark: Benchmark) -> tuple[tuple[str, ...], list[tuple[str, ComponentSpec, MetricOutput]]]:
        """Per-RM metrics for every RM, then run-level metrics with all RMs at once."""
        t0 = time.perf_counter()
        oracle = self._oracle_by_prompt(benchmark)
        prompt_ids = tuple(oracle)
        order = {pid: list(oracle[pid]) for pid in prompt_ids}
        oracle_arrays = tuple(np.fromiter(oracle[pid].values(), float) for pid in prompt_ids)
        per_rm = [m for m in self.recipe.metrics if m.cls.scope == "rm"]
        per_run = [m for m in self.recipe.metrics if m.cls.scope == "run"]
        outputs = []
        self.progress.start("metrics", len(self.reward_models) * len(per_rm) + len(per_run), 0)
        scores_by_rm: dict[str, tuple[np.ndarray, ...]] = {}
        for spec, model in self.reward_models:
            scores = dict(self.store.db.execute(
                "select response_id, score from rm_scores where rm_key = ?", [model.key]).fetchall())
            scores_by_rm[spec.label] = tuple(np.array([scores[rid] for rid in order[pid]], float)
                                             for pid in prompt_ids)
            inputs = MetricInputs(prompt_ids, oracle_arrays, scores_by_rm[spec.label])
            for metric_spec in per_rm:
                outputs.append((model.key, metric_spec,
                                self._compute(metric_spec, inputs, spec.label, prompt_ids)))
        study = StudyInputs(prompt_ids, oracle_arrays, scores_by_rm)
        for metric_spec in per_run:
            outputs.append((RUN_LEVEL, metric_spec,
                            self._compute(metric_spec, study, "all RMs", prompt_ids)))
        self.progress.finish("metrics")
        self.timings["metrics"] = time.perf_counter() - t0
        return prompt_ids, outputs

    def _compute(self, metric_spec: ComponentSpec, inputs: MetricInputs | StudyInputs, on: str,
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
            problem = problem.removeprefix(f"prompt {error.prompt_index}: ")
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

    def _start_run(self, run_id: str, benchmark: Benchmark, simulated: bool) -> None:
        self.store.db["runs"].upsert({
            "id": run_id, "title": self.recipe.model.title, "recipe_path": self.recipe.path,
            "recipe_text": self.recipe.text, "recipe_json": dumps(self.recipe.model.model_dump(mode="json")),
            "benchmark_id": benchmark.id, "status": "running", "simulated": int(simulated),
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
                     "ci_high": v.ci_high, "higher_is_better": higher} for v in output.values)
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
