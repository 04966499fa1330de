"""Paired comparisons read back from stored runs: every headline metric's per-unit values per
model, matched across models (and runs) by their item keys, and compared by
:func:`rmaudit.metrics.paired.compare_models` (docs/metrics.md, "Comparing models").

The units are what the stored number averages: a prompt for the benchmark metrics (RETA,
best-of-n, pairwise accuracy: their stored per-prompt values), a pair for a pair metric that
declares its values means over pairs (:meth:`rmaudit.components.Metric.per_pair`: the pair
accuracy overall and per subset, RM-Bench's levels, the section score with its subsets as
strata, a judge's accuracy in both orders and in each, its consistency and parse failures),
recomputed from the stored scores or verdicts with the metric's own rule and clustered by the
pair's prompt (:mod:`.pair_units`).  A recomputation that does not give the stored number back
(a subset the metric sampled, a changed rule) is not compared, and says so.

Judges and RMs are ranked together on their **headline**: each model's own number where its
metric declares one (a pairwise judge's accuracy, both orders, a tie ½), else the run's first
number (an RM's pair accuracy), paired over the pairs both have (:func:`compare_headlines`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from rmaudit.components import RUN_LEVEL, MetricValue
from rmaudit.components.vocabulary import SIGNED, ResultKey
from rmaudit.metrics.paired import Comparison, PairedDifference, compare_models, paired_difference
from rmaudit.store import Store

from .pair_units import Units, pair_units, run_metric

#: a recomputed mean further than this from the stored value is not the stored number
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Measure:
    """Where one model's number is stored: the metric's label in the recipe, and the key."""

    metric: str
    key: str


@dataclass(frozen=True)
class MetricComparison:
    """One number compared across models: ``comparison`` is None where it could not be, with
    ``note`` saying why; else ``note`` says what was left out.  ``measures`` holds the models
    whose number is another than ``metric``/``key`` (a judge's headline), by model label."""

    metric: str
    key: str
    label: str
    higher_is_better: bool
    comparison: Comparison | None
    units: int = 0
    clusters: int = 0
    unit_name: str = "prompts"
    note: str = ""
    measures: dict[str, Measure] | None = None
    #: what each convention in a headline comparison is: "judges: judge accuracy: …"
    conventions: tuple[str, ...] = ()


@dataclass(frozen=True)
class ComparedModel:
    label: str
    rm_key: str
    run_id: str
    measure: Measure


def model_units(store: Store, run_id: str, rm_key: str, measure: Measure) -> Units | None:
    """The per-unit values behind one stored number (None: none stored or recomputable)."""
    run = store.read.run(run_id)
    found = pair_units(store, run, rm_key, measure.metric, measure.key)
    if found is not None:
        return found
    values = store.read.stored_per_prompt(run_id, rm_key, measure.metric, measure.key)
    # a step metric's per-prompt values are per question (a problem's solutions)
    name = "questions" if run.solution_set_key else "prompts"
    return Units({pid: float(v) for pid, v in values.items()}, name=name) if values else None


def stored_columns(store: Store, run_ids: Sequence[str]) -> list[MetricValue]:
    """The first row of every scalar stored for an RM, first run's order, once each."""
    seen: dict[tuple[str, str], MetricValue] = {}
    for run_id in run_ids:
        for row in store.read.metric_rows(run_id):
            if row.rm_key != RUN_LEVEL:
                seen.setdefault((row.metric, row.key), row)
    return list(seen.values())


def _models(store: Store, run_ids: Sequence[str], measure: Measure) -> list[ComparedModel]:
    """Every RM of the runs once (an RM in two runs scored the same items the same way);
    a label two different RMs share gets its run's id."""
    found: list[ComparedModel] = []
    for run_id in run_ids:
        for label, rm_key in store.read.reward_models(run_id):
            if all(m.rm_key != rm_key for m in found):
                found.append(ComparedModel(label, rm_key, run_id, measure))
    labels = [m.label for m in found]
    return [
        replace(m, label=f"{m.label} ({m.run_id[:8]})") if labels.count(m.label) > 1 else m
        for m in found
    ]


def gives_stored(store: Store, model: ComparedModel, units: Units) -> bool:
    """Whether the per-unit values average to the stored number (else they are not its)."""
    m = model.measure
    stored = store.read.stored_value(model.run_id, model.rm_key, m.metric, m.key)
    mean = float(np.mean(list(units.values.values())))
    return stored is not None and abs(mean - stored) <= _TOLERANCE


@dataclass(frozen=True)
class CommonUnits:
    """The units every model has a value on, in key order, their clusters (None: each unit its
    own) and strata (None: one)."""

    order: list[str]
    clusters: list[str] | None
    strata: list[str] | None


def common_units(models: list[Units]) -> CommonUnits:
    order = sorted(set.intersection(*(set(u.values) for u in models)))
    clusters_by_unit: dict[str, str] = {}
    strata_by_unit: dict[str, str] = {}
    for units in models:
        clusters_by_unit.update(units.clusters)
        strata_by_unit.update(units.strata)
    clusters = [clusters_by_unit[u] for u in order] if clusters_by_unit else None
    if clusters is not None and len(set(clusters)) == len(clusters):
        clusters = None
    strata = [strata_by_unit[u] for u in order] if strata_by_unit else None
    return CommonUnits(order, clusters, strata)


def paired_against(
    store: Store, run_id: str, first: tuple[str, Measure], second: tuple[str, Measure]
) -> PairedDifference | None:
    """The first (rm key, number)'s stored value minus the second's in one run, paired over
    their common units — a judge's headline against the ``length`` baseline's accuracy, on the
    same pairs (None where the per-unit values are not stored or recomputable)."""
    models = [ComparedModel(k, k, run_id, measure) for k, measure in (first, second)]
    found = [model_units(store, run_id, m.rm_key, m.measure) for m in models]
    if any(u is None for u in found):
        return None
    units = [u for u in found if u is not None]
    if not all(gives_stored(store, m, u) for m, u in zip(models, units, strict=True)):
        return None
    common = common_units(units)
    if len(common.order) < 2:
        return None
    a, b = ([u.values[x] for x in common.order] for u in units)
    return paired_difference(a, b, clusters=common.clusters, strata=common.strata)


def compare_stored(
    store: Store,
    run_ids: Sequence[str],
    metrics: Sequence[str] = (),
    *,
    alpha: float = 0.05,
    parts: bool = True,
) -> list[MetricComparison]:
    """Every model of ``run_ids`` compared on each stored number (or those whose label, key or
    metric name is in ``metrics``; without ``parts``, unnamed per-subset numbers and numbers
    with no better direction are left out), on the units every model has a value on; first,
    where judges and RMs head their rows with different numbers, their headlines."""
    results = []
    headline = None if metrics else compare_headlines(store, run_ids, alpha=alpha)
    if headline is not None:
        results.append(headline)
    for row in stored_columns(store, run_ids):
        params = row.params
        wanted = {row.metric, row.key, row.label}
        if metrics and not wanted & set(metrics):
            continue
        if not metrics and not parts and (ResultKey.read(row.key).part or params.get(SIGNED)):
            continue
        measure = Measure(row.metric, row.key)
        models = _models(store, run_ids, measure)
        results.append(_compare(store, run_ids, models, _Column.of(row), alpha))
    return results


@dataclass(frozen=True)
class _Column:
    """What a comparison is of: the number, its label and direction, and (a headline) the
    conventions of its models' numbers."""

    measure: Measure
    label: str
    higher_is_better: bool
    conventions: tuple[str, ...] = ()
    #: what its sign means, for a number with no better direction (not compared)
    signed: str = ""

    @classmethod
    def of(cls, row: MetricValue) -> _Column:
        params = row.params
        return cls(
            Measure(row.metric, row.key),
            row.label,
            bool(row.higher_is_better),
            signed=str(params.get(SIGNED) or ""),
        )


def compare_headlines(
    store: Store, run_ids: Sequence[str], *, alpha: float = 0.05
) -> MetricComparison | None:
    """Every model compared on its headline (:meth:`rmaudit.results.summary.RunSummary.
    headline`) where judges and RMs differ in it: a judge's accuracy with both orders and a
    tie ½ beside an RM's pair accuracy, a tie a loss, pair by pair (None where every model
    heads its row with the same number: that number's own comparison is the headline's)."""
    from .summary import load_summary

    models: list[ComparedModel] = []
    conventions: dict[str, str] = {}
    first = None
    for run_id in run_ids:
        summary = load_summary(store, run_id)
        first = first or summary.first_column
        for model in _models(store, [run_id], Measure("", "")):
            if any(m.rm_key == model.rm_key for m in models):
                continue
            column = summary.headline(model.rm_key)
            if column is None:
                continue
            models.append(replace(model, measure=Measure(column.metric, column.key)))
            if column.headline:
                conventions.setdefault(column.key, f"judges: {column.headline}")
    if first is None or len({m.measure for m in models}) < 2:
        return None
    base = Measure(first.metric, first.key)
    conventions.setdefault(first.key, f"RMs: {first.header}")
    headline = _Column(
        base, f"headline {first.header}", first.higher_is_better, tuple(conventions.values())
    )
    result = _compare(store, run_ids, models, headline, alpha)
    return replace(
        result, measures={m.label: m.measure for m in models if m.measure != base} or None
    )


def headline_comparison(
    store: Store, run_id: str, *, alpha: float = 0.05
) -> MetricComparison | None:
    """The comparison behind the leaderboard's letters and ranks: the models' headlines
    (:func:`compare_headlines`), or where every model heads its row with the run's first
    number, that number's own (None: fewer than two models, or no number)."""
    if len(store.read.reward_models(run_id)) < 2:
        return None
    found = compare_headlines(store, [run_id], alpha=alpha)
    if found is not None:
        return found
    from .summary import load_summary

    first = load_summary(store, run_id).first_column
    row = next(
        (
            r
            for r in stored_columns(store, [run_id])
            if first is not None and (r.metric, r.key) == (first.metric, first.key)
        ),
        None,
    )
    if row is None:
        return None
    models = _models(store, [run_id], Measure(row.metric, row.key))
    return _compare(store, [run_id], models, _Column.of(row), alpha)


def _compare(
    store: Store, run_ids: Sequence[str], models: list[ComparedModel], column: _Column, alpha: float
) -> MetricComparison:
    """``models`` compared on ``column``: once while the file is unchanged (the summary, the
    verdicts and the results file of one audit show the same comparisons)."""
    key = (_compare, tuple(run_ids), tuple(models), column, alpha)
    return store.remembered(key, lambda: _compared(store, run_ids, models, column, alpha))


def _compared(
    store: Store, run_ids: Sequence[str], models: list[ComparedModel], column: _Column, alpha: float
) -> MetricComparison:
    measure = column.measure

    def bare(note: str) -> MetricComparison:
        return MetricComparison(
            measure.metric,
            measure.key,
            column.label,
            column.higher_is_better,
            None,
            note=note,
            conventions=column.conventions,
        )

    if column.signed:
        return bare(f"no better direction ({column.signed}): not ranked")
    # each model's number from the first run that stores it (an RM in several runs)
    models = [
        replace(m, run_id=found)
        for m in models
        for found in [
            next(
                (
                    r
                    for r in run_ids
                    if store.read.stored_value(r, m.rm_key, m.measure.metric, m.measure.key)
                    is not None
                ),
                None,
            )
        ]
        if found is not None
    ]
    if len(models) < 2:
        return bare("fewer than two models store it: nothing to compare")
    per_model: dict[str, Units] = {}
    for m in models:
        units = model_units(store, m.run_id, m.rm_key, m.measure)
        if units is None:
            return bare(_why_not(store, m))
        if not gives_stored(store, m, units):
            styles = (
                " (a pair set stored before schema 10 keeps one style of a pair it holds twice: "
                "rerun the suite to store every position's)"
            ) * m.measure.key.startswith("rm_bench_")
            return bare(
                f"the per-unit values of {m.label} do not give its stored number back{styles}"
            )
        per_model[m.label] = units
    common = common_units(list(per_model.values()))
    order, clusters = common.order, common.clusters
    most = max(len(u.values) for u in per_model.values())
    if len(order) < 2:
        return bare("fewer than two units that every model has a value on")
    comparison = compare_models(
        {name: np.array([u.values[x] for x in order]) for name, u in per_model.items()},
        clusters=clusters,
        strata=common.strata,
        higher_is_better=column.higher_is_better,
        alpha=alpha,
    )
    dropped = most - len(order)
    return MetricComparison(
        measure.metric,
        measure.key,
        column.label,
        column.higher_is_better,
        comparison,
        units=len(order),
        clusters=len(set(clusters)) if clusters else len(order),
        unit_name=" or ".join(dict.fromkeys(u.name for u in per_model.values())),
        note=f"{dropped} units not scored by every model left out" if dropped else "",
        conventions=column.conventions,
    )


def _why_not(store: Store, model: ComparedModel) -> str:
    """Why a model's number has no per-unit values: a pair metric that declares none for it (a
    ratio, a bootstrap's ECE), or nothing stored per prompt."""
    run = store.read.run(model.run_id)
    metric = run_metric(run, model.measure.metric)
    if metric is not None and metric.scope == "pairs":
        return "not a mean over pairs (its metric declares no per-pair values)"
    return f"no per-unit values stored or recomputable for {model.label}"


def headline_comparisons(store: Store, run_id: str, limit: int = 4) -> list[MetricComparison]:
    """The run's headline comparison and its first compared numbers, ``limit`` in all
    (per-subset numbers left out), for the summary's compact block and the reports; empty
    with fewer than two models."""
    if len(store.read.reward_models(run_id)) < 2:
        return []
    found = [c for c in [compare_headlines(store, [run_id])] if c is not None]
    for row in stored_columns(store, [run_id]):
        if len(found) == limit:
            break
        if ResultKey.read(row.key).part is not None:
            continue
        models = _models(store, [run_id], Measure(row.metric, row.key))
        result = _compare(store, [run_id], models, _Column.of(row), 0.05)
        if result.comparison is not None:
            found.append(result)
    return found
