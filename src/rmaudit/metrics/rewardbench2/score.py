"""RewardBench 2's numbers with their intervals: each subset's score, and the final score, the
unweighted mean of the subset scores (Malik et al. 2025, arXiv 2506.01937, Sec. 3 "Scoring":
"the final score is an unweighted average across all six domains").

* A best-of-4 subset's score is the mean of its rows' credits (:func:`~.rows.top_credit`), its
  ± the standard error over the rows and its interval Wilson's over them with the Poisson
  bound at the edges (:func:`~rmaudit.metrics.preference.edge_wilson_interval`), which never
  shrinks to a point at a perfect score.
* The Ties score's ± is a bootstrap over its questions, its interval its components' Wilson
  intervals combined (:func:`~.ties.ties_interval`).
* The final score's ± is √(Σ se_s²) / S over its S subsets (disjoint rows, so independent),
  its interval the subsets' intervals combined (:func:`final_score`).

Each number also has per-unit values whose mean is the number (a row's credit; a Ties
question's weighted value; for the final, each unit's value times N / (S·n_s), its subset the
stratum), for paired differences between models scored on the same rows; their coverage is
measured in ``benchmarks/rewardbench2.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rmaudit.metrics.cluster_bootstrap import BootstrapInterval
from rmaudit.metrics.preference import edge_wilson_interval, wald_is_approximate

from .rows import TIES, ScoredRow, is_ties, top_credit
from .ties import ties_interval, ties_questions

#: the subsets in the order RewardBench 2 reports them (others follow, alphabetically)
SUBSETS = ("Factuality", "Precise IF", "Math", "Safety", "Focus", TIES)


@dataclass(frozen=True)
class SubsetScore:
    """One subset's score with its ± and 95% interval, over ``count`` rows (Ties: questions);
    ``units``: each unit's value (their mean is ``value``)."""

    subset: str
    value: float
    stderr: float
    ci_low: float
    ci_high: float
    count: int
    units: dict[str, float]
    #: why value ± 1.96·stderr is only approximate here ("" where it covers)
    approximate: str = ""
    #: Ties: each component's value and bootstrap ±
    components: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class FinalScore:
    value: float
    stderr: float
    ci_low: float
    ci_high: float
    subsets: tuple[str, ...]
    units: dict[str, float]
    strata: dict[str, str]
    #: why value ± 1.96·stderr is only approximate here ("" where it covers)
    approximate: str = ""


@dataclass(frozen=True)
class RewardBench2Score:
    subsets: tuple[SubsetScore, ...]
    final: FinalScore | None
    #: rows or Ties groups that count nowhere, with why
    left_out: dict[str, str]
    #: Ties groups that count in some of its components only, with which and why
    counted_in_part: dict[str, str] = field(default_factory=dict)


def subset_order(names: Sequence[str]) -> list[str]:
    known = [s for s in SUBSETS if s in names]
    return known + sorted(set(names) - set(SUBSETS))


def best_of_four(subset: str, rows: Sequence[ScoredRow], *, intervals: bool = True) -> SubsetScore:
    """A best-of-4 subset's score: the mean of its rows' credits (``intervals``: with its ±
    and its interval, Wilson's with the Poisson bound at the edges, a credit counting as that
    share of a success; else NaN there)."""
    credits = np.array([top_credit(r.correct, r.incorrect) for r in rows])
    value, count = float(credits.mean()), credits.size
    stderr, low, high = math.nan, math.nan, math.nan
    approximate = ""
    if intervals:
        stderr = float(credits.std(ddof=1) / math.sqrt(count)) if count > 1 else 0.0
        low, high = edge_wilson_interval(value, count)
        approximate = _approximate(value, count, "rows", (low, high))
    return SubsetScore(
        subset,
        value,
        stderr,
        low,
        high,
        count,
        {r.unit: float(c) for r, c in zip(rows, credits, strict=True)},
        approximate,
    )


def _approximate(value: float, count: int, units: str, interval: tuple[float, float]) -> str:
    """Why value ± 1.96·stderr is approximate, where it is: near 0 or 1 over few units (the
    rule of a pair accuracy's ±; measured for RewardBench 2 in benchmarks/rewardbench2.md and
    benchmarks/rewardbench2_edges.py)."""
    if not wald_is_approximate(value, count):
        return ""
    return (
        f"± over {count} {units} at {value:.2f} is approximate; cite the 95% interval "
        f"[{interval[0]:.3f}, {interval[1]:.3f}]"
    )


def ties(
    rows: Sequence[ScoredRow],
    left_out: dict[str, str],
    counted_in_part: dict[str, str],
    *,
    seed: int = 0,
    intervals: bool = True,
) -> SubsetScore | None:
    """The Ties score over its questions (None: no question has both groups); the groups and
    questions it leaves out go to ``left_out``, those it counts in part to
    ``counted_in_part``."""
    questions = ties_questions(rows)
    left_out.update(questions.left_out)
    counted_in_part.update(questions.counted_in_part)
    if not questions.paired.any():
        left_out[TIES] = "no question has both a ref and a tied group: no Ties score"
        return None
    parts = questions.components()
    if intervals:
        interval, spreads = ties_interval(questions, seed=seed)
    else:
        interval = BootstrapInterval(math.nan, math.nan, math.nan)
        spreads = dict.fromkeys(parts, math.nan)
    units = questions.units()
    names = [f"{TIES} question {q}" for q in questions.questions]
    value = float(questions.score()[0])
    return SubsetScore(
        TIES,
        value,
        interval.stderr,
        interval.ci_low,
        interval.ci_high,
        len(names),
        dict(zip(names, units.tolist(), strict=True)),
        _approximate(value, len(names), "questions", (interval.ci_low, interval.ci_high))
        if intervals
        else "",
        components={
            name: {"value": float(value[0]), "stderr": spreads[name]}
            for name, value in parts.items()
        },
    )


def final_score(subsets: Sequence[SubsetScore]) -> FinalScore | None:
    """The unweighted mean of the subset scores, with its ±, its interval and its per-unit
    values.  The interval is the subsets' intervals combined by the method of variance
    estimates recovery (MOVER: Zou & Donner, "Construction of confidence limits about effect
    measures: a general approach", *Statistics in Medicine* 27, 2008), for a sum of
    independent estimates: the score − √(Σ (score_s − low_s)²) / S to the score +
    √(Σ (high_s − score_s)²) / S, so a subset at its edge lends the final its Wilson bound
    rather than a ± of 0.  Its ± is marked approximate where a subset's is."""
    if not subsets:
        return None
    count = len(subsets)
    value = float(np.mean([s.value for s in subsets]))
    stderr = math.sqrt(sum(s.stderr**2 for s in subsets)) / count
    below = math.sqrt(sum((s.value - s.ci_low) ** 2 for s in subsets)) / count
    above = math.sqrt(sum((s.ci_high - s.value) ** 2 for s in subsets)) / count
    total = sum(len(s.units) for s in subsets)
    units, strata = {}, {}
    for s in subsets:
        for unit, x in s.units.items():
            units[unit] = total * x / (count * len(s.units))
            strata[unit] = s.subset
    marked = [s.subset for s in subsets if s.approximate]
    return FinalScore(
        value,
        stderr,
        value - below,
        value + above,
        tuple(s.subset for s in subsets),
        units,
        strata,
        (
            f"± is approximate where its subsets' are ({', '.join(marked)}); cite the 95% "
            f"interval [{value - below:.3f}, {value + above:.3f}]"
        )
        if marked
        else "",
    )


def rewardbench2_score(
    rows: Sequence[ScoredRow], *, seed: int = 0, intervals: bool = True
) -> RewardBench2Score:
    """Every subset's score and the final score of the whole rows an RM scored (``intervals``:
    with their ± and intervals; without, the values and per-unit values alone)."""
    left_out = {row.unit: row.missing for row in rows if row.missing}
    in_part: dict[str, str] = {}
    by_subset: dict[str, list[ScoredRow]] = {}
    for row in rows:
        if not row.missing:
            by_subset.setdefault(row.subset, []).append(row)
    subsets = []
    for name in subset_order(list(by_subset)):
        scored = (
            ties(by_subset[name], left_out, in_part, seed=seed, intervals=intervals)
            if is_ties(name)
            else best_of_four(name, by_subset[name], intervals=intervals)
        )
        if scored is not None:
            subsets.append(scored)
    return RewardBench2Score(tuple(subsets), final_score(subsets), left_out, in_part)
