"""Paired comparisons read back from stored runs: every headline metric's per-unit values per
model, matched across models (and runs) by their item keys, and compared by
:func:`rmaudit.metrics.paired.compare_models` (docs/metrics.md, "Comparing models").

The units are what the stored number averages: a prompt for the benchmark metrics (RETA,
best-of-n, pairwise accuracy: their stored per-prompt values), a pair for the pair accuracy,
RM-Bench's levels and the section score (weighted, its subsets the strata), recomputed from
the stored scores with the metric's own rule and clustered by the pair's prompt
(:mod:`.pair_units`).  A recomputation that does not give the stored number back
(a subset the metric sampled, a changed rule) is not compared, and says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rmaudit.components import RUN_LEVEL
from rmaudit.metrics.paired import Comparison, PairedDifference, compare_models, paired_difference
from rmaudit.store import Store
from rmaudit.store.records import MetricResultRow, RunRow

from .pair_units import (
    PAIR_KEYS,
    REWARDBENCH2,
    SECTION_KEY,
    PairRows,
    Units,
    pair_units,
    rewardbench2_units,
    section_units,
)

#: a recomputed mean further than this from the stored value is not the stored number
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class MetricComparison:
    """One metric compared across models: ``comparison`` is None where it could not be, with
    ``note`` saying why; else ``note`` says what was left out."""

    metric: str
    key: str
    label: str
    higher_is_better: bool
    comparison: Comparison | None
    units: int = 0
    clusters: int = 0
    unit_name: str = "prompts"
    note: str = ""


@dataclass(frozen=True)
class _Model:
    label: str
    rm_key: str
    run_id: str


def _metric_options(run: RunRow, metric: str) -> tuple[str, dict[str, Any]]:
    """(component name, options) of the run's metric labelled ``metric``."""
    recipe = run.recipe
    for entry in recipe.get("metrics") or []:
        if entry.get("label", entry.get("name")) == metric:
            return str(entry.get("name")), entry
    return metric, {}


def model_units(
    store: Store, run_id: str, rm_key: str, metric: str, key: str, read: PairRows | None = None
) -> Units | None:
    """The per-unit values behind one stored number (None: none stored or recomputable);
    ``read`` keeps the pairs' scores read for one column for the next."""
    run = store.read.run(run_id)
    name, options = _metric_options(run, metric)
    ties = str(options.get("ties", "loss"))
    if (name, key) in PAIR_KEYS:
        return pair_units(store, run, rm_key, PAIR_KEYS[(name, key)], ties, read)
    if (name, key) == SECTION_KEY:
        return section_units(store, run, rm_key, options, read)
    if name == REWARDBENCH2:
        return rewardbench2_units(store, run, rm_key, key, read)
    if name == "pair-accuracy" and key.startswith("accuracy[") and key.endswith("]"):
        return pair_units(store, run, rm_key, "subset:" + key[len("accuracy[") : -1], ties, read)
    values = store.read.stored_per_prompt(run_id, rm_key, metric, key)
    return Units({pid: float(v) for pid, v in values.items()}) if values else None


def _headline_columns(store: Store, run_ids: Sequence[str]) -> list[MetricResultRow]:
    """(metric, key, label, higher_is_better) of every scalar stored for an RM, first run's
    order, once each."""
    seen: dict[tuple[str, str], MetricResultRow] = {}
    for run_id in run_ids:
        for row in store.read.metric_rows(run_id):
            if row.rm_key != RUN_LEVEL:
                seen.setdefault((row.metric, row.key), row)
    return list(seen.values())


def _models(store: Store, run_ids: Sequence[str]) -> list[_Model]:
    """Every RM of the runs once (an RM in two runs scored the same items the same way);
    a label two different RMs share gets its run's id."""
    found: list[_Model] = []
    for run_id in run_ids:
        for label, rm_key in store.read.reward_models(run_id):
            if all(m.rm_key != rm_key for m in found):
                found.append(_Model(label, rm_key, run_id))
    labels = [m.label for m in found]
    return [
        _Model(f"{m.label} ({m.run_id[:8]})", m.rm_key, m.run_id)
        if labels.count(m.label) > 1
        else m
        for m in found
    ]


def _gives_stored(store: Store, model: _Model, metric: str, key: str, units: Units) -> bool:
    """Whether the per-unit values average to the stored number (else they are not its)."""
    stored = store.read.stored_value(model.run_id, model.rm_key, metric, key)
    mean = float(np.mean(list(units.values.values())))
    return stored is not None and abs(mean - stored) <= _TOLERANCE


@dataclass(frozen=True)
class _Common:
    """The units every model has a value on, in key order, their clusters (None: each unit its
    own) and strata (None: one)."""

    order: list[str]
    clusters: list[str] | None
    strata: list[str] | None


def _common_units(models: list[Units]) -> _Common:
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
    return _Common(order, clusters, strata)


def paired_against(
    store: Store, run_id: str, metric: str, key: str, rm_key: str, other_key: str
) -> PairedDifference | None:
    """``rm_key``'s stored number minus ``other_key``'s in one run, paired over their common
    units (None where the per-unit values are not stored or recomputable)."""
    models = [_Model(k, k, run_id) for k in (rm_key, other_key)]
    found = [model_units(store, run_id, m.rm_key, metric, key) for m in models]
    if any(u is None for u in found):
        return None
    units = [u for u in found if u is not None]
    if not all(_gives_stored(store, m, metric, key, u) for m, u in zip(models, units, strict=True)):
        return None
    common = _common_units(units)
    if len(common.order) < 2:
        return None
    first, second = ([u.values[x] for x in common.order] for u in units)
    return paired_difference(first, second, clusters=common.clusters, strata=common.strata)


def compare_stored(
    store: Store,
    run_ids: Sequence[str],
    metrics: Sequence[str] = (),
    *,
    alpha: float = 0.05,
) -> list[MetricComparison]:
    """Every model of ``run_ids`` compared on each stored metric (or those whose label, key or
    metric name is in ``metrics``), on the units every model has a value on."""
    models = _models(store, run_ids)
    results, read = [], PairRows()
    for row in _headline_columns(store, run_ids):
        wanted = {row.metric, row.key, row.label}
        if metrics and not wanted & set(metrics):
            continue
        results.append(_compare_column(store, run_ids, models, row, alpha, read))
    return results


def _compare_column(
    store: Store,
    run_ids: Sequence[str],
    models: list[_Model],
    row: MetricResultRow,
    alpha: float,
    read: PairRows,
) -> MetricComparison:
    metric, key, label = row.metric, row.key, row.label
    higher = bool(row.higher_is_better)

    def bare(note: str) -> MetricComparison:
        return MetricComparison(metric, key, label, higher, None, note=note)

    # each model's number from the first run that stores it (an RM in several runs)
    models = [
        replace(m, run_id=found)
        for m in models
        for found in [
            next(
                (
                    r
                    for r in run_ids
                    if store.read.stored_value(r, m.rm_key, metric, key) is not None
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
        units = model_units(store, m.run_id, m.rm_key, metric, key, read)
        if units is None:
            return bare(f"no per-unit values stored or recomputable for {m.label}")
        if not _gives_stored(store, m, metric, key, units):
            styles = (
                " (a pair set stored before schema 10 keeps one style of a pair it holds twice: "
                "rerun the suite to store every position's)"
            ) * key.startswith("rm_bench_")
            return bare(
                f"the per-unit values of {m.label} do not give its stored number back{styles}"
            )
        per_model[m.label] = units
    common = _common_units(list(per_model.values()))
    order, clusters = common.order, common.clusters
    most = max(len(u.values) for u in per_model.values())
    if len(order) < 2:
        return bare("fewer than two units that every model has a value on")
    comparison = compare_models(
        {name: np.array([u.values[x] for x in order]) for name, u in per_model.items()},
        clusters=clusters,
        strata=common.strata,
        higher_is_better=higher,
        alpha=alpha,
    )
    dropped = most - len(order)
    return MetricComparison(
        metric,
        key,
        label,
        higher,
        comparison,
        units=len(order),
        clusters=len(set(clusters)) if clusters else len(order),
        unit_name="pairs" if any(u.clusters for u in per_model.values()) else "prompts",
        note=f"{dropped} units not scored by every model left out" if dropped else "",
    )


def caption(result: MetricComparison) -> str:
    """What a comparison is over and what its letters and ranks mean."""
    c = result.comparison
    over = f"{result.units:,} {result.unit_name}" + (
        f" in {result.clusters:,} prompts" if result.clusters != result.units else ""
    )
    alpha = c.alpha if c is not None else 0.05
    better = "higher" if c is None or c.higher_is_better else "lower"
    return (
        f"{result.label} ({better} is better; paired over {over}; a shared letter: not "
        f"separable, Holm-adjusted at {1 - alpha:.0%}; ranks: simultaneous {1 - alpha:.0%} "
        f"intervals)"
    )


def pair_lines(result: MetricComparison) -> list[str]:
    """Each pair's difference with its ± and interval and Holm-adjusted p."""
    if result.comparison is None:
        return []
    return [
        f"{p.first} − {p.second}: {signed(p.difference.value)} ± "
        f"{_number(p.difference.stderr)} [{signed(p.difference.ci_low)}, "
        f"{signed(p.difference.ci_high)}], p_Holm {p_text(p.adjusted_p)}"
        + ("" if p.separable else " (not separable)")
        for p in result.comparison.pairs
    ]


def comparison_lines(result: MetricComparison) -> list[str]:
    """Plain lines for every view: the standings (letters, ranks) and each pair's difference
    with its ± and Holm-adjusted p."""
    if result.comparison is None:
        return [f"{result.label}: not compared: {result.note}"]
    lines = [f"{caption(result)}:"]
    lines += [
        f"  {s.letters:<3} {s.model}: {_number(s.value)}, rank {s.ranks}"
        for s in result.comparison.standings
    ]
    lines += [f"  {line}" for line in pair_lines(result)]
    if result.note:
        lines.append(f"  note: {result.note}")
    return lines


def _number(value: float) -> str:
    return f"{value:.4f}" if math.isfinite(value) else "—"


def signed(value: float) -> str:
    """A difference with its sign, 4 decimals ("—" where undefined)."""
    return f"{value:+.4f}" if math.isfinite(value) else "—"


def p_text(value: float) -> str:
    """A p-value as printed: "< 0.0001" below that, else 4 decimals ("—" where undefined)."""
    if not math.isfinite(value):
        return "—"
    return "< 0.0001" if value < 1e-4 else f"{value:.4f}"


def comparison_json(result: MetricComparison) -> dict[str, Any]:
    """The comparison as JSON-ready data (NaN as null)."""

    def number(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None

    body: dict[str, Any] = {
        "metric": result.metric,
        "key": result.key,
        "label": result.label,
        "higher_is_better": result.higher_is_better,
        "units": result.units,
        "unit": result.unit_name,
        "clusters": result.clusters,
        "note": result.note or None,
    }
    c = result.comparison
    if c is None:
        return body | {"standings": None, "pairs": None}
    body["alpha"] = c.alpha
    body["standings"] = [
        {
            "model": s.model,
            "value": number(s.value),
            "letters": s.letters,
            "rank_low": s.rank_low,
            "rank_high": s.rank_high,
        }
        for s in c.standings
    ]
    body["pairs"] = [
        {
            "first": p.first,
            "second": p.second,
            "difference": number(p.difference.value),
            "stderr": number(p.difference.stderr),
            "ci_low": number(p.difference.ci_low),
            "ci_high": number(p.difference.ci_high),
            "p": number(p.difference.p_value),
            "p_holm": number(p.adjusted_p),
            "separable": p.separable,
        }
        for p in c.pairs
    ]
    return body


def standing_line(result: MetricComparison) -> str:
    """One compact line: each model's letters and rank interval, best first."""
    c = result.comparison
    if c is None:
        return f"{result.label}: not compared ({result.note})"
    models = " · ".join(f"{s.model} {s.letters} #{s.ranks}" for s in c.standings)
    return f"{result.label}: {models}"


def headline_comparisons(store: Store, run_id: str, limit: int = 4) -> list[MetricComparison]:
    """The run's first ``limit`` compared numbers (per-subset accuracies left out), for the
    summary's compact block; empty with fewer than two models."""
    if len(store.read.reward_models(run_id)) < 2:
        return []
    models, read = _models(store, [run_id]), PairRows()
    found: list[MetricComparison] = []
    for row in _headline_columns(store, [run_id]):
        if "[" in row.key:  # a per-subset accuracy
            continue
        result = _compare_column(store, [run_id], models, row, 0.05, read)
        if result.comparison is not None:
            found.append(result)
        if len(found) == limit:
            break
    return found
