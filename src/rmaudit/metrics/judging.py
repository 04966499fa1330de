"""Metrics of a pairwise judge shown every pair in both orders (docs/judges.md).

Each pair i has a verdict with the chosen answer shown first (``cf``) and one with the
rejected answer shown first (``rf``), each "first", "second", "tie" or "unparsed".  As in
*Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena* (arXiv 2306.05685, Sec. 3.3, Table 2)
each pair is judged in both orders, so that a judge's preference for a position is measured
rather than averaged into its accuracy:

* **accuracy** (both orders averaged): per pair, the mean over its parsed orders of the credit
  1 (chosen preferred), ½ (tie), 0 (rejected preferred); pairs unparsed in both orders are
  left out and counted.  Also the accuracy in each order alone.
* **position bias**: the share of decisive verdicts (ties and parse failures left out) that
  prefer the answer shown first, minus ½ (+½: always the first; −½: always the second).
* **consistency**: the share of pairs parsed in both orders whose verdict survives the swap
  (the same answer preferred, or a tie both times) — MT-bench's "consistency".
* **tie rate**, **parse-failure rate**: shares of showings.
* **reward-bench's convention** (*RewardBench*, arXiv 2403.13787, its generative judges): one
  seeded random order per pair, a tie ½, a parse failure 0; its spread across seeds is the
  run-to-run variation an unseeded order adds.

Every ± is a standard error across pairs, clustered by prompt when pairs share one
(:func:`~rmaudit.metrics.preference.clustered_stderr`); a ratio (position bias, tie rate) has
the delta-method (linearised) standard error of a ratio of means (Cochran, *Sampling
Techniques*, 1977, Sec. 6.4).  Every value but the position bias is a proportion, so its
95% interval is Wilson's score interval at the effective count p(1 − p)/SE² with
Student's t quantile at (clusters − 1) degrees of freedom, as Korn & Graubard adapt a
proportion's interval to clustered survey data ("Confidence intervals for proportions with
small expected number of positive counts estimated from survey data", *Survey Methodology*
24, 1998): value ± 1.96 SE under-covers at 30 prompts (0.920 for the accuracy in one order)
and for a rate near 0 (0.931 for a 5% tie rate at 100 pairs).  The position bias is a
difference of two such shares, the pairs that follow each position, and its interval theirs
combined (:mod:`rmaudit.metrics.position_bias`).  Their coverage on simulated judges is
measured in benchmarks/coverage_judges.py and benchmarks/coverage_position_bias.py.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics.position_bias import few_following, position_bias_interval
from rmaudit.metrics.preference import clustered_stderr

_VERDICTS = ("first", "second", "tie", "unparsed")


@dataclass(frozen=True)
class Estimate:
    """A value with its standard error and 95% interval over ``n`` units (pairs or
    showings), NaN when no unit is defined; ``skipped`` units were left out (undefined
    there)."""

    value: float
    stderr: float
    n: int
    skipped: int = 0
    ci: tuple[float, float] = (math.nan, math.nan)
    #: the interval rests on a few events (:func:`few_events`): its coverage is approximate
    few: bool = False

    def shifted(self, by: float) -> Estimate:
        low, high = self.ci
        return Estimate(
            self.value + by, self.stderr, self.n, self.skipped, (low + by, high + by), self.few
        )


#: below this many events (or non-events) a proportion's interval is approximate
FEW_EVENTS = 5


def few_events(value: float, stderr: float) -> bool:
    """Whether a proportion's interval rests on between 0 and :data:`FEW_EVENTS` events (or
    non-events), counted at the effective count p(1 − p)/SE².  There the coverage of Wilson's
    interval dips and rises with the true rate (Brown, Cai & DasGupta 2001, Sec. 4.1: 0.92 at
    one event expected in 200 showings, 0.98 at 0.2; benchmarks/coverage_judges.py); with no
    event at all the interval (at the actual count) covers any rate that would likely have
    shown one, so it is not flagged.

    >>> few_events(3 / 200, math.sqrt(0.015 * 0.985 / 200)), few_events(0.0, 0.0)
    (True, False)
    """
    if not (math.isfinite(value) and math.isfinite(stderr)) or stderr <= 0:
        return False
    variance = value * (1.0 - value)
    if variance <= 0:
        return False
    events = variance / stderr**2 * min(value, 1.0 - value)
    return 0 < events < FEW_EVENTS - 0.5


def proportion_interval(value: float, stderr: float, clusters: int) -> tuple[float, float]:
    """The 95% interval of a proportion ``value`` with standard error ``stderr`` over
    ``clusters`` independent units: Wilson's score interval (Brown, Cai & DasGupta 2001) at
    the effective count p(1 − p)/SE², with Student's t quantile at ``clusters`` − 1 degrees
    of freedom (Korn & Graubard, *Survey Methodology* 24, 1998).  Where no spread is seen — a
    rate observed at 0 or 1, or every unit alike — the effective count is undefined and the
    interval is Wilson's at the count of independent units, ``clusters`` (the prompts where
    pairs share one: LLMBar's 0 of 419 pairs on 418 prompts is [0, t²/(418 + t²)]), so a rare
    event not seen in this sample is not called impossible.  An undefined SE, NaN.

    >>> [round(b, 4) for b in proportion_interval(0.5, 0.05, 100)]
    [0.4027, 0.5973]
    >>> [round(b, 4) for b in proportion_interval(0.0, 0.0, 418)]
    [0.0, 0.0092]
    """
    if not (math.isfinite(value) and math.isfinite(stderr)) or clusters < 2:
        return math.nan, math.nan
    variance = value * (1.0 - value)
    from scipy.special import stdtrit  # scipy.stats.t.ppf, without importing scipy.stats

    t = float(stdtrit(clusters - 1, 0.975))
    # no spread seen: Wilson at the actual count (the effective count p(1 − p)/SE² is 0/0)
    count = variance / stderr**2 if stderr > 0.0 and variance > 0.0 else float(clusters)
    shrink = 1.0 + t * t / count
    centre = (value + t * t / (2.0 * count)) / shrink
    half = t / shrink * math.sqrt(variance / count + t * t / (4.0 * count**2))
    # rounding must not leave the value a hair outside its own interval, nor a bound outside
    # [0, 1]
    return max(min(centre - half, value), 0.0), min(max(centre + half, value), 1.0)


def _clustered(
    value: float, linear: np.ndarray, clusters: Sequence[Hashable] | None, keep: np.ndarray
) -> Estimate:
    """The estimate ``value`` of the kept pairs, whose standard error is the clustered SE of
    their ``linear`` terms, its interval over as many units as clusters (pairs: none)."""
    groups = None if clusters is None else [c for c, k in zip(clusters, keep, strict=True) if k]
    stderr = clustered_stderr(linear, groups) if linear.size > 1 else np.nan
    units = linear.size if groups is None else len({str(g) for g in groups})
    ci = proportion_interval(value, stderr, units)
    dropped = int(keep.size - linear.size)
    return Estimate(value, stderr, int(linear.size), dropped, ci, few_events(value, stderr))


@dataclass(frozen=True)
class JudgeAuditEstimates:
    accuracy: Estimate
    accuracy_chosen_first: Estimate
    accuracy_rejected_first: Estimate
    position_bias: Estimate
    consistency: Estimate
    tie_rate: Estimate
    parse_failure_rate: Estimate


def _check(cf: Sequence[str], rf: Sequence[str], clusters: Sequence[Hashable] | None) -> None:
    if len(cf) != len(rf) or not len(cf):
        raise MetricInputError(
            f"expected two equally long non-empty verdict lists, got {len(cf)} and {len(rf)}",
            field="verdicts",
        )
    bad = sorted({v for v in (*cf, *rf) if v not in _VERDICTS})
    if bad:
        raise MetricInputError(
            f"unknown verdict {bad[0]!r}; expected {_VERDICTS}", field="verdicts"
        )
    if clusters is not None and len(clusters) != len(cf):
        raise MetricInputError(
            f"expected {len(cf)} clusters, got {len(clusters)}", field="clusters"
        )


def _credit(verdicts: Sequence[str], chosen_is: str) -> np.ndarray:
    """1 where the chosen answer (shown ``chosen_is``) is preferred, 0 where the other, ½ for a
    tie, NaN where unparsed."""
    other = "second" if chosen_is == "first" else "first"
    table = {chosen_is: 1.0, other: 0.0, "tie": 0.5, "unparsed": np.nan}
    return np.array([table[v] for v in verdicts], float)


def mean_estimate(values: np.ndarray, clusters: Sequence[Hashable] | None) -> Estimate:
    """Mean of the finite ``values`` with the clustered standard error; NaN ones skipped."""
    keep = np.isfinite(values)
    kept = values[keep]
    if not kept.size:
        return Estimate(np.nan, np.nan, 0, int(values.size))
    return _clustered(float(kept.mean()), kept, clusters, keep)


def ratio_estimate(
    numerator: np.ndarray, denominator: np.ndarray, clusters: Sequence[Hashable] | None
) -> Estimate:
    """Σ numerator / Σ denominator over the pairs with a positive denominator, with the
    linearised standard error: the clustered SE of (a_i − r·b_i) / mean(b)."""
    keep = denominator > 0
    a, b = numerator[keep], denominator[keep]
    if not b.size:
        return Estimate(np.nan, np.nan, 0, int(numerator.size))
    ratio = float(a.sum() / b.sum())
    return _clustered(ratio, (a - ratio * b) / b.mean(), clusters, keep)


def position_bias_estimate(
    firsts: np.ndarray, decisive: np.ndarray, clusters: Sequence[Hashable] | None
) -> Estimate:
    """Σ firsts / Σ decisive − ½ with the ratio's delta-method ±, the interval of
    :func:`~rmaudit.metrics.position_bias.position_bias_interval` (the shares of pairs that
    follow each position, each with its Wilson interval, combined), and ``few`` where fewer
    than :data:`~rmaudit.metrics.position_bias.FEW_FOLLOWING` prompts (or pairs) hold a pair
    that follows a position (its ± is approximate there)."""
    ratio = ratio_estimate(firsts, decisive, clusters).shifted(-0.5)
    if not ratio.n:
        return ratio
    ci = position_bias_interval(firsts, decisive, clusters)
    return replace(ratio, ci=ci, few=few_following(firsts, decisive, clusters))


@dataclass(frozen=True)
class PairCredits:
    """A judge's verdicts in both orders as per-pair values, aligned with its pairs: each mean
    of the audit is the mean of one of them over its finite values (NaN: the pair is not one of
    its units), so two judges (or a judge and an RM) on the same pairs compare pair by pair
    (:mod:`rmaudit.metrics.paired`).  The ratios (position bias, tie rate) are Σ numerator /
    Σ denominator of the count arrays."""

    #: the mean over the pair's parsed orders of 1 (chosen preferred), ½ (tie), 0
    accuracy: np.ndarray
    chosen_first: np.ndarray
    rejected_first: np.ndarray
    #: 1 where the verdict survives the swap, 0 where not; NaN unless parsed in both orders
    consistency: np.ndarray
    #: the share of the pair's two showings with no verdict (0, ½ or 1)
    parse_failures: np.ndarray
    #: counts per pair over its two showings: "first" verdicts, decisive ones, ties, parsed
    firsts: np.ndarray
    decisive: np.ndarray
    ties: np.ndarray
    parsed: np.ndarray


def pair_credits(chosen_first: Sequence[str], rejected_first: Sequence[str]) -> PairCredits:
    """Each pair's values of :func:`judge_audit` (see :class:`PairCredits`).

    >>> credits = pair_credits(["first", "tie"], ["second", "unparsed"])
    >>> credits.accuracy.tolist(), credits.consistency.tolist(), credits.parse_failures.tolist()
    ([1.0, 0.5], [1.0, nan], [0.0, 0.5])
    """
    _check(chosen_first, rejected_first, None)
    cf, rf = _credit(chosen_first, "first"), _credit(rejected_first, "second")
    both = np.vstack([cf, rf])
    parsed = np.isfinite(both)
    with np.errstate(invalid="ignore"):
        per_pair = np.where(
            parsed.any(axis=0), np.nansum(both, axis=0) / parsed.sum(axis=0), np.nan
        )
    shown = list(zip(chosen_first, rejected_first, strict=True))

    def count(*verdicts: str) -> np.ndarray:
        return np.array([(a in verdicts) + (b in verdicts) for a, b in shown], float)

    # the same answer preferred in both orders (credits 1 and 1, or 0 and 0), or a tie twice
    consistent = np.where(parsed.all(axis=0), cf == rf, np.nan).astype(float)
    return PairCredits(
        accuracy=per_pair,
        chosen_first=cf,
        rejected_first=rf,
        consistency=consistent,
        parse_failures=(~parsed).sum(axis=0) / 2.0,
        firsts=count("first"),
        decisive=count("first", "second"),
        ties=count("tie"),
        parsed=parsed.sum(axis=0).astype(float),
    )


def judge_audit(
    chosen_first: Sequence[str],
    rejected_first: Sequence[str],
    *,
    clusters: Sequence[Hashable] | None = None,
) -> JudgeAuditEstimates:
    """Accuracy, accuracy in each order, position bias, consistency, tie and parse-failure
    rates of a judge's verdicts in both orders (see the module's definitions).

    >>> audit = judge_audit(["first", "first"], ["first", "first"])   # always answers [[A]]
    >>> audit.position_bias.value, audit.consistency.value, audit.accuracy.value
    (0.5, 0.0, 0.5)
    """
    _check(chosen_first, rejected_first, clusters)
    c = pair_credits(chosen_first, rejected_first)
    return JudgeAuditEstimates(
        accuracy=mean_estimate(c.accuracy, clusters),
        accuracy_chosen_first=mean_estimate(c.chosen_first, clusters),
        accuracy_rejected_first=mean_estimate(c.rejected_first, clusters),
        position_bias=position_bias_estimate(c.firsts, c.decisive, clusters),
        consistency=mean_estimate(c.consistency, clusters),
        tie_rate=ratio_estimate(c.ties, c.parsed, clusters),
        parse_failure_rate=mean_estimate(c.parse_failures, clusters),
    )


def random_order_credits(
    chosen_first: Sequence[str],
    rejected_first: Sequence[str],
    *,
    seed: int,
    keys: Sequence[str] | None = None,
) -> np.ndarray:
    """reward-bench's convention, per pair: the credit of the one order drawn for it (1, ½ for
    a tie, 0 for the rejected answer or a parse failure).  The order of pair i is drawn from
    ``seed`` and ``keys[i]`` (its id: the same pair gets the same order wherever it is
    listed), or without keys by ``np.random.default_rng(seed)`` in list order."""
    _check(chosen_first, rejected_first, None)
    cf = np.nan_to_num(_credit(chosen_first, "first"), nan=0.0)
    rf = np.nan_to_num(_credit(rejected_first, "second"), nan=0.0)
    if keys is None:
        shown_first = np.random.default_rng(seed).random(len(cf)) < 0.5
    else:
        shown_first = _seed_coins(seed, tuple(keys))
    return np.where(shown_first, cf, rf)


def random_order_accuracy(
    chosen_first: Sequence[str],
    rejected_first: Sequence[str],
    *,
    seed: int,
    clusters: Sequence[Hashable] | None = None,
    keys: Sequence[str] | None = None,
) -> Estimate:
    """reward-bench's convention: each pair judged in one order, chosen first with probability
    ½, a tie ½, a parse failure 0 (a loss), as its generative judges count them
    (:func:`random_order_credits`), averaged over the pairs."""
    _check(chosen_first, rejected_first, clusters)
    credits = random_order_credits(chosen_first, rejected_first, seed=seed, keys=keys)
    return mean_estimate(credits, clusters)


def _coin(seed: int, key: str) -> bool:
    return hashlib.sha256(f"{seed}:{key}".encode()).digest()[0] < 128


def seed_spread(
    chosen_first: Sequence[str],
    rejected_first: Sequence[str],
    *,
    seeds: int,
    keys: Sequence[str] | None = None,
) -> tuple[float, float, float]:
    """(SD, min, max) of :func:`random_order_accuracy` over seeds 0 … seeds−1: how far one
    unseeded run of reward-bench's convention can land from another on the same verdicts."""
    if keys is None:
        values = np.array(
            [
                random_order_accuracy(chosen_first, rejected_first, seed=s).value
                for s in range(seeds)
            ]
        )
    else:  # every seed's orders at once; the coins of the same pairs are drawn once
        _check(chosen_first, rejected_first, None)
        cf = np.nan_to_num(_credit(chosen_first, "first"), nan=0.0)
        rf = np.nan_to_num(_credit(rejected_first, "second"), nan=0.0)
        values = np.where(_coins(seeds, tuple(keys)), cf, rf).mean(axis=1)
    return float(values.std(ddof=1)), float(values.min()), float(values.max())


@functools.lru_cache(maxsize=64)
def _seed_coins(seed: int, keys: tuple[str, ...]) -> np.ndarray:
    """The orders of one seed for ``keys``: the same for every judge of a run, so drawn once
    per set of pairs."""
    return np.array([_coin(seed, key) for key in keys], bool)


@functools.lru_cache(maxsize=64)
def _coins(seeds: int, keys: tuple[str, ...]) -> np.ndarray:
    """The orders of :func:`random_order_accuracy` for seeds 0 … seeds−1 (rows) and ``keys``:
    the same for every judge of a run, so drawn once per set of pairs."""
    return np.array([[_coin(seed, key) for key in keys] for seed in range(seeds)], bool)
