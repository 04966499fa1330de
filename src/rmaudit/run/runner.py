"""The runner: the order of the stages, and the run's bookkeeping (docs/architecture.md,
"A run, stage by stage").

    prompts ─► responses ─► oracle labels ─┐            (or an imported benchmark file)
    preference pairs ─► shifted pairs ─────┴─► RM scores (per RM) ─► metrics

A recipe audits a benchmark, preference pairs (from a file, or derived from the benchmark),
or both.  Every stage computes the keys of the items it should have stored and asks the
store which exist (:mod:`rmaudit.run.context`); a run then makes the rest, a plan
(``--dry-run``) stops there.  Both walk the stages below, so a plan counts what the run does.
A rerun therefore does no stored work twice, a killed run resumes where it stopped, and a new
RM on an old benchmark only scores.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rmaudit import __version__
from rmaudit.components import Component, Metric, Prompt, PromptSampler, Response
from rmaudit.components.scoring_checks import CheckSettings
from rmaudit.errors import BadInput
from rmaudit.recipe import Recipe
from rmaudit.run.provenance import run_provenance
from rmaudit.store import Store, utc_now
from rmaudit.store.records import RunFailure, RunRewardModel, RunRow

from . import benchmark as benchmark_stages
from . import (
    metrics,
    pairs,
    scores,
    scoring_checks,
    shift,
    solutions,
    step_metrics,
    step_scores,
    verdicts,
)
from .benchmark import Benchmark, BenchmarkStages
from .context import (
    MAX_ITEMS_VARIABLE,
    Keys,
    Progress,
    RunContext,
    SilentProgress,
    StageCount,
    locate,
    max_items,
    required,
    slot_class,
)
from .pairs import PairSet
from .shift import Sweep
from .solutions import SolutionSet


@dataclass
class RunResult:
    run_id: str
    benchmark: Benchmark | None
    counts: list[StageCount]
    simulated: bool
    timings: dict[str, float] = field(default_factory=dict)
    #: Lines the CLI prints after the run (e.g. how many pair records were rejected, and why).
    notes: list[str] = field(default_factory=list)


@dataclass
class Audited:
    """What the item stages before scoring leave: the benchmark, the pairs, the sweep and the
    ids of every response to score."""

    benchmark: Benchmark | None = None
    pair_set: PairSet | None = None
    shifted: Sweep | None = None
    to_score: Keys = field(default_factory=Keys)
    #: those of them not made by the shift sweep, which a plan cannot know: the scoring
    #: checks draw their sample from these
    unshifted: Keys = field(default_factory=Keys)
    #: in a plan whose pairs derive from a benchmark not built yet: at most this many pairs
    pair_bound: int | None = None
    #: the solutions process reward models score (a recipe with [solutions])
    solution_set: SolutionSet | None = None


def build_components(recipe: Recipe) -> dict[str, Component]:
    """Build every component of a recipe, keyed by its recipe field.

    Done before the store is opened: a component that rejects its options or data files
    (a missing file, a NaN in a scores file) does so before anything is written.
    """
    slots = [
        recipe.source,
        recipe.sampler,
        recipe.policy,
        recipe.oracle,
        recipe.cheap_oracle,
        recipe.benchmark_source,
        recipe.pair_source,
        recipe.perturber,
        recipe.solution_source,
        *recipe.reward_models,
        *recipe.process_reward_models,
        *recipe.metrics,
    ]
    if recipe.sampler is not None and slot_class(recipe.sampler, PromptSampler).needs_embeddings:
        slots.append(recipe.embedder)
    components = {}
    for spec in filter(None, slots):
        try:
            components[spec.field] = spec.build()
        except BadInput as error:
            raise locate(error, recipe, spec) from None
    return components


class Runner:
    def __init__(
        self,
        recipe: Recipe,
        store: Store | None,
        progress: Progress | None = None,
        components: dict[str, Component] | None = None,
        checks: CheckSettings | None = None,
    ) -> None:
        self.recipe = recipe
        self.ctx = RunContext(
            recipe,
            store,
            components if components is not None else build_components(recipe),
            progress or SilentProgress(),
            checks=checks or CheckSettings(),
        )
        #: the file the last plan read (``Store.birth_mark``)
        self._planned_on: tuple[int, int, str] | None = None

    def plan(self) -> list[StageCount]:
        """Count the items of every stage and how many are already stored, and make none:
        the run's own stages, stopped before they sample, generate, label, perturb or score."""
        self.ctx.counts, self.ctx.prescored, self.ctx.pending = [], {}, {}
        self._planned_on = self.ctx.store.birth_mark() if self.ctx.store is not None else None
        self._score(self._items(execute=False), execute=False)
        return self.ctx.counts

    def preflight(self) -> list[StageCount]:
        """The plan, as every run starts: every input is loaded and checked (data files, k
        against the pool) and the size is held to ``max_items()``, before a DB is opened for
        writing.  The run that follows reuses what the plan loaded."""
        self.ctx.strict = True
        counts = self.plan()
        limit = max_items()
        for count in counts:
            size = count.total * count.calls_per_item
            if size > limit:
                raise BadInput(
                    f"the plan's stage {count.stage!r} has {size:,} items"
                    f"{' (calls)' if count.calls_per_item > 1 else ''}, above the "
                    f"limit of {limit:,}; check the sizes, or raise the limit with "
                    f"{MAX_ITEMS_VARIABLE}={size}",
                    file=self.recipe.path,
                )
        return counts

    def attach(self, store: Store) -> None:
        """The store the run writes (after a :meth:`preflight` on a read-only one).  What the
        plan found stored is still stored if it is the same file (nothing deletes an item);
        another file, or one made anew since, is asked about every item again."""
        if self._planned_on is None or store.birth_mark() != self._planned_on:
            self.ctx.found_stored.clear()
        self.ctx.store = store

    def planned_skips(self) -> list[str]:
        """After :meth:`plan`: the prompts each benchmark metric will skip, where the labels are
        known before any work (a benchmark read from files), one line per metric and reason."""
        oracle = self.ctx.planned_oracle
        if oracle is None:
            return []
        return [
            line
            for spec in self.recipe.metrics
            if slot_class(spec, Metric).scope in ("rm", "run")
            for line in metrics.skip_lines(
                spec.label, metrics.undefined_prompts(self.ctx, spec, oracle), len(oracle)
            )
        ]

    def pending_texts(self) -> dict[str, list[tuple[str, str]]]:
        """After :meth:`plan`: per scores stage, the (prompt, response) texts of its pending
        responses that are known before the run (stored, or read from files; a response not
        generated yet is left out): what a rating judge will be shown."""
        return {
            stage: [(p.text, r.text) for p, r in self.ctx.known_items(ids)]
            for stage, ids in self.ctx.pending.items()
        }

    def run(self) -> RunResult:
        try:
            return self._run()
        finally:
            self.ctx.executor.close()  # a Ray instance this run started stops with it

    def items_to_score(self) -> list[tuple[Prompt, Response]]:
        """Every (prompt, response) a reward model of this recipe would score — the
        benchmark's, the pairs', the shifted copies — made and stored as a run makes them, for
        scores computed elsewhere; nothing is scored and no run is recorded."""
        ctx = self.ctx
        ctx.counts, ctx.timings, ctx.notes, ctx.prescored = [], {}, [], {}
        try:
            ids = self._items(execute=True).to_score.known
        finally:
            ctx.executor.close()
        return [(ctx.prompt(r.prompt_id), r) for r in ctx.load_responses(ids)]

    def solutions_to_score(self) -> SolutionSet:
        """The solutions a process reward model of this recipe would score, stored as a run
        stores them, for step scores computed elsewhere; nothing is scored, no run recorded."""
        ctx = self.ctx
        ctx.counts, ctx.timings, ctx.notes = [], {}, []
        return required(self._items(execute=True).solution_set, "[solutions]")

    # -- the stages ---------------------------------------------------------------------------
    def _items(self, execute: bool) -> Audited:
        recipe, found = self.recipe, Audited()
        if recipe.solution_source is not None:
            found.solution_set = solutions.stage(self.ctx, execute)
            return found
        built: BenchmarkStages | None = None
        if recipe.imports_benchmark:
            built = benchmark_stages.imported(self.ctx, execute)
        elif recipe.source is not None:
            built = benchmark_stages.build(self.ctx, execute)
        if built is not None:
            found.benchmark, found.to_score = built.benchmark, built.response_ids
            found.unshifted = found.to_score
        if recipe.pair_source is not None:
            paired = pairs.stage(self.ctx, built, execute)
            found.pair_set, found.pair_bound = paired.pair_set, paired.bound
            if paired.pair_set is not None:
                found.to_score += paired.pair_set.response_ids()
            found.unshifted = found.to_score
            if recipe.perturber is not None:
                found.shifted, shifted_ids = shift.stage(
                    self.ctx, paired, built.response_ids.total if built else 0, execute
                )
                found.to_score += shifted_ids
        return found

    def _score(self, found: Audited, execute: bool) -> None:
        """Every RM's (or PRM's) stage, after every model-backed one's scoring checks (in a
        plan only before a run: ``Runner.preflight``)."""
        if found.solution_set is not None:
            self._score_steps(found.solution_set, execute)
            return
        models = [(spec, self.ctx.component(spec)) for spec in self.recipe.reward_models]
        checked = self._checked(
            lambda: [
                scores.target(self.ctx, spec, model, found.to_score, found.unshifted)
                for spec, model in models
                if not model.judges_pairs()
            ],
            execute,
        )
        # every pairwise judge judges the same pairs
        judged = found.pair_set and verdicts.pair_ids(found.pair_set, found.shifted)
        for spec, model in models:
            if model.judges_pairs():  # a pairwise judge: pairs, in both orders, not responses
                verdicts.check_recipe(self.ctx, spec)
                bound = verdicts.showings_bound(self.ctx, found.pair_bound)
                shown = found.pair_set if self.ctx.strict and not found.shifted else None
                verdicts.stage(self.ctx, spec, model, judged or None, execute, bound, shown)
            else:
                scores.stage(
                    self.ctx, spec, model, found.to_score, execute, checked.get(spec.label)
                )

    def _score_steps(self, solution_set: SolutionSet, execute: bool) -> None:
        """Every PRM's stage, after every model-backed PRM's scoring checks."""
        models = [(spec, self.ctx.component(spec)) for spec in self.recipe.process_reward_models]
        checked = self._checked(
            lambda: [
                step_scores.target(self.ctx, spec, model, solution_set) for spec, model in models
            ],
            execute,
        )
        for spec, model in models:
            step_scores.stage(self.ctx, spec, model, solution_set, execute, checked.get(spec.label))

    def _checked(
        self, targets: Callable[[], list[scoring_checks.ScoresToCheck]], execute: bool
    ) -> dict[str, scoring_checks.Checked]:
        """The scoring checks of the stages' ``targets``, by label: in a run, and in the
        plan before one; a plan alone (a dry run) reads nothing for them."""
        if not (execute or self.ctx.strict):
            return {}
        checked = scoring_checks.check_models(self.ctx, targets(), execute)
        if execute:  # passed: what --strict held for them is written (Store.hold)
            self.ctx.db.commit_held()
        return checked

    # -- the whole run ------------------------------------------------------------------------
    def _run(self) -> RunResult:
        started = time.perf_counter()
        ctx, run_id = self.ctx, self.recipe.run_key
        ctx.counts, ctx.timings, ctx.notes, ctx.prescored = [], {}, [], {}
        simulated = any(
            c.simulated
            for c in ctx.components.values()
            if c.kind in ("prompt_source", "reward_model")
        )
        if ctx.checks.strict:  # a --strict stop writes nothing, as in the plan
            ctx.db.hold()
        # recorded before the benchmark is built, so a run that fails building it is listed
        self._start(run_id, Audited(), simulated)
        try:
            found = self._items(execute=True)
            sources = run_provenance(
                self.recipe, ctx.components, ctx.benchmark_content, ctx.benchmark_header
            )
            simulated = (found.benchmark is not None and found.benchmark.simulated) or any(
                p.simulated for p in sources
            )
            self._start(run_id, found, simulated)
            ctx.db.runs.set_sources(run_id, (p.row() for p in sources))
            if found.pair_set is not None:
                ctx.db.runs.replace_failures(
                    run_id,
                    pairs.STAGE,
                    [RunFailure(r.where, r.one_line()) for r in found.pair_set.rejected],
                )
                ctx.notes.append(found.pair_set.report())
            if found.solution_set is not None and (repeats := found.solution_set.repeats()):
                ctx.notes.append(repeats)
            self._score(found, execute=True)
            with ctx.timed(metrics.STAGE):
                results = (
                    step_metrics.compute(ctx, found.solution_set)
                    if found.solution_set is not None
                    else metrics.compute(ctx, found.benchmark, found.pair_set, found.shifted)
                )
            ctx.timings["total"] = time.perf_counter() - started
            ctx.db.runs.finish(run_id, results, ctx.timings, utc_now())
        except BaseException as error:
            if ctx.db.held:  # --strict, stopped before its checks passed: nothing is written
                ctx.db.rollback_held()
                raise
            status = "interrupted" if isinstance(error, KeyboardInterrupt) else "failed"
            reason = str(error) or type(error).__name__
            try:
                ctx.db.runs.stop(run_id, status, reason, utc_now())
            except Exception:  # the file itself failed (corrupted, disk full): report the cause
                pass
            raise
        return RunResult(run_id, found.benchmark, ctx.counts, simulated, ctx.timings, ctx.notes)

    def _start(self, run_id: str, found: Audited, simulated: bool) -> None:
        recipe = self.recipe
        ctx = self.ctx
        ctx.db.runs.start(
            RunRow(
                id=run_id,
                title=recipe.model.title,
                recipe_path=recipe.path,
                recipe_text=recipe.text,
                recipe=recipe.model.model_dump(mode="json"),
                benchmark_id=found.benchmark.id if found.benchmark else None,
                pair_set_key=found.pair_set.key if found.pair_set else None,
                status="running",
                simulated=simulated,
                created_at=utc_now(),
                finished_at=None,
                rmaudit_version=f"rmaudit {__version__}, Python {platform.python_version()}",
                timings=None,
                error=None,
                solution_set_key=found.solution_set.key if found.solution_set else None,
            ),
            [
                RunRewardModel(spec.label, ctx.component(spec).key)
                for spec in (*recipe.reward_models, *recipe.process_reward_models)
            ],
        )
