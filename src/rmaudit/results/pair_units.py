"""The per-pair values behind a stored pair metric, recomputed from the stored scores with the
metric's own rule, for the paired comparisons (:mod:`rmaudit.results.comparison`).

A pair is the unit and its prompt the cluster.  The pair accuracy (overall or of one subset)
and RM-Bench's average and easy / normal / hard levels are means of their pairs' credits (each
RM-Bench record has one pair per style combination, so a level's mean over its pairs is the
mean over its cells).  A section score is Σ_k v_k · acc_k, linear in the subset accuracies
with coefficients v_k that :func:`~rmaudit.metrics.section_score` itself gives (the score with
subset k's accuracy 1 and every other 0), so it is the mean of x_i = n · v_k · c_i / n_k over
the n labelled pairs, n_k of them in subset k; its units carry their subset as a stratum, and
the difference's ± is :func:`~rmaudit.metrics.paired.stratified_stderr`.  RewardBench 2's
numbers are means over its rows (and Ties questions) put back together from their pairs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from rmaudit.components.vocabulary import RB2_SCORE, rb2_subset_key
from rmaudit.metrics.preference import pair_credit, section_score, subset_accuracy
from rmaudit.metrics.rewardbench2 import rewardbench2_score, rows_from_pairs
from rmaudit.store import Store
from rmaudit.store.pair_records import PairScore
from rmaudit.store.records import RunRow

#: keys of pair metrics that average their pairs' credits → which pairs they average
PAIR_KEYS = {
    ("pair-accuracy", "accuracy"): "all",
    ("rm-bench", "rm_bench_average"): "all",
    ("rm-bench", "rm_bench_easy"): "easy",
    ("rm-bench", "rm_bench_normal"): "normal",
    ("rm-bench", "rm_bench_hard"): "hard",
}
#: the section score's key, whose units are weighted credits in strata (subsets)
SECTION_KEY = ("section-score", "section_score")
#: RewardBench 2's metric, whose units are its rows and Ties questions (:func:`rewardbench2_units`)
REWARDBENCH2 = "rewardbench-2"


@dataclass(frozen=True)
class Units:
    """One model's per-unit values of one metric: unit id → value, unit id → cluster, and
    unit id → stratum (empty: one stratum)."""

    values: dict[str, float]
    clusters: dict[str, str] = field(default_factory=dict)
    strata: dict[str, str] = field(default_factory=dict)


@dataclass
class PairRows:
    """What one comparison has read, for every column it makes: each (pair set key, RM key)'s
    scored pairs."""

    scored: dict[tuple[str, str], list[PairScore]] = field(default_factory=dict)


def _scored(store: Store, run: RunRow, rm_key: str, read: PairRows) -> list[PairScore]:
    if not run.pair_set_key:
        return []
    key = (run.pair_set_key, rm_key)
    if key not in read.scored:
        read.scored[key] = store.read.pair_score_rows(*key)
    return read.scored[key]


def _unit_ids(rows: list[PairScore]) -> list[str]:
    """A pair set can hold one pair twice (a response repeated across RM-Bench's styles): the
    k-th copy of a pair is its own unit, matched to the k-th copy in another run."""
    seen: Counter[str] = Counter()
    ids = []
    for r in rows:
        seen[r.pair_id] += 1
        ids.append(f"{r.pair_id}#{seen[r.pair_id]}")
    return ids


def pair_units(
    store: Store, run: RunRow, rm_key: str, which: str, ties: str, read: PairRows | None = None
) -> Units | None:
    """Per-pair credits (unit: the pair; cluster: its prompt) of the pairs ``which`` names:
    all, a subset (``subset:NAME``) or an RM-Bench level (easy, normal, hard), each pair with
    the style its position in the pair set was given (``read``: the rows read so far)."""
    read = read or PairRows()
    rows = _scored(store, run, rm_key, read)
    if not rows:
        return None
    credit = pair_credit(
        [r.chosen_score for r in rows], [r.rejected_score for r in rows], ties=ties
    )
    keep = np.ones(len(rows), dtype=bool)
    if which.startswith("subset:"):
        keep = np.array([r.subset == which[len("subset:") :] for r in rows])
    elif which != "all":
        metas = [r.meta for r in rows]
        if not all("chosen_style" in m and "rejected_style" in m for m in metas):
            return None
        sign = np.array([np.sign(m["chosen_style"] - m["rejected_style"]) for m in metas])
        keep = sign == {"easy": 1, "normal": 0, "hard": -1}[which]
    ids = _unit_ids(rows)
    return Units(
        {u: float(c) for u, c, k in zip(ids, credit, keep, strict=True) if k},
        {u: r.prompt_id for u, r, k in zip(ids, rows, keep, strict=True) if k},
    )


def section_units(
    store: Store,
    run: RunRow,
    rm_key: str,
    options: dict[str, Any],
    read: PairRows | None = None,
) -> Units | None:
    """Per-pair weighted credits whose mean is the section score (module docstring), each pair
    clustered by its prompt within its subset, the stratum."""
    rows = [r for r in _scored(store, run, rm_key, read or PairRows()) if r.subset is not None]
    if not rows:
        return None
    ties = str(options.get("ties", "loss"))
    sections = options.get("sections", "rewardbench")
    weights = options.get("weights")
    chosen = np.array([r.chosen_score for r in rows])
    rejected = np.array([r.rejected_score for r in rows])
    subsets = [str(r.subset) for r in rows]
    results = subset_accuracy(chosen, rejected, subsets, ties=ties)
    coefficient = {
        k: section_score(
            {s: replace(result, value=float(s == k)) for s, result in results.items()},
            sections,
            weights,
        ).score
        for k in results
    }
    size = Counter(subsets)
    credit = pair_credit(chosen, rejected, ties=ties)
    ids = _unit_ids(rows)
    scale = len(rows)
    return Units(
        {
            u: float(scale * coefficient[s] * c / size[s])
            for u, s, c in zip(ids, subsets, credit, strict=True)
        },
        {u: r.prompt_id for u, r in zip(ids, rows, strict=True)},
        dict(zip(ids, subsets, strict=True)),
    )


def rewardbench2_units(
    store: Store, run: RunRow, rm_key: str, key: str, read: PairRows | None = None
) -> Units | None:
    """RewardBench 2's per-unit values (:mod:`rmaudit.metrics.rewardbench2.score`): a subset's
    rows' credits (Ties: its questions' weighted values), each row its own unit (the data's
    sampling unit); for the final score, every unit's value scaled to the mean of the subset
    scores, its subset the stratum."""
    read = read or PairRows()
    rows = _scored(store, run, rm_key, read)
    if not rows:
        return None
    score = rewardbench2_score(
        rows_from_pairs(
            np.array([r.chosen_score for r in rows]),
            np.array([r.rejected_score for r in rows]),
            [r.subset for r in rows],
            [r.meta for r in rows],
        ),
        intervals=False,
    )
    if key == RB2_SCORE and score.final is not None:
        f = score.final
        return Units(f.units, strata=f.strata)
    for s in score.subsets:
        if key == rb2_subset_key(s.subset):
            return Units(s.units)
    return None
