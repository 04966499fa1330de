"""The 95% interval of a pairwise judge's position bias (:mod:`rmaudit.metrics.judging`).

The position bias is Σ (firsts − decisive/2) / Σ decisive over the pairs: a pair whose verdict
survives the swap adds 0 to the numerator, one that says "first" both times +1, "second" both
times −1 (½ where one showing is a tie or unparsed).  It is so the difference of two shares of
pairs, those that follow the first position (m⁺) and those that follow the second (m⁻),
divided by the decisive showings per pair: the paired difference of Newcombe's
*Improved confidence intervals for the difference between binomial proportions based on
paired data* (Statistics in Medicine 17, 1998), whose discordant cells are these pairs.  For a
judge that is almost always consistent both shares rest on a few pairs, and the delta-method ±
(with Wilson's interval at the effective count of the ratio, near ½) undercovers: 0.856 at 100
pairs with 3 % of them following the first position.  So, as Newcombe's method 10 does, each
share gets its own Wilson interval — at its effective count m(1 − m)/SE² with Student's t
quantile at clusters − 1 df (Korn & Graubard, *Survey Methodology* 24, 1998; Wilson's at the
count of clusters where no spread is seen), with Brown, Cai & DasGupta's Poisson bound at 1–3
pairs (:func:`~rmaudit.metrics.preference.edge_wilson_interval`) — and the two are combined by
the method of variance estimates recovery with their correlation (Zou & Donner, *Statistics in
Medicine* 27, 2008).  Coverage: ``benchmarks/coverage_position_bias.py``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

from rmaudit.metrics.preference import clustered_stderr, edge_wilson_interval

#: fewer units (prompts, or pairs) than this hold a pair that follows a position (the pairs
#: that move the position bias): its ± covers less than 0.93 there
#: (benchmarks/coverage_position_bias.py), so it is marked approximate
FEW_FOLLOWING = 10


def following(firsts: np.ndarray, decisive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair, how far it follows the first position and how far the second (each 0, ½ or
    1): firsts − decisive/2 split by its sign."""
    lean = firsts - decisive / 2.0
    return np.maximum(lean, 0.0), np.maximum(-lean, 0.0)


def position_bias_interval(
    firsts: np.ndarray, decisive: np.ndarray, clusters: Sequence[Hashable] | None
) -> tuple[float, float]:
    """The 95% interval of Σ firsts / Σ decisive − ½ over pairs with a decisive showing
    (``clusters``: each pair's prompt, or None), as the module describes; NaN below 2 units."""
    keep = decisive > 0
    groups = None if clusters is None else [c for c, k in zip(clusters, keep, strict=True) if k]
    units = int(keep.sum()) if groups is None else len({str(g) for g in groups})
    if units < 2:
        return math.nan, math.nan
    first, second = following(firsts[keep], decisive[keep])
    per_pair = float(decisive[keep].mean())
    from scipy.special import stdtrit

    # Wilson's interval with the normal quantile replaced by Student's t at units − 1 df
    t = float(stdtrit(units - 1, 0.975))
    shares = [_share(part, groups, units, t) for part in (first, second)]
    (m1, l1, u1), (m2, l2, u2) = shares
    r = _correlation(first, second, groups)
    below = math.sqrt(max((m1 - l1) ** 2 + (u2 - m2) ** 2 - 2 * r * (m1 - l1) * (u2 - m2), 0.0))
    above = math.sqrt(max((u1 - m1) ** 2 + (m2 - l2) ** 2 - 2 * r * (u1 - m1) * (m2 - l2), 0.0))
    value = (m1 - m2) / per_pair
    low, high = (m1 - m2 - below) / per_pair, (m1 - m2 + above) / per_pair
    return max(min(low, value), -0.5), min(max(high, value), 0.5)


def _share(
    part: np.ndarray, groups: Sequence[Hashable] | None, units: int, t: float
) -> tuple[float, float, float]:
    """A share's value and its Wilson interval at its effective count (the count of units
    where no spread is seen)."""
    value = float(part.mean())
    stderr = clustered_stderr(part, groups)
    variance = value * (1.0 - value)
    count = variance / stderr**2 if stderr > 0.0 and variance > 0.0 else float(units)
    low, high = edge_wilson_interval(value, count, quantile=t)
    return value, low, high


def _correlation(a: np.ndarray, b: np.ndarray, groups: Sequence[Hashable] | None) -> float:
    """The correlation of the two shares' estimates: of the units' totals (0 where either
    does not vary, as Newcombe sets it where a margin is empty)."""
    if groups is not None:
        index = {g: i for i, g in enumerate(dict.fromkeys(str(g) for g in groups))}
        at = np.array([index[str(g)] for g in groups])
        a, b = np.bincount(at, a), np.bincount(at, b)
    if a.std() == 0.0 or b.std() == 0.0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def few_following(
    firsts: np.ndarray, decisive: np.ndarray, clusters: Sequence[Hashable] | None
) -> bool:
    """Whether fewer than :data:`FEW_FOLLOWING` units (prompts where pairs share one, else
    pairs) hold a pair that follows a position, none included (the ± is then 0, though a
    judge that follows in 1 % of pairs shows none in 100 a third of the time): the position
    bias's ± is approximate there."""
    first, second = following(firsts, decisive)
    moving = np.flatnonzero(first + second)
    units = moving.size if clusters is None else len({str(clusters[int(i)]) for i in moving})
    return units < FEW_FOLLOWING
