"""The metrics: per RM on the benchmark (``scope = "rm"``) and on the pairs (``"pairs"``),
then across all RMs (``"run"``); and their results as the store's rows."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rmaudit.components import (
    RUN_LEVEL,
    Metric,
    MetricInputs,
    MetricOutput,
    StudyInputs,
)
from rmaudit.components.vocabulary import SKIPPED_STAGE
from rmaudit.errors import BadInput, MetricInputError
from rmaudit.recipe import ComponentSpec, metric_entry
from rmaudit.store import utc_now
from rmaudit.store.metric_results import MetricResults, ResultRows
from rmaudit.store.records import CurvePointRow, PerPromptRow, RunFailure

from . import verdicts
from .benchmark import Benchmark
from .context import RunContext, slot_class
from .design_inputs import design_notes
from .metric_digest import inputs_digest, metric_digest
from .metric_inputs import (
    AnyInputs,
    ReadOnUse,
    StoredScores,
    benchmark_arrays,
    pair_inputs,
    rm_inputs,
    scored_ids,
)
from .pairs import PairSet
from .shift import Sweep

STAGE = "metrics"


def compute(
    ctx: RunContext, benchmark: Benchmark | None, pair_set: PairSet | None, shifted: Sweep | None
) -> list[MetricResults]:
    """Every metric's results, in the order the run stores them: reused where the store has
    results computed from the same inputs, code and options (:mod:`.metric_digest`).  The
    RMs' scores are read only where a metric is computed, or pairs or a label design need
    them: a benchmark metric's digest names them by the RM's key."""
    recipe = ctx.recipe
    reward_models = [(spec, ctx.component(spec)) for spec in recipe.reward_models]
    by_scope = {
        scope: [m for m in recipe.metrics if slot_class(m, Metric).scope == scope]
        for scope in ("rm", "pairs", "run")
    }
    ctx.progress.start(
        STAGE,
        len(reward_models) * (len(by_scope["rm"]) + len(by_scope["pairs"])) + len(by_scope["run"]),
        0,
    )
    arrays = benchmark_arrays(ctx, benchmark)
    ledger = Ledger(ctx, arrays.prompt_ids)
    on_defined = (
        MetricsOnDefinedPrompts(ctx, arrays.prompt_ids, arrays.oracle)
        if benchmark is not None
        else None
    )
    # a pairwise judge has verdicts on pairs, no response scores: pair metrics only
    scored = {spec.label: model.key for spec, model in reward_models if not model.judges_pairs()}
    ids = scored_ids(arrays.order, pair_set, shifted)
    scores = StoredScores(ctx, scored, ids, arrays.prompt_ids, arrays.order)
    for spec, model in reward_models:
        if on_defined is not None and spec.label in scored:
            inputs = rm_inputs(scores, spec.label, arrays)
            for metric_spec in by_scope["rm"]:
                if (
                    arrays.design is not None
                    and not slot_class(metric_spec, Metric).supports_label_budget
                ):
                    continue  # said once below
                ledger.measure(model.key, metric_spec, inputs, on_defined, spec.label)
        if pair_set is not None:
            on_pairs = (
                verdicts.pair_inputs(ctx, spec.label, model, pair_set, shifted)
                if model.judges_pairs()
                else pair_inputs(pair_set, shifted, scores.by_id(spec.label))
            )
            for m in by_scope["pairs"]:
                ledger.measure(model.key, m, on_pairs, None, f"{spec.label}'s pairs")
    if arrays.design is not None and benchmark is not None:
        ctx.notes.extend(design_notes(benchmark, arrays.oracle, scores.by_prompt()))
        ctx.notes.extend(_unbudgeted_notes([*by_scope["rm"], *by_scope["run"]]))
        by_scope["run"] = [
            m for m in by_scope["run"] if slot_class(m, Metric).supports_label_budget
        ]
    if on_defined is not None:
        # what the study is made of beside the RMs' scores (named by their keys)
        study = ReadOnUse(
            (arrays, scored),
            lambda: StudyInputs(arrays.prompt_ids, arrays.oracle, scores.by_prompt()),
        )
        for metric_spec in by_scope["run"]:
            ledger.measure(RUN_LEVEL, metric_spec, study, on_defined, "all RMs")
        on_defined.record()
    ctx.progress.finish(STAGE)
    return ledger.results


class Ledger:
    """Each metric's results in run order: the stored rows of results computed from the same
    digest (this run's, else another run's), or computed now."""

    def __init__(self, ctx: RunContext, prompt_ids: tuple[str, ...]) -> None:
        self.ctx, self.prompt_ids = ctx, prompt_ids
        self.results: list[MetricResults] = []
        #: the digest of what each inputs object is made of, which metrics share
        self._digests: dict[int, tuple[object, str | None]] = {}

    def measure(
        self,
        rm_key: str,
        metric_spec: ComponentSpec,
        inputs: AnyInputs | ReadOnUse,
        on_defined: MetricsOnDefinedPrompts | None,
        on: str,
    ) -> None:
        """One metric for one RM (``on``: which, in an error), on its defined prompts when
        ``on_defined`` is given (those it skips are counted whether it is computed or not)."""
        ctx, label = self.ctx, metric_spec.label
        if on_defined is not None:
            on_defined.undefined(metric_spec)
        made_of = inputs.made_of if isinstance(inputs, ReadOnUse) else inputs
        if id(made_of) not in self._digests:
            self._digests[id(made_of)] = (made_of, inputs_digest(made_of))
        digest = metric_digest(
            ctx.component(metric_spec), label, rm_key, self._digests[id(made_of)][1]
        )
        found = digest and ctx.db.runs.metric_digests.stored(
            ctx.recipe.run_key, rm_key, label, digest
        )
        if found:
            ctx.progress.advance(STAGE, 1)
            self.results.append(
                MetricResults(rm_key, label, digest, found.computed_at, reused=found)
            )
            return
        if isinstance(inputs, ReadOnUse):
            inputs = inputs.inputs()
        output = (
            on_defined.compute(metric_spec, inputs, on)  # type: ignore[arg-type]
            if on_defined is not None
            else _compute(ctx, metric_spec, inputs, on, self.prompt_ids)
        )
        rows = result_rows(ctx.recipe.run_key, self.prompt_ids, rm_key, metric_spec, output)
        self.results.append(MetricResults(rm_key, label, digest, utc_now(), rows))


def _unbudgeted_notes(metrics: list[ComponentSpec]) -> list[str]:
    """A note for each metric a label design leaves out: it has no estimator for one."""
    return [
        f"{m.label}: not computed: it needs every response labelled (docs/budget.md)"
        for m in metrics
        if not slot_class(m, Metric).supports_label_budget
    ]


def undefined_prompts(
    ctx: RunContext, metric_spec: ComponentSpec, oracle: tuple[np.ndarray, ...]
) -> dict[int, str]:
    return ctx.component(metric_spec).undefined_prompts(oracle)


def skip_lines(metric_label: str, reasons: dict[int, str], total: int) -> list[str]:
    """ "pairwise acc: 7 of 805 prompts skipped: all oracle scores equal", one line a reason."""
    counts: dict[str, int] = {}
    for reason in reasons.values():
        counts[reason] = counts.get(reason, 0) + 1
    return [
        f"{metric_label}: {n} of {total} prompts skipped: {reason}" for reason, n in counts.items()
    ]


class MetricsOnDefinedPrompts:
    """Each benchmark metric computed on the prompts it is defined on; the others are counted
    once per metric (they depend on the oracle scores only, not on the RM)."""

    def __init__(
        self, ctx: RunContext, prompt_ids: tuple[str, ...], oracle: tuple[np.ndarray, ...]
    ) -> None:
        self.ctx, self.prompt_ids, self.oracle = ctx, prompt_ids, oracle
        self.by_metric: dict[str, tuple[ComponentSpec, dict[int, str]]] = {}

    def undefined(self, metric_spec: ComponentSpec) -> dict[int, str]:
        """The prompts the metric is undefined on (by position), with the reason; counted."""
        if metric_spec.label not in self.by_metric:
            self.by_metric[metric_spec.label] = (
                metric_spec,
                undefined_prompts(self.ctx, metric_spec, self.oracle),
            )
        return self.by_metric[metric_spec.label][1]

    def compute(
        self, metric_spec: ComponentSpec, inputs: MetricInputs | StudyInputs, on: str
    ) -> MetricOutput | None:
        """The metric on its defined prompts, per-prompt values back in benchmark order (NaN
        where skipped); None when it is defined on none."""
        undefined = self.undefined(metric_spec)
        if not undefined:
            return _compute(self.ctx, metric_spec, inputs, on, self.prompt_ids)
        kept = np.array([q for q in range(len(self.prompt_ids)) if q not in undefined], int)
        if kept.size == 0:
            self.ctx.progress.advance(STAGE, 1)
            return None
        ids = tuple(self.prompt_ids[q] for q in kept)
        oracle = tuple(inputs.oracle[q] for q in kept)
        subset: MetricInputs | StudyInputs
        if isinstance(inputs, StudyInputs):
            subset = StudyInputs(
                ids,
                oracle,
                {rm: tuple(scores[q] for q in kept) for rm, scores in inputs.scores.items()},
            )
        else:
            design = None if inputs.design is None else inputs.design.on_prompts(kept)
            subset = MetricInputs(ids, oracle, tuple(inputs.scores[q] for q in kept), design)
        output = _compute(self.ctx, metric_spec, subset, on, ids)
        for i, value in enumerate(output.values):
            if value.per_prompt is not None:
                full = np.full(len(self.prompt_ids), np.nan)
                full[kept] = value.per_prompt
                output.values[i] = replace(value, per_prompt=full)
        return output

    def record(self) -> None:
        """Every skipped prompt in ``failures`` (item: the prompt id), and a note per reason."""
        ctx, rows, total = self.ctx, [], len(self.prompt_ids)
        for label, (_, undefined) in self.by_metric.items():
            ctx.notes.extend(skip_lines(label, undefined, total))
            rows += [
                RunFailure(self.prompt_ids[q], f"{label}: {reason}")
                for q, reason in undefined.items()
            ]
        ctx.db.runs.replace_failures(ctx.recipe.run_key, SKIPPED_STAGE, rows)


def _compute(
    ctx: RunContext,
    metric_spec: ComponentSpec,
    inputs: AnyInputs,
    on: str,
    prompt_ids: tuple[str, ...],
) -> MetricOutput:
    try:
        output = ctx.component(metric_spec).compute(inputs)
    except MetricInputError as error:
        raise _located(ctx, error, metric_spec, on, prompt_ids) from None
    ctx.progress.advance(STAGE, 1)
    return output


def _located(
    ctx: RunContext,
    error: MetricInputError,
    metric_spec: ComponentSpec,
    on: str,
    prompt_ids: tuple[str, ...],
) -> BadInput:
    """Name the recipe entry, the RM and the prompt id (not its position) at fault."""
    problem = error.problem
    if error.prompt_index is not None:
        # the metric numbered the prompt by position; say its id instead, once
        problem = problem.replace(f"prompt {error.prompt_index}: ", "", 1)
        problem = f"prompt {prompt_ids[error.prompt_index]}: {problem}"
    field = metric_spec.field
    if error.field in metric_spec.cls.Options.model_fields:
        field += f".{error.field}"
    return BadInput(
        f"{metric_spec.label} on {on}: {problem}",
        file=ctx.recipe.path,
        field=metric_entry(ctx.recipe, field),
        value=error.value,
    )


# -- results as rows -------------------------------------------------------------------------
def result_rows(
    run_id: str,
    prompt_ids: tuple[str, ...],
    rm_key: str,
    spec: ComponentSpec,
    output: MetricOutput | None,
) -> ResultRows:
    """One metric's output as rows of each result table (none: defined on no prompt)."""
    if output is None:
        return ResultRows()
    higher = slot_class(spec, Metric).higher_is_better
    head = (run_id, rm_key, spec.label)
    return ResultRows(
        tuple(
            replace(
                v,
                per_prompt=None,  # stored as per_prompt_results' rows
                higher_is_better=higher if v.higher_is_better is None else v.higher_is_better,
                rm_key=rm_key,
                metric=spec.label,
            )
            for v in output.values
        ),
        tuple(
            PerPromptRow(*head, v.key, pid, float(x))
            for v in output.values
            if v.per_prompt is not None
            for pid, x in zip(prompt_ids, v.per_prompt, strict=True)
            if np.isfinite(x)  # NaN: a prompt the metric skipped
        ),
        tuple(
            CurvePointRow(
                *head,
                c.key,
                c.label,
                i,
                c.x_label,
                float(c.x[i]),
                float(c.value[i]),
                float(c.stderr[i]),
                float(c.ci_low[i]),
                float(c.ci_high[i]),
            )
            for c in output.curves
            for i in range(len(c.x))
        ),
    )
