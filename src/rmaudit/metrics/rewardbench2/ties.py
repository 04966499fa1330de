"""RewardBench 2's Ties score (Malik et al. 2025, arXiv 2506.01937, Sec. 3 "Scoring": "a
weighted score of accuracy ... and whether the reward margin between correct and incorrect
answers exceeds that of the highest and lowest-scored correct responses"; the weights are those
of reward-bench's ``process_single_model``, which computes the published numbers).

Ties rows are grouped by their ``id``: ``ref:N`` (a question with one correct answer) and
``tied:N`` (several correct answers to question N); rows with the same id pool their
completions.  Per group, from the correct scores c and the incorrect scores i:

* accurate = min(c) > max(i);
* d_corr = max(c) − min(c) (undefined with one correct answer);
* m_ci = min(c) − max(i).

ref_acc and tied_acc are the means of accurate over each kind of group; over the questions
with both groups (and a tied group with two or more correct answers):

* pref = mean[m_ci(tied) > d_corr(tied)];
* pref_hard = mean[min(m_ci(ref), m_ci(tied)) > d_corr(tied)];
* margin = mean[tanh(min(m_ci(ref), m_ci(tied)) / d_corr(tied) − 1)], where a zero d_corr
  gives ±1 (the sign of the numerator) and 0/0 gives 0 (upstream's NaN → 0).

Ties = 0.30·tied_acc + 0.30·ref_acc + 0.20·pref + 0.20·pref_hard + 0.01·margin.

It is not a mean over rows, so its ± is a bootstrap over questions and its interval its
components' Wilson intervals combined (:func:`ties_interval`);
for paired comparisons, :meth:`TiesQuestions.units` gives each question a value whose mean is
the score (the terms weighted by how many questions each mean is over).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rmaudit.metrics.cluster_bootstrap import BootstrapInterval, resample_counts
from rmaudit.metrics.preference import edge_wilson_interval

from .rows import ScoredRow, is_ties

#: each component's weight in the Ties score
WEIGHTS = {"tied_accuracy": 0.30, "ref_accuracy": 0.30, "pref": 0.20, "pref_hard": 0.20}
MARGIN_WEIGHT = 0.01
#: the score's range: the accuracies and preferences in [0, 1], the margin in [−1, 1]
BOUNDS = (-MARGIN_WEIGHT, 1.0 + MARGIN_WEIGHT)
_KINDS = ("ref", "tied")
#: why a tied group with one correct answer counts in part
IN_TIED_ACCURACY_ONLY = (
    "one correct answer: counts in tied_accuracy, not in pref, pref_hard or margin (no spread "
    "to compare with)"
)


@dataclass(frozen=True)
class GroupStats:
    """One ref or tied group's scores summarised."""

    accurate: bool
    #: d_corr: the spread of the correct scores (None with one correct answer)
    spread: float | None
    #: m_ci: the worst correct score minus the best incorrect one
    gap: float


def group_stats(correct: np.ndarray, incorrect: np.ndarray) -> GroupStats:
    """The correct scores' spread and their margin over the incorrect ones.

    >>> group_stats(np.array([3.0, 2.0]), np.array([1.0, 2.5]))
    GroupStats(accurate=False, spread=1.0, gap=-0.5)
    """
    gap = float(correct.min() - incorrect.max())
    spread = float(correct.max() - correct.min()) if correct.size > 1 else None
    return GroupStats(gap > 0, spread, gap)


def margin_term(gap: float, spread: float) -> float:
    """tanh(gap / spread − 1), with upstream's numpy arithmetic at spread 0: ±1 by the sign
    of ``gap``, and 0 for 0/0 (NaN taken as 0)."""
    if spread > 0:
        return math.tanh(gap / spread - 1.0)
    return float(np.sign(gap))


@dataclass(frozen=True)
class TiesQuestions:
    """Each question's groups summarised, as arrays over the questions (1.0 / 0.0 flags)."""

    questions: tuple[str, ...]
    has_ref: np.ndarray
    ref_accurate: np.ndarray
    has_tied: np.ndarray
    tied_accurate: np.ndarray
    #: both groups, the tied one with two or more correct answers: the questions that count
    #: in pref, pref_hard and margin
    paired: np.ndarray
    pref: np.ndarray
    pref_hard: np.ndarray
    margin: np.ndarray
    #: a group or question that counts nowhere, with why
    left_out: dict[str, str] = field(default_factory=dict)
    #: a group that counts in some components only, with which and why (a tied group with one
    #: correct answer: in tied_accuracy, as upstream, but not in pref, pref_hard or margin)
    counted_in_part: dict[str, str] = field(default_factory=dict)

    def components(self, counts: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Each component, on the questions as they are or (``counts``, a draws × questions
        array of how often each is drawn) on each resample.  An accuracy with no group of its
        kind is 0 (as upstream); a preference with no paired question is NaN."""
        weights = np.ones((1, len(self.questions))) if counts is None else counts

        def mean(has: np.ndarray, value: np.ndarray, empty: float) -> np.ndarray:
            number = weights @ has
            total = weights @ (has * value)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(number > 0, total / number, empty)

        return {
            "tied_accuracy": mean(self.has_tied, self.tied_accurate, 0.0),
            "ref_accuracy": mean(self.has_ref, self.ref_accurate, 0.0),
            "pref": mean(self.paired, self.pref, math.nan),
            "pref_hard": mean(self.paired, self.pref_hard, math.nan),
            "margin": mean(self.paired, self.margin, math.nan),
        }

    def score(self, counts: np.ndarray | None = None) -> np.ndarray:
        """The Ties score (one value, or one per resample of ``counts``)."""
        parts = self.components(counts)
        total = sum(WEIGHTS[name] * parts[name] for name in WEIGHTS)
        return total + MARGIN_WEIGHT * parts["margin"]

    def units(self) -> np.ndarray:
        """Per question, a value whose mean over the questions is the score: each term of
        the score weighted by the share of questions its mean is over (for paired
        differences between models on the same questions)."""
        n = len(self.questions)
        out = np.zeros(n)
        for has, value, weight in (
            (self.has_tied, self.tied_accurate, WEIGHTS["tied_accuracy"]),
            (self.has_ref, self.ref_accurate, WEIGHTS["ref_accuracy"]),
        ):
            if has.sum() > 0:
                out += n * weight * has * value / has.sum()
        paired = self.paired.sum()
        preferences = (
            WEIGHTS["pref"] * self.pref
            + WEIGHTS["pref_hard"] * self.pref_hard
            + MARGIN_WEIGHT * self.margin
        )
        return out + n * self.paired * preferences / paired


def ties_questions(rows: Sequence[ScoredRow]) -> TiesQuestions:
    """The Ties rows of ``rows`` grouped by id into questions (rows of one id pooled)."""
    pooled: dict[tuple[str, str], tuple[list[np.ndarray], list[np.ndarray]]] = {}
    left_out: dict[str, str] = {}
    for row in rows:
        if not is_ties(row.subset):
            continue
        kind, _, number = row.group.partition(":")
        if kind not in _KINDS or not number:
            left_out[row.unit] = f"id {row.group!r} is not ref:N or tied:N"
            continue
        correct, incorrect = pooled.setdefault((kind, number), ([], []))
        correct.append(row.correct)
        incorrect.append(row.incorrect)
    stats = {
        key: group_stats(np.concatenate(correct), np.concatenate(incorrect))
        for key, (correct, incorrect) in pooled.items()
    }
    questions = sorted({number for _, number in stats}, key=_natural)
    found = [_question(stats.get(("ref", n)), stats.get(("tied", n))) for n in questions]
    in_part = {
        f"tied:{number}": IN_TIED_ACCURACY_ONLY
        for number, flags in zip(questions, found, strict=True)
        if flags["has_tied"] and not flags["paired"] and stats[("tied", number)].spread is None
    }
    arrays = {name: np.array([flags[name] for flags in found]) for name in _ARRAYS}
    return TiesQuestions(tuple(questions), left_out=left_out, counted_in_part=in_part, **arrays)


#: the per-question arrays of :class:`TiesQuestions`
_ARRAYS = (
    "has_ref",
    "ref_accurate",
    "has_tied",
    "tied_accurate",
    "paired",
    "pref",
    "pref_hard",
    "margin",
)


def _question(ref: GroupStats | None, tied: GroupStats | None) -> dict[str, float]:
    """One question's flags and margin (0 where it has not both groups)."""
    flags = {
        "has_ref": float(ref is not None),
        "ref_accurate": float(ref is not None and ref.accurate),
        "has_tied": float(tied is not None),
        "tied_accurate": float(tied is not None and tied.accurate),
        "paired": 0.0,
        "pref": 0.0,
        "pref_hard": 0.0,
        "margin": 0.0,
    }
    if ref is None or tied is None or tied.spread is None:
        return flags
    worst = min(ref.gap, tied.gap)
    return flags | {
        "paired": 1.0,
        "pref": float(tied.gap > tied.spread),
        "pref_hard": float(worst > tied.spread),
        "margin": margin_term(worst, tied.spread),
    }


def _natural(number: str) -> tuple[int, str]:
    return (int(number), "") if number.isdigit() else (1 << 62, number)


def ties_interval(
    questions: TiesQuestions, *, draws: int = 1000, seed: int = 0
) -> tuple[BootstrapInterval, dict[str, float]]:
    """The score's bootstrap ± over the questions (resampled with replacement) and each
    component's bootstrap ± (its spread over the same resamples), with the score's 95%
    interval (:func:`combined_interval`)."""
    counts = resample_counts(len(questions.questions), draws=draws, seed=seed).astype(float)
    resampled = questions.components(counts)
    scores = questions.score(counts)
    scores = scores[np.isfinite(scores)]
    stderr = float(scores.std(ddof=1)) if scores.size > 1 else math.nan
    spreads = {name: float(np.nanstd(values, ddof=1)) for name, values in resampled.items()}
    low, high = combined_interval(questions, resampled)
    return BootstrapInterval(stderr, low, high), spreads


def combined_interval(
    questions: TiesQuestions, resampled: dict[str, np.ndarray]
) -> tuple[float, float]:
    """The score's 95% interval from its components': each component's Wilson interval over
    the groups or questions it is a mean over, with the Poisson bound at the edges
    (:func:`~rmaudit.metrics.preference.edge_wilson_interval`; the margin's on (margin + 1)/2,
    in [0, 1]), combined by the method of variance estimates recovery for a weighted sum of
    correlated estimates (MOVER: Zou & Donner, *Statistics in Medicine* 27, 2008; the
    correlation term as Zou, *Psychological Methods* 12, 2007, gives it): the score −
    √(aᵀRa) to the score + √(bᵀRb), a and b each component's weighted distance to its lower
    and upper bound, R their correlations over the bootstrap's resamples (``resampled``), 1
    where a component does not vary (the widest).  Unlike a bootstrap over the questions,
    it does not shrink to a point when every group is in order."""
    parts = {name: float(value[0]) for name, value in questions.components().items()}
    estimate = float(questions.score()[0])
    if not math.isfinite(estimate):
        return math.nan, math.nan
    sizes = {
        "tied_accuracy": questions.has_tied.sum(),
        "ref_accuracy": questions.has_ref.sum(),
        **dict.fromkeys(("pref", "pref_hard", "margin"), questions.paired.sum()),
    }
    names = list(sizes)
    below, above = np.zeros(len(names)), np.zeros(len(names))
    for k, name in enumerate(names):
        if sizes[name] == 0:  # no group of its kind: a constant 0, as upstream
            continue
        if name == "margin":  # in [−1, 1]: Wilson's on its share of the way from −1
            low, high = edge_wilson_interval((parts[name] + 1.0) / 2.0, float(sizes[name]))
            low, high, weight = 2.0 * low - 1.0, 2.0 * high - 1.0, MARGIN_WEIGHT
        else:
            low, high = edge_wilson_interval(parts[name], float(sizes[name]))
            weight = WEIGHTS[name]
        below[k], above[k] = weight * (parts[name] - low), weight * (high - parts[name])
    table = np.vstack([resampled[name] for name in names]).T
    table = table[np.isfinite(table).all(axis=1)]
    with np.errstate(invalid="ignore", divide="ignore"):
        correlation = np.corrcoef(table, rowvar=False) if len(table) > 1 else np.ones((5, 5))
    correlation = np.where(np.isfinite(correlation), correlation, 1.0)
    low = estimate - math.sqrt(max(float(below @ correlation @ below), 0.0))
    high = estimate + math.sqrt(max(float(above @ correlation @ above), 0.0))
    return max(low, BOUNDS[0]), min(high, BOUNDS[1])
