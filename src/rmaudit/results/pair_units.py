"""The per-pair values behind a stored pair metric, for the paired comparisons
(:mod:`rmaudit.results.comparison`): the metric is built again from the run's recipe and asked
for them (:meth:`rmaudit.components.Metric.per_pair`, its own declaration of which of its
values are means over pairs, and of what), on the same :class:`~rmaudit.components.PairInputs`
it computed them from — an RM's stored scores of each pair, or a pairwise judge's stored
verdicts in both orders.

A pair is the unit and its prompt the cluster; a value the metric weights by fixed groups (a
section score's subsets) carries them as strata.  A pair set can hold one pair twice (a
response repeated across RM-Bench's styles): the k-th copy is its own unit, matched to the
k-th copy in another run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from rmaudit.components import Metric, PairInputs, PerPair
from rmaudit.errors import BadInput
from rmaudit.metrics.rewardbench2 import RowPlace
from rmaudit.recipe.validation import component_spec
from rmaudit.run.verdicts import judge_logits
from rmaudit.store import Store
from rmaudit.store.pair_records import StoredPair
from rmaudit.store.records import RunRow

from .judge_pairs import judged_set


@dataclass(frozen=True)
class Units:
    """One model's per-unit values of one metric: unit id → value, unit id → cluster, and
    unit id → stratum (empty: one stratum), and what a unit is."""

    values: dict[str, float]
    clusters: dict[str, str] = field(default_factory=dict)
    strata: dict[str, str] = field(default_factory=dict)
    name: str = "prompts"


@dataclass(frozen=True)
class ModelPairs:
    """One model's pairs as a pair metric reads them, and each pair's unit id."""

    inputs: PairInputs
    unit_ids: list[str]


@dataclass
class PairRows:
    """What the comparisons have read, for every column they make: each pair set's pairs,
    each (pair set, model)'s pairs, each (run, metric label)'s metric, each (run, model,
    metric)'s pairs and per-pair values by key, and the units of each (run, model, metric,
    key) asked for — one per store, until the file changes (:func:`read_rows`)."""

    set_pairs: dict[str, list[StoredPair]] = field(default_factory=dict)
    pairs: dict[tuple[str, str], ModelPairs | None] = field(default_factory=dict)
    metrics: dict[tuple[str, str], Metric | None] = field(default_factory=dict)
    per_pair: dict[tuple[str, str, str], tuple[ModelPairs, dict[str, PerPair]] | None] = field(
        default_factory=dict
    )
    units: dict[tuple[str, str, str, str], Units] = field(default_factory=dict)


def read_rows(store: Store) -> PairRows:
    """The store's :class:`PairRows`, which every comparison and view of one command shares
    (:meth:`rmaudit.store.Store.remembered`: forgotten when the file changes)."""
    return store.remembered(PairRows, PairRows)


def run_metric(run: RunRow, label: str) -> Metric | None:
    """The metric labelled ``label`` in the run's recipe, built with its options (a recipe
    that lists no metrics ran the defaults, labelled by name); None where it cannot be built
    here (a plugin not installed, options this version refuses)."""
    entries = run.recipe.get("metrics") or [{"name": label}]
    for entry in entries:
        if entry.get("label", entry.get("name")) != label:
            continue
        try:
            spec = component_spec(
                "metric", entry, field="metrics", file=None, base_dir=None, labelled=True
            )
        except BadInput:
            return None
        component = spec.build()
        return component if isinstance(component, Metric) else None
    return None


def model_pairs(store: Store, pair_set_key: str, rm_key: str) -> ModelPairs | None:
    """An RM's scored pairs of the set (logits: its scores), else a pairwise judge's pairs
    judged in both orders (logits: :func:`~rmaudit.run.verdicts.judge_logits`, with its
    verdicts); None where the model has neither."""
    scored = store.read.set_pairs(pair_set_key, rm_key)
    if scored:
        rows = [(r.pair_id, r.subset, r.meta, r.prompt_id) for r in scored]
        chosen = np.array([r.chosen_score for r in scored], float)
        rejected = np.array([r.rejected_score for r in scored], float)
        verdicts = None
    else:
        read = read_rows(store)
        if pair_set_key not in read.set_pairs:
            read.set_pairs[pair_set_key] = store.read.set_pairs(pair_set_key)
        judged = judged_set(store, pair_set_key, rm_key, read.set_pairs[pair_set_key])
        if judged is None:
            return None
        rows = [(p.pair_id, p.subset, p.meta, p.prompt_id) for p in judged.pairs]
        chosen, rejected = judge_logits(judged.verdicts)
        verdicts = judged.verdicts
    inputs = PairInputs(
        pair_ids=tuple(pid for pid, _, _, _ in rows),
        chosen=chosen,
        rejected=rejected,
        subsets=tuple(subset for _, subset, _, _ in rows),
        meta=tuple(meta for _, _, meta, _ in rows),
        prompt_ids=tuple(prompt for _, _, _, prompt in rows),
        verdicts=verdicts,
        places=tuple(RowPlace.of(meta) for _, _, meta, _ in rows),
    )
    return ModelPairs(inputs, _unit_ids(inputs.pair_ids))


def _unit_ids(pair_ids: tuple[str, ...]) -> list[str]:
    seen: Counter[str] = Counter()
    ids = []
    for pid in pair_ids:
        seen[pid] += 1
        ids.append(f"{pid}#{seen[pid]}")
    return ids


def pair_units(store: Store, run: RunRow, rm_key: str, metric: str, key: str) -> Units | None:
    """The per-pair values behind ``rm_key``'s stored value ``key`` of the pair metric labelled
    ``metric`` (None: the metric declares none for the key, or the model has no pairs); what
    is read and computed is kept for the next column (:func:`read_rows`)."""
    read = read_rows(store)
    if (run.id, rm_key, metric) not in read.per_pair:
        read.per_pair[(run.id, rm_key, metric)] = _per_pair(store, run, rm_key, metric, read)
    found = read.per_pair[(run.id, rm_key, metric)]
    if found is None or key not in found[1]:
        return None
    if (run.id, rm_key, metric, key) not in read.units:
        read.units[(run.id, rm_key, metric, key)] = _units(found[0], found[1][key])
    return read.units[(run.id, rm_key, metric, key)]


def _per_pair(
    store: Store, run: RunRow, rm_key: str, metric: str, read: PairRows
) -> tuple[ModelPairs, dict[str, PerPair]] | None:
    """A model's pairs and the pair metric's per-pair values on them, by key."""
    if not run.pair_set_key:
        return None
    if (run.id, metric) not in read.metrics:
        read.metrics[(run.id, metric)] = run_metric(run, metric)
    component = read.metrics[(run.id, metric)]
    if component is None or component.scope != "pairs":
        return None
    if (run.pair_set_key, rm_key) not in read.pairs:
        read.pairs[(run.pair_set_key, rm_key)] = model_pairs(store, run.pair_set_key, rm_key)
    pairs = read.pairs[(run.pair_set_key, rm_key)]
    return None if pairs is None else (pairs, component.per_pair(pairs.inputs))


def _units(pairs: ModelPairs, per_pair: PerPair) -> Units:
    kept = np.flatnonzero(np.isfinite(per_pair.values))
    ids = [pairs.unit_ids[i] for i in kept]
    return Units(
        dict(zip(ids, per_pair.values[kept].tolist(), strict=True)),
        {u: pairs.inputs.prompt_ids[i] for u, i in zip(ids, kept, strict=True)},
        {}
        if per_pair.strata is None
        else {u: per_pair.strata[i] for u, i in zip(ids, kept, strict=True)},
        per_pair.unit,
    )
