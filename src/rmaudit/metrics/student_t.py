"""Student's t distribution's upper tail and quantile, without scipy: the paired comparisons
the summary prints after every run need them, and importing ``scipy.special`` costs a rerun
that computes nothing else about 0.2 s.

The tail is the regularised incomplete beta function, P(T > t) = ½ I_x(ν/2, ½) with
x = ν / (ν + t²) for t ≥ 0 (Abramowitz & Stegun, *Handbook of Mathematical Functions*, 1964,
26.7.1 and 26.5.27), evaluated by its continued fraction with the modified Lentz method
(Press et al., *Numerical Recipes*, 3rd ed., 2007, Sec. 6.4 and 5.2), on whichever side of
its mean converges fast.  The quantile solves the tail for t by Newton's method from the
Cornish-Fisher expansion about the normal quantile (A&S 26.7.5), kept inside a bracket.
Both agree with ``scipy.special.stdtr`` and ``stdtrit`` to about 1e-13 relative
(tests/metrics/test_student_t.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from statistics import NormalDist

import numpy as np

#: the continued fraction stops when a step changes it by less than this
_EPSILON = 1e-16
_TINY = 1e-300


def t_sf(freedom: float, t: float) -> float:
    """P(T > t) for Student's t with ``freedom`` > 0 degrees of freedom (``stdtr(ν, −t)``).

    >>> round(t_sf(10, 2.228138851986274), 6)
    0.025
    """
    found = _tail_start(freedom, t)
    if not isinstance(found, _Fraction):
        return found
    fraction = _fraction(found.a, found.b, found.x)
    return found.tail(fraction)


def t_sfs(freedom: float, ts: Sequence[float]) -> list[float]:
    """:func:`t_sf` of each of ``ts``, to the last bit, their continued fractions run side by
    side on arrays (:func:`_fractions`): a comparison of K models asks for K(K−1)/2 tails."""
    started = [_tail_start(freedom, t) for t in ts]
    tails = [math.nan if isinstance(s, _Fraction) else s for s in started]
    for low in (True, False):
        found = [(i, s) for i, s in enumerate(started) if isinstance(s, _Fraction) and s.low == low]
        if found:
            first = found[0][1]
            xs = np.array([s.x for _, s in found])
            for (i, s), fraction in zip(
                found, _fractions(first.a, first.b, xs).tolist(), strict=True
            ):
                tails[i] = s.tail(fraction)
    return tails


@dataclass(frozen=True)
class _Fraction:
    """A tail that waits for the continued fraction of I_x(a, b) (on the side of its mean
    where it converges fast: ``low``, else of I_{1−x}(b, a), whose 1 − is the tail's)."""

    t: float
    low: bool
    a: float
    b: float
    x: float
    log_front: float

    def tail(self, fraction: float) -> float:
        part = math.exp(self.log_front) * fraction / self.a
        upper = 0.5 * (part if self.low else 1.0 - part)
        return upper if self.t >= 0 else 1.0 - upper


def _tail_start(freedom: float, t: float) -> float | _Fraction:
    """P(T > t) = ½ I_x(ν/2, ½), x = ν / (ν + t²) for t ≥ 0: the tail where no continued
    fraction is needed, else what it needs."""
    if math.isnan(t) or not freedom > 0:
        return math.nan
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    square = t * t
    # x and 1 − x, each computed directly: no cancellation near either end
    a, b = freedom / 2, 0.5
    x, complement = freedom / (freedom + square), square / (freedom + square)
    if x <= 0 or complement <= 0:  # I_x(a, b) is 0 or 1
        upper = 0.5 * (0.0 if x <= 0 else 1.0)
        return upper if t >= 0 else 1.0 - upper
    log_front = (
        math.lgamma(a + b)
        - math.lgamma(a)
        - math.lgamma(b)
        + a * math.log(x)
        + b * math.log(complement)
    )
    if x < (a + 1) / (a + b + 2):
        return _Fraction(t, True, a, b, x, log_front)
    return _Fraction(t, False, b, a, complement, log_front)


@cache  # one per comparison's degrees of freedom: K(K−1)/2 intervals share it
def t_quantile(freedom: float, p: float) -> float:
    """The t with P(T ≤ t) = ``p`` (``stdtrit(ν, p)``).

    >>> round(t_quantile(10, 0.975), 6)
    2.228139
    """
    if not freedom > 0 or not 0 <= p <= 1:
        return math.nan
    if p < 0.5:  # 1 − p is exact for p in [½, 1], not below
        return -_upper_quantile(freedom, p)
    return _upper_quantile(freedom, 1.0 - p)


def _upper_quantile(freedom: float, tail: float) -> float:
    """The t ≥ 0 with P(T > t) = ``tail`` ≤ ½."""
    if tail == 0:
        return math.inf
    if tail == 0.5:
        return 0.0
    z = NormalDist().inv_cdf(1.0 - tail)
    t = z + (z**3 + z) / (4 * freedom) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * freedom**2)
    low, high = 0.0, max(t, 1.0)
    while t_sf(freedom, high) > tail:  # the Cornish-Fisher start can fall short of it
        low, high = high, 2 * high
    t = min(max(t, low), high)
    for _ in range(200):
        excess = t_sf(freedom, t) - tail  # > 0: t is too small
        if excess > 0:
            low = t
        else:
            high = t
        following = t + excess / _density(freedom, t)
        if not low <= following <= high:  # Newton left the bracket: bisect instead
            following = (low + high) / 2
        if abs(following - t) <= 4e-16 * abs(following) or following in (low, high):
            return following
        t = following
    return t


def _density(freedom: float, t: float) -> float:
    log_density = (
        math.lgamma((freedom + 1) / 2)
        - math.lgamma(freedom / 2)
        - 0.5 * math.log(freedom * math.pi)
        - (freedom + 1) / 2 * math.log1p(t * t / freedom)
    )
    return math.exp(log_density)


def _fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) (Numerical Recipes' betacf), by modified Lentz."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    result = d
    for m in range(1, 100_000):
        for numerator in (
            m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            result *= d * c
        if abs(d * c - 1.0) < _EPSILON:
            break
    return result


def _fractions(a: float, b: float, x: np.ndarray) -> np.ndarray:
    """:func:`_fraction` at each x: each x's steps until its own converged, on the x's still
    converging (the same operations, so the same numbers)."""
    d = 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / np.where(np.abs(d) > _TINY, d, _TINY)
    c, result = np.ones_like(x), d.copy()
    going = np.arange(x.size)
    for m in range(1, 100_000):
        if not going.size:
            break
        xs, cs, ds, steps = x[going], c[going], d[going], result[going]
        for coefficient, denominator in (
            (m * (b - m), (a - 1 + 2 * m) * (a + 2 * m)),
            (-(a + m) * (a + b + m), (a + 2 * m) * (a + 1 + 2 * m)),
        ):
            numerator = coefficient * xs / denominator
            ds = 1.0 + numerator * ds
            ds = 1.0 / np.where(np.abs(ds) > _TINY, ds, _TINY)
            cs = 1.0 + numerator / cs
            cs = np.where(np.abs(cs) > _TINY, cs, _TINY)
            steps *= ds * cs
        result[going], c[going], d[going] = steps, cs, ds
        going = going[np.abs(ds * cs - 1.0) >= _EPSILON]
    return result
