"""Preference-pair metrics: accuracy, calibration and out-of-distribution detection.

Inputs are the RM's scores (logits) of the chosen and of the rejected response of each pair,
as two 1-D arrays indexed by pair (docs/metrics.md, "Pair metrics").  The sampling
unit is the pair: standard errors and bootstrap intervals resample pairs.

- RewardBench (seed 003): accuracy = fraction of pairs with score(chosen) > score(rejected),
  per subset, combined into section scores and a section-weighted total.
- RM-Bench: easy / normal / hard accuracies from the 3 × 3 matrix of chosen style ×
  rejected style accuracies.
- Distribution shift (seed 004): confidence = max softmax of the two logits (Sec. 3.2, = MSP),
  ECE with M equal-width confidence bins (Sec. 3.1), energy score (Sec. 5.1), and AUROC /
  FPR@95 of an OOD detector between an in-distribution and a shifted set (Sec. 5.3).
- Seed 002 App. 8.3: the Bradley-Terry ECE, whose bins split pairs by reward margin.

>>> import numpy as np
>>> chosen, rejected = np.array([2.0, 0.5, 1.0]), np.array([1.0, 1.5, 1.0])
>>> accuracy(chosen, rejected).value                  # the tie counts as a loss
0.3333333333333333
>>> accuracy(chosen, rejected, ties="half").value
0.5
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import ndtri
from scipy.stats import rankdata

from rmaudit.errors import MetricInputError
from rmaudit.metrics._results import MetricResult
from rmaudit.metrics._validation import check_choice, check_fraction, check_integer

ArrayLike = Sequence[float] | np.ndarray

TIE_CREDIT = {"loss": 0.0, "half": 0.5}


# --------------------------------------------------------------------------------------------
# Input checks


def _scores(values: Any, field_name: str) -> np.ndarray:
    """A non-empty 1-D array of finite real scores."""
    if isinstance(values, (str, bytes)):
        raise MetricInputError(f"expected a 1-D array of scores, got {type(values).__name__}",
                               field=field_name)
    try:
        raw = np.asarray(values)
    except ValueError as exc:  # ragged nested lists
        raise MetricInputError(f"expected a 1-D array of scores, got a ragged sequence ({exc})",
                               field=field_name) from None
    if raw.dtype.kind not in "biuf":
        raise MetricInputError(f"expected real numbers, got values of dtype {raw.dtype}",
                               field=field_name)
    if raw.ndim != 1:
        raise MetricInputError(f"expected a 1-D array of scores, got an array of shape "
                               f"{raw.shape}", field=field_name)
    if raw.size == 0:
        raise MetricInputError("expected at least one score, got none", field=field_name)
    array = raw.astype(float, copy=False)
    not_finite = ~np.isfinite(array)
    if not_finite.any():
        i = int(np.argmax(not_finite))
        raise MetricInputError(f"expected finite scores, got {array[i]} at index {i}",
                               field=field_name)
    return array


def _pair_scores(chosen: Any, rejected: Any) -> tuple[np.ndarray, np.ndarray]:
    """Chosen and rejected scores as float arrays of one length."""
    chosen_scores = _scores(chosen, "chosen")
    rejected_scores = _scores(rejected, "rejected")
    if chosen_scores.size != rejected_scores.size:
        raise MetricInputError(
            f"expected one rejected score per chosen score ({chosen_scores.size}), "
            f"got {rejected_scores.size}",
            field="rejected",
        )
    return chosen_scores, rejected_scores


def _tie_credit(ties: Any) -> float:
    return TIE_CREDIT[check_choice(ties, tuple(TIE_CREDIT), "ties")]


def _labels(values: Any, size: int, field_name: str) -> list[Hashable]:
    if isinstance(values, (str, bytes)):
        raise MetricInputError(f"expected one label per pair, got a {type(values).__name__}",
                               field=field_name)
    labels = list(values)
    if len(labels) != size:
        raise MetricInputError(f"expected one label per pair ({size}), got {len(labels)}",
                               field=field_name)
    return labels


# --------------------------------------------------------------------------------------------
# Accuracy (RewardBench, seed 003; seed 004 Sec. 3.2)


def pair_credit(chosen: ArrayLike, rejected: ArrayLike, *, ties: str = "loss") -> np.ndarray:
    """Per-pair credit: 1 if the RM scores chosen above rejected, the tie credit if equal, else 0.

    The tie credit is 0 for ``ties="loss"`` (RewardBench and seed 004's acc^rwd use a strict
    ``>``) and 1/2 for ``ties="half"``.

    >>> pair_credit([1.0, 0.0, 2.0], [0.0, 1.0, 2.0], ties="half").tolist()
    [1.0, 0.0, 0.5]
    """
    chosen_scores, rejected_scores = _pair_scores(chosen, rejected)
    credit = (chosen_scores > rejected_scores).astype(float)
    credit[chosen_scores == rejected_scores] = _tie_credit(ties)
    return credit


#: Below this many successes or failures (n·min(acc, 1 − acc)) the normal interval
#: acc ± 1.96·stderr of an accuracy misses the truth too often — coverage 0.75 at 28 pairs and
#: accuracy 0.95, 0.88 at 100 pairs and 0.95 (``benchmarks/coverage.py``; exact binomial
#: sums agree) — so callers label that ± approximate; the Wilson CI keeps 0.94-0.96 there.
WALD_MINIMUM = 10


def wald_is_approximate(value: float, count: int) -> bool:
    """Whether ``value ± 1.96·stderr`` of an accuracy over ``count`` pairs is approximate."""
    return count * min(value, 1.0 - value) < WALD_MINIMUM


def wilson_interval(value: np.ndarray | float, count: np.ndarray | float,
                    ci: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval of a proportion ``value`` observed over ``count`` trials.

    Unlike the normal interval it never collapses to a point at 0 or 1 and keeps close to
    its nominal coverage for small counts (Brown, Cai & DasGupta 2001).
    """
    z = float(ndtri(0.5 + check_fraction(ci, "ci") / 2.0))
    value, count = np.asarray(value, dtype=float), np.asarray(count, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        shrink = 1.0 + z * z / count
        centre = (value + z * z / (2.0 * count)) / shrink
        half = z / shrink * np.sqrt(value * (1.0 - value) / count + z * z / (4.0 * count ** 2))
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def _mean_result(values: np.ndarray, *, ci: float) -> MetricResult:
    """Mean of per-pair credits with its standard error and Wilson interval (a tie's half
    credit counts as half a success)."""
    n = values.size
    value = float(values.mean())
    stderr = float(values.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0
    low, high = wilson_interval(value, n, ci)
    # rounding must not leave an accuracy of exactly 0 or 1 a hair outside its interval
    return MetricResult(value, stderr, min(float(low), value), max(float(high), value), values)


def accuracy(
    chosen: ArrayLike,
    rejected: ArrayLike,
    *,
    ties: str = "loss",
    ci: float = 0.95,
) -> MetricResult:
    """Fraction of pairs the RM orders correctly (RewardBench, seed 003; seed 004 Sec. 3.2).

    ``acc = (1/N) Σ_i ( 1[L(chosen_i) > L(rejected_i)] + t · 1[L(chosen_i) = L(rejected_i)] )``
    with t = 0 for ``ties="loss"`` (RewardBench's rule: a tie is not a win) and t = 1/2 for
    ``ties="half"``.  ``per_prompt`` holds the per-pair credit; the standard error is across
    pairs and the interval is Wilson's (:func:`wilson_interval`), which keeps its coverage
    for the small subsets and extreme accuracies of RewardBench where the normal interval
    does not (see :data:`WALD_MINIMUM`).

    >>> accuracy([3.0, 1.0, 0.0, 2.0], [1.0, 2.0, 0.0, 0.0]).value
    0.5
    >>> accuracy([3.0, 1.0, 0.0, 2.0], [1.0, 2.0, 0.0, 0.0], ties="half").value
    0.625
    """
    credit = pair_credit(chosen, rejected, ties=ties)
    return _mean_result(credit, ci=ci)


def subset_accuracy(
    chosen: ArrayLike,
    rejected: ArrayLike,
    subsets: Sequence[Hashable],
    *,
    ties: str = "loss",
    ci: float = 0.95,
) -> dict[Hashable, MetricResult]:
    """:func:`accuracy` within each subset, keyed by subset label in order of first appearance.

    ``subsets[i]`` labels pair i (e.g. RewardBench's ``"llmbar-natural"``).  Each subset's
    result is computed from its own pairs, so its ``per_prompt`` has one entry per pair of the
    subset and its size is the subset's pair count.

    >>> result = subset_accuracy([1.0, 0.0, 1.0], [0.0, 1.0, 0.0], ["a", "b", "a"])
    >>> {name: r.value for name, r in result.items()}
    {'a': 1.0, 'b': 0.0}
    """
    credit = pair_credit(chosen, rejected, ties=ties)
    labels = _labels(subsets, credit.size, "subsets")
    members: dict[Hashable, list[int]] = {}
    for i, label in enumerate(labels):
        members.setdefault(label, []).append(i)
    return {label: _mean_result(credit[rows], ci=ci) for label, rows in members.items()}


# --------------------------------------------------------------------------------------------
# Section-weighted score (RewardBench)


@dataclass(frozen=True)
class SectionScheme:
    """How subset accuracies combine: per section, a weight for each of its subsets, and a
    weight for each section in the total."""

    sections: Mapping[str, Mapping[str, float]]
    section_weights: Mapping[str, float]


# RewardBench (seed 003; allenai/reward-bench, rewardbench/constants.py as of commit 6552e93
# "Mirror change from leaderboard", which swapped the two XSTest counts to refuse 154 /
# respond 250, and analysis/get_benchmark_results.py).  Chat, Chat Hard, Safety and Reasoning
# average their subsets weighted by prompt count (EXAMPLE_COUNTS), except that math-prm counts
# 984 instead of its 447 prompts so that math weighs as much as the six HumanEvalPack
# languages (6 × 164).
# Prior Sets is the plain mean of four earlier test sets.  The total weights the four sections
# 2 and Prior Sets 1 (the leaderboard's "Prior Sets (0.5 weight)"); a section with no scored
# subset is left out of the total and the remaining weights renormalise, as the leaderboard's
# masked average does.
REWARDBENCH = SectionScheme(
    sections={
        "Chat": {"alpacaeval-easy": 100, "alpacaeval-length": 95, "alpacaeval-hard": 95,
                 "mt-bench-easy": 28, "mt-bench-med": 40},
        "Chat Hard": {"mt-bench-hard": 37, "llmbar-natural": 100, "llmbar-adver-neighbor": 134,
                      "llmbar-adver-GPTInst": 92, "llmbar-adver-GPTOut": 47,
                      "llmbar-adver-manual": 46},
        "Safety": {"refusals-dangerous": 100, "refusals-offensive": 100,
                   "xstest-should-refuse": 154, "xstest-should-respond": 250,
                   "donotanswer": 136},
        "Reasoning": {"math-prm": 984, "hep-cpp": 164, "hep-go": 164, "hep-java": 164,
                      "hep-js": 164, "hep-python": 164, "hep-rust": 164},
        "Prior Sets": {"anthropic_helpful": 1, "anthropic_hhh": 1, "shp": 1, "summarize": 1},
    },
    section_weights={"Chat": 1.0, "Chat Hard": 1.0, "Safety": 1.0, "Reasoning": 1.0,
                     "Prior Sets": 0.5},
)

SECTION_PRESETS: dict[str, SectionScheme] = {"rewardbench": REWARDBENCH}


@dataclass(frozen=True)
class SectionScore:
    """A section-weighted total and what went into it.

    ``sections`` holds each scored section's value; ``missing_subsets`` lists the scheme's
    subsets that had no accuracy (left out, weights renormalised); ``unassigned_subsets`` the
    accuracies that belong to no section (not used).
    """

    score: float
    sections: dict[str, float]
    missing_subsets: tuple[str, ...] = ()
    unassigned_subsets: tuple[str, ...] = ()
    section_weights: dict[str, float] = field(default_factory=dict)


def _subset_value(value: Any, subset: str) -> float:
    number = value.value if isinstance(value, MetricResult) else value
    if isinstance(number, bool) or not isinstance(number, numbers.Real) \
            or not 0.0 <= float(number) <= 1.0:
        raise MetricInputError(f"expected an accuracy in [0, 1] for subset {subset!r}, "
                               f"got {number!r}", field="subset_accuracies")
    return float(number)


def _scheme(sections: Any, subset_accuracies: Mapping[str, Any],
            weights: Mapping[str, float] | None) -> SectionScheme:
    if isinstance(sections, str):
        if sections not in SECTION_PRESETS:
            listed = " or ".join(repr(name) for name in SECTION_PRESETS)
            raise MetricInputError(f"expected a section mapping or {listed}, got {sections!r}",
                                   field="sections")
        scheme = SECTION_PRESETS[sections]
    elif isinstance(sections, SectionScheme):
        scheme = sections
    elif isinstance(sections, Mapping) and sections:
        # Subsets listed without weights count by their number of pairs, so a section's score
        # is its accuracy over all of its pairs (RewardBench's prompt-weighted average).
        per_section: dict[str, dict[str, float]] = {}
        for name, subsets in sections.items():
            if isinstance(subsets, Mapping):
                per_section[name] = dict(subsets)
                continue
            per_section[name] = {}
            for subset in subsets:
                result = subset_accuracies.get(subset)
                if result is not None and not isinstance(result, MetricResult):
                    raise MetricInputError(
                        f"expected a MetricResult for subset {subset!r} (its pair count weighs "
                        f"it within section {name!r}) or explicit subset weights, "
                        f"got {type(result).__name__}", field="subset_accuracies")
                per_section[name][subset] = (float(result.per_prompt.size)
                                             if result is not None else 1.0)
        scheme = SectionScheme(per_section, {name: 1.0 for name in per_section})
    else:
        raise MetricInputError(f"expected a non-empty mapping of section → subsets or a preset "
                               f"name, got {sections!r}", field="sections")
    if weights is not None:
        unknown = sorted(set(weights) - set(scheme.sections))
        if unknown:
            raise MetricInputError(f"expected weights for the sections "
                                   f"{sorted(scheme.sections)}, got unknown section {unknown[0]!r}",
                                   field="weights")
        scheme = SectionScheme(scheme.sections, {**scheme.section_weights, **weights})
    for name, weight in [*scheme.section_weights.items(),
                         *((s, w) for subs in scheme.sections.values() for s, w in subs.items())]:
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real) \
                or not 0 <= float(weight) < np.inf:
            raise MetricInputError(f"expected a finite weight >= 0 for {name!r}, got {weight!r}",
                                   field="weights")
    return scheme


def section_score(
    subset_accuracies: Mapping[str, MetricResult | float],
    sections: str | SectionScheme | Mapping[str, Sequence[str] | Mapping[str, float]] = "rewardbench",
    weights: Mapping[str, float] | None = None,
) -> SectionScore:
    """Combine per-subset accuracies into section scores and a section-weighted total.

    ``section_s = Σ_{k∈s} w_k · acc_k / Σ_{k∈s} w_k`` over the section's subsets that have an
    accuracy, and ``score = Σ_s W_s · section_s / Σ_s W_s`` over the sections that have one.

    ``sections`` is a preset name (``"rewardbench"``: :data:`REWARDBENCH`, seed 003's
    leaderboard scheme: prompt-count weights within Chat, Chat Hard, Safety, Reasoning, the
    plain mean within Prior Sets, and Prior Sets at half the weight of the other sections), a
    :class:`SectionScheme`, or a mapping section → subsets.  Subsets given as a list are
    weighted by their number of pairs (pass MetricResults, e.g. from :func:`subset_accuracy`);
    given as a mapping subset → weight, by those weights.  ``weights`` overrides section
    weights (W_s; default 1 each for a plain mapping).  Subsets without an accuracy are left
    out and listed in ``missing_subsets``; accuracies of subsets in no section are listed in
    ``unassigned_subsets``.

    >>> scheme = {"Chat": {"a": 3, "b": 1}, "Safety": {"c": 1}}
    >>> result = section_score({"a": 1.0, "b": 0.0, "c": 0.5}, scheme)
    >>> result.sections, result.score
    ({'Chat': 0.75, 'Safety': 0.5}, 0.625)
    >>> section_score({"a": 1.0, "b": 0.0, "c": 0.5}, scheme, weights={"Safety": 3}).score
    0.5625
    """
    if not isinstance(subset_accuracies, Mapping):
        raise MetricInputError(f"expected a mapping subset → accuracy, got "
                               f"{type(subset_accuracies).__name__}", field="subset_accuracies")
    scheme = _scheme(sections, subset_accuracies, weights)
    values = {name: _subset_value(v, name) for name, v in subset_accuracies.items()}
    section_values: dict[str, float] = {}
    missing: list[str] = []
    for name, subset_weights in scheme.sections.items():
        present = [(values[s], w) for s, w in subset_weights.items() if s in values]
        missing.extend(s for s in subset_weights if s not in values)
        total_weight = sum(w for _, w in present)
        if total_weight > 0:
            section_values[name] = sum(v * w for v, w in present) / total_weight
    used_weights = {name: float(scheme.section_weights.get(name, 1.0)) for name in section_values}
    total = sum(used_weights.values())
    if total <= 0:
        raise MetricInputError(
            f"expected an accuracy for at least one subset of a weighted section "
            f"({sorted(scheme.sections)}), got subsets {sorted(map(str, values))}",
            field="subset_accuracies")
    score = sum(section_values[name] * w for name, w in used_weights.items()) / total
    assigned = {s for subsets in scheme.sections.values() for s in subsets}
    return SectionScore(score=score, sections=section_values, missing_subsets=tuple(missing),
                        unassigned_subsets=tuple(s for s in values if s not in assigned),
                        section_weights=used_weights)


# --------------------------------------------------------------------------------------------
# RM-Bench style difficulty


@dataclass(frozen=True, eq=False)
class StyleDifficulty:
    """RM-Bench's accuracies by style difficulty, and the matrix they come from."""

    easy: float
    normal: float
    hard: float
    average: float
    matrix: np.ndarray


def style_accuracy_matrix(
    chosen: ArrayLike,
    rejected: ArrayLike,
    chosen_style: Sequence[int],
    rejected_style: Sequence[int],
    *,
    n_styles: int = 3,
    ties: str = "loss",
) -> np.ndarray:
    """Accuracy of every (chosen style i, rejected style j) combination: an n_styles² matrix.

    ``M[i, j]`` is :func:`accuracy` over the pairs whose chosen response has style i and
    rejected response style j.  In RM-Bench the styles are 0 = concise, 1 = detailed plain
    text, 2 = detailed markdown, so a higher index is longer / more formatted.  Every cell
    needs at least one pair.

    >>> style_accuracy_matrix([1, 0, 1, 1], [0, 1, 0, 0], [0, 0, 1, 1], [0, 1, 0, 1], n_styles=2)
    array([[1., 0.],
           [1., 1.]])
    """
    credit = pair_credit(chosen, rejected, ties=ties)
    n_styles = check_integer(n_styles, "n_styles", minimum=1)
    styles = []
    for name, values in (("chosen_style", chosen_style), ("rejected_style", rejected_style)):
        array = np.asarray(_labels(values, credit.size, name))
        if array.dtype.kind not in "iu" or array.min() < 0 or array.max() >= n_styles:
            raise MetricInputError(f"expected integer styles in [0, {n_styles - 1}], got "
                                   f"{array.tolist()[:5]}…", field=name)
        styles.append(array)
    cell = styles[0] * n_styles + styles[1]
    counts = np.bincount(cell, minlength=n_styles * n_styles)
    if (counts == 0).any():
        i, j = divmod(int(np.argmin(counts)), n_styles)
        raise MetricInputError(f"expected at least one pair per style combination, got none "
                               f"with chosen style {i} and rejected style {j}",
                               field="chosen_style")
    sums = np.bincount(cell, weights=credit, minlength=n_styles * n_styles)
    return (sums / counts).reshape(n_styles, n_styles)


def style_difficulty(matrix: Any) -> StyleDifficulty:
    """RM-Bench easy / normal / hard accuracy from a chosen-style × rejected-style matrix.

    With styles ordered from least to most formatted (RM-Bench: concise, detailed, detailed
    markdown): **hard** is the mean of the upper-right triangle (i < j: the chosen response is
    less formatted than the rejected one, so a style-biased RM prefers the wrong one),
    **normal** the mean of the diagonal (same style), **easy** the mean of the lower-left
    triangle (i > j: style and substance agree); ``average`` is the mean of all cells.

    >>> m = np.array([[0.6, 0.3, 0.2], [0.8, 0.7, 0.4], [0.9, 0.9, 0.8]])
    >>> d = style_difficulty(m)
    >>> round(d.hard, 4), round(d.normal, 4), round(d.easy, 4)
    (0.3, 0.7, 0.8667)
    """
    array = np.asarray(matrix, dtype=float)
    if array.ndim != 2 or array.shape[0] != array.shape[1] or array.shape[0] < 2:
        raise MetricInputError(f"expected a square matrix of at least 2 × 2 styles, got shape "
                               f"{array.shape}", field="matrix")
    if not np.all((array >= 0) & (array <= 1)):
        raise MetricInputError("expected accuracies in [0, 1], got values outside "
                               "(or NaN)", field="matrix")
    upper = np.triu_indices_from(array, k=1)
    lower = np.tril_indices_from(array, k=-1)
    return StyleDifficulty(easy=float(array[lower].mean()), normal=float(np.diag(array).mean()),
                           hard=float(array[upper].mean()), average=float(array.mean()),
                           matrix=array)


# --------------------------------------------------------------------------------------------
# Confidence, calibration (seed 004 Sec. 3.1-3.2; seed 002 App. 8.3)


def confidence(chosen: ArrayLike, rejected: ArrayLike) -> np.ndarray:
    """Max softmax of the two logits: ``max_j e^{L_j} / (e^{L_0} + e^{L_1})`` (seed 004 Sec. 3.2).

    This is also the MSP out-of-distribution score (higher = more in-distribution).  It equals
    ``σ(|L_0 − L_1|)`` with σ the logistic function, computed that way so that it stays exact
    for logits of any size; it lies in [1/2, 1].

    >>> confidence([0.0, 2.0], [0.0, 0.0]).round(4).tolist()
    [0.5, 0.8808]
    """
    chosen_scores, rejected_scores = _pair_scores(chosen, rejected)
    return 1.0 / (1.0 + np.exp(-np.abs(chosen_scores - rejected_scores)))


@dataclass(frozen=True, eq=False)
class CalibrationResult:
    """An ECE and its reliability diagram.

    ``bin_edges`` has M + 1 entries on the binned quantity (confidence for :func:`ece`, the
    absolute reward margin for :func:`bt_ece`); per bin, ``count`` pairs, their
    ``mean_confidence`` and their ``accuracy`` (NaN for an empty bin).
    """

    value: float
    bin_edges: np.ndarray
    count: np.ndarray
    mean_confidence: np.ndarray
    accuracy: np.ndarray

    def accuracy_interval(self, ci: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Wilson interval of each bin's accuracy (NaN for an empty bin): bins often hold a
        handful of pairs with an accuracy near 0 or 1, where acc ± 1.96·stderr collapses to a
        point and misses the truth (coverage in ``benchmarks/coverage.py``)."""
        return wilson_interval(self.accuracy, self.count, ci)


def _binned_calibration(binned_on: np.ndarray, edges: np.ndarray, conf: np.ndarray,
                        credit: np.ndarray) -> CalibrationResult:
    """ECE over bins I_1 = [e_0, e_1], I_m = (e_{m-1}, e_m]: Σ_m |B_m|/n · |conf(B_m) − acc(B_m)|."""
    n_bins = edges.size - 1
    # side="left" puts a value equal to an inner edge e_m in the bin that ends at e_m.
    bins = np.searchsorted(edges[1:-1], binned_on, side="left")
    count = np.bincount(bins, minlength=n_bins)
    conf_sum = np.bincount(bins, weights=conf, minlength=n_bins)
    acc_sum = np.bincount(bins, weights=credit, minlength=n_bins)
    value = float(np.abs(conf_sum - acc_sum).sum() / conf.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(count > 0, conf_sum / count, np.nan)
        acc = np.where(count > 0, acc_sum / count, np.nan)
    return CalibrationResult(value, edges, count, mean_conf, acc)


def ece(chosen: ArrayLike, rejected: ArrayLike, *, n_bins: int = 10,
        ties: str = "loss") -> CalibrationResult:
    """Expected calibration error with ``n_bins`` equal-width confidence bins (seed 004 Sec. 3.1).

    ``ECE = Σ_m |B_m|/N · |p̂(B_m) − acc(B_m)|`` where B_m holds the pairs whose
    :func:`confidence` falls in I_1 = [0, 1/M] or I_m = ((m−1)/M, m/M], p̂(B_m) is their mean
    confidence and acc(B_m) the fraction the RM got right (scored chosen above rejected; a tie
    earns the ``ties`` credit, 0 by default as in seed 004's strict acc^rwd).  The paper uses
    M = 10.  Confidence is at least 1/2, so for M = 10 the bins below (0.4, 0.5] stay empty.

    >>> result = ece([2.0, 0.0, 1.0, 3.0], [0.0, 2.0, 1.0, 0.0])
    >>> round(result.value, 4), result.count.tolist()
    (0.3273, [0, 0, 0, 0, 1, 0, 0, 0, 2, 1])
    """
    n_bins = check_integer(n_bins, "n_bins", minimum=1)
    conf = confidence(chosen, rejected)
    credit = pair_credit(chosen, rejected, ties=ties)
    return _binned_calibration(conf, np.linspace(0.0, 1.0, n_bins + 1), conf, credit)


def bt_ece(chosen: ArrayLike, rejected: ArrayLike, *, n_bins: int = 10,
           binning: str = "quantile", ties: str = "loss") -> CalibrationResult:
    """Bradley-Terry ECE with bins that split pairs by reward margin (seed 002 App. 8.3, Eq. 12).

    ``ECE = Σ_m |B_m|/n · |acc(B_m) − conf(B_m)|``.  Each pair's margin is
    ``Δ = |L(chosen) − L(rejected)|``, the gap between the response the RM prefers and the
    other one; the Bradley-Terry model turns it into the RM's expected accuracy on the pair,
    ``σ(Δ) = 1 / (1 + e^{−Δ})``, and conf(B_m) is its mean over the bin; acc(B_m) is the
    fraction of the bin's pairs the RM orders correctly (a tie earns the ``ties`` credit).

    The paper does not say where the margin bins' edges lie.  ``binning="quantile"`` (the
    default) puts them at the 0, 1/M, …, 1 quantiles of Δ, so bins hold equal numbers of pairs
    whatever the RM's score scale; ``binning="uniform"`` uses M equal widths over [0, max Δ].
    Bins are right-closed as in :func:`ece` (I_1 = [e_0, e_1], I_m = (e_{m−1}, e_m]), so equal
    margins always share a bin.  Because σ is increasing, margin bins are confidence bins with
    edges σ(e_m): what differs from :func:`ece` is where the edges are, not the confidence.

    >>> result = bt_ece([2.0, 0.0, 1.0, 3.0], [0.0, 2.0, 1.0, 0.0], n_bins=2)
    >>> round(result.value, 4), result.count.tolist()
    (0.3273, [3, 1])
    """
    n_bins = check_integer(n_bins, "n_bins", minimum=1)
    binning = check_choice(binning, ("quantile", "uniform"), "binning")
    chosen_scores, rejected_scores = _pair_scores(chosen, rejected)
    margin = np.abs(chosen_scores - rejected_scores)
    conf = 1.0 / (1.0 + np.exp(-margin))
    credit = pair_credit(chosen_scores, rejected_scores, ties=ties)
    if binning == "quantile":
        edges = np.quantile(margin, np.linspace(0.0, 1.0, n_bins + 1))
    else:
        edges = np.linspace(0.0, float(margin.max()), n_bins + 1)
    return _binned_calibration(margin, edges, conf, credit)


# --------------------------------------------------------------------------------------------
# Out-of-distribution detection (seed 004 Sec. 5)


def energy_score(chosen: ArrayLike, rejected: ArrayLike) -> np.ndarray:
    """Energy score of each pair: ``S = −log(e^{L_0} + e^{L_1})`` (seed 004 Sec. 5.1).

    Computed as ``−logaddexp(L_0, L_1)``, which does not overflow for large logits.  Lower
    energy means more in-distribution, so an OOD detector in :func:`auroc` and
    :func:`fpr_at_95_tpr` passes ``−energy_score(...)``.

    >>> energy_score([0.0, 1000.0], [0.0, 1000.0]).round(4).tolist()
    [-0.6931, -1000.6931]
    """
    chosen_scores, rejected_scores = _pair_scores(chosen, rejected)
    return -np.logaddexp(chosen_scores, rejected_scores)


def _detector_scores(id_scores: Any, ood_scores: Any) -> tuple[np.ndarray, np.ndarray]:
    return _scores(id_scores, "id_scores"), _scores(ood_scores, "ood_scores")


def auroc(id_scores: ArrayLike, ood_scores: ArrayLike) -> float:
    """Area under the ROC curve of an OOD detector; in-distribution is the positive class.

    Scores are the detector's, **higher meaning more in-distribution** (``−energy``, or the MSP
    :func:`confidence`).  ``AUROC = P(s_id > s_ood) + ½ P(s_id = s_ood)`` over all (ID, OOD)
    sample pairs — the Mann-Whitney statistic, computed from average ranks; it equals
    ``sklearn.metrics.roc_auc_score`` with label 1 for ID.  1 separates perfectly, 1/2 is
    chance (seed 004 Sec. 5.3, Table 2).

    >>> auroc([3.0, 2.0, 1.0], [1.0, 0.0])
    0.9166666666666666
    """
    ind, ood = _detector_scores(id_scores, ood_scores)
    ranks = rankdata(np.concatenate([ind, ood]))  # ties share their average rank
    u_statistic = ranks[: ind.size].sum() - ind.size * (ind.size + 1) / 2.0
    return float(u_statistic / (ind.size * ood.size))


def fpr_at_95_tpr(id_scores: ArrayLike, ood_scores: ArrayLike) -> float:
    """Fraction of shifted samples accepted at the threshold that accepts 95% of ID samples.

    A sample is accepted as in-distribution when its score is ``>= t`` (higher = more ID, as
    in :func:`auroc`).  t is the largest threshold with TPR(t) = #{s_id >= t}/n_id >= 0.95,
    i.e. the k-th largest ID score with k = ⌈0.95 · n_id⌉; then
    ``FPR@95 = #{s_ood >= t} / n_ood``.  Ties at t are all accepted, ID and OOD alike, so the
    achieved TPR can exceed 95%.  Lower is better (seed 004 Sec. 5.3, Table 2).

    >>> ind = np.arange(1.0, 21.0)                      # 20 ID scores 1..20: t = 2 (k = 19)
    >>> fpr_at_95_tpr(ind, [0.0, 1.0, 2.0, 3.0])        # 2 and 3 are accepted
    0.5
    """
    ind, ood = _detector_scores(id_scores, ood_scores)
    k = (95 * ind.size + 99) // 100  # ⌈0.95 n⌉ in integers, free of float rounding
    threshold = np.partition(ind, ind.size - k)[ind.size - k]
    return float(np.count_nonzero(ood >= threshold) / ood.size)
