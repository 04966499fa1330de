"""Do two stored runs on different benchmarks rank their shared models alike?  The first run's
headline against each main number of the second, as rank correlations with intervals
(:func:`rmaudit.metrics.rank_agreement.rank_agreement`; ``rmaudit compare --rank-correlation``,
docs/metrics.md "Do two benchmarks rank alike?").

A model is the same on both sides when its label is, or when ``aliases`` maps the first run's
label to the second's (RewardMATH's ``grm_llama3`` is RewardBench's ``GRM-Llama3-8B``).  The
baselines are left out: they are not models whose ranking is in question.  Each side's per-unit
values are those the paired comparisons use (:func:`.comparison.model_units`), on the units
every shared model has a value on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics.rank_agreement import RankAgreement, rank_agreement
from rmaudit.store import Store

from .comparison import ComparedModel, Measure, common_units, gives_stored, model_units
from .summary import RunSummary, load_summary


@dataclass(frozen=True)
class Numbers:
    """One number of a run per model: the units × models matrix behind it (better is higher)."""

    label: str
    units: np.ndarray
    note: str = ""
    #: each unit's cluster (None: each its own)
    clusters: list[str] | None = None


@dataclass(frozen=True)
class BenchmarkAgreement:
    """The first run's headline against one number of the second, over the shared models."""

    first: str
    second: str
    models: tuple[str, ...]
    #: None where it could not be computed, ``note`` saying why
    found: RankAgreement | None
    note: str = ""


def benchmark_agreements(
    store: Store,
    first_run: str,
    second_run: str,
    *,
    aliases: Mapping[str, str] | None = None,
    level: float = 0.95,
) -> list[BenchmarkAgreement]:
    """The first run's headline against the second's headline and each of its main numbers."""
    aliases = dict(aliases or {})
    second_summary = load_summary(store, second_run)
    first_models = _models(store, first_run, load_summary(store, first_run))
    second_models = _models(store, second_run, second_summary)
    shared = [
        (label, aliases.get(label, label))
        for label in first_models
        if aliases.get(label, label) in second_models
    ]
    on_first = {a: first_models[a] for a, _ in shared}
    on_second = {b: second_models[b] for _, b in shared}
    firsts = [_numbers(store, first_run, _Number("headline", None), on_first)]
    seconds = [_numbers(store, second_run, n, on_second) for n in _main_numbers(second_summary)]
    names = tuple(a if a == b else f"{a} = {b}" for a, b in shared)
    found = []
    for one in firsts:
        for other in seconds:
            note = one.note or other.note
            if len(shared) < 3 and not note:
                note = f"{len(shared)} models on both sides: a rank correlation needs 3"
            agreement = None
            if not note:
                try:
                    agreement = rank_agreement(
                        one.units,
                        other.units,
                        clusters_a=one.clusters,
                        clusters_b=other.clusters,
                        level=level,
                    )
                except MetricInputError as error:
                    note = str(error)
            found.append(BenchmarkAgreement(one.label, other.label, names, agreement, note))
    return found


@dataclass(frozen=True)
class _Number:
    """Where each model's value of one number is stored, and its better direction."""

    label: str
    #: None: each model's own headline
    measure: Measure | None
    higher_is_better: bool = True


def _models(
    store: Store, run_id: str, summary: RunSummary
) -> dict[str, tuple[ComparedModel, bool]]:
    """The run's models by label, baselines left out, each with its headline's measure and
    better direction."""
    found = {}
    for label, rm_key in store.read.reward_models(run_id):
        column = summary.headline(rm_key)
        if rm_key in summary.baselines or column is None:
            continue
        measure = Measure(column.metric, column.key)
        found[label] = (ComparedModel(label, rm_key, run_id, measure), column.higher_is_better)
    return found


def _main_numbers(summary: RunSummary) -> list[_Number]:
    """The headline, then every number of the whole data with a better direction."""
    return [_Number("headline", None)] + [
        _Number(c.header, Measure(c.metric, c.key), c.higher_is_better)
        for c in summary.columns
        if c.result_key.part is None and not c.detail and not c.signed
    ]


def _numbers(
    store: Store, run_id: str, number: _Number, models: Mapping[str, tuple[ComparedModel, bool]]
) -> Numbers:
    """``models``' per-unit values of ``number`` on the units they all have, one column per
    model in ``models``' order, negated where lower is better."""
    per_model, signs = [], []
    for model, higher in models.values():
        if number.measure is not None:
            model = ComparedModel(model.label, model.rm_key, run_id, number.measure)
            higher = number.higher_is_better
        units = model_units(store, run_id, model.rm_key, model.measure)
        if units is None or not gives_stored(store, model, units):
            note = f"{number.label}: no per-unit values of {model.label}"
            return Numbers(number.label, np.empty((0, 0)), note)
        per_model.append(units)
        signs.append(1.0 if higher else -1.0)
    if not per_model:
        return Numbers(number.label, np.empty((0, 0)))
    common = common_units(per_model)
    matrix = np.array([[u.values[x] for x in common.order] for u in per_model]).T * signs
    return Numbers(number.label, matrix, clusters=common.clusters)
