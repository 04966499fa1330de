"""Student's t tail and quantile (rmaudit.metrics.student_t) against scipy.special's stdtr and
stdtrit, and against the closed forms for one and two degrees of freedom."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import stdtr, stdtrit

from rmaudit.metrics.student_t import t_quantile, t_sf, t_sfs

FREEDOM = [1, 2, 3, 4, 5, 7, 10, 29, 49, 99, 255, 1000, 4999]
T = [*np.linspace(-40, 40, 161), 1e-3, -1e-3, 0.0, 60.0, 200.0]
P = [1e-12, 1e-6, 0.025, 0.2, 0.6, 0.75, 0.9, 0.95, 0.975, 0.99, 0.999, 0.9999]


@pytest.mark.parametrize("freedom", FREEDOM)
def test_the_tail_is_scipys(freedom):
    ours = np.array([t_sf(freedom, t) for t in T])
    assert ours == pytest.approx(stdtr(freedom, -np.array(T)), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("freedom", FREEDOM)
def test_the_quantile_is_scipys(freedom):
    ours = np.array([t_quantile(freedom, p) for p in P])
    assert ours == pytest.approx(stdtrit(freedom, np.array(P)), rel=1e-10)


def test_closed_forms():
    for t in (0.01, 0.7, 3.0, 250.0):
        assert t_sf(1, t) == pytest.approx(0.5 - math.atan(t) / math.pi, rel=1e-13)
        assert t_sf(2, t) == pytest.approx(0.5 - t / (2 * math.sqrt(2 + t * t)), rel=1e-13)
    for p in (0.6, 0.975, 0.999):
        assert t_quantile(1, p) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-12)
        assert t_quantile(2, p) == pytest.approx(
            (2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-12
        )


def test_edges():
    assert t_sf(5, math.inf) == 0.0 and t_sf(5, -math.inf) == 1.0 and t_sf(5, 0.0) == 0.5
    assert math.isnan(t_sf(5, math.nan)) and math.isnan(t_sf(0, 1.0))
    assert t_quantile(5, 0.5) == 0.0 and t_quantile(5, 1.0) == math.inf
    assert t_quantile(5, 0.0) == -math.inf and math.isnan(t_quantile(5, 1.5))


@pytest.mark.parametrize("freedom", [*FREEDOM, 418, 0, math.nan])
def test_many_tails_are_each_tails_to_the_last_bit(freedom):
    """t_sfs runs the continued fractions side by side: each tail is t_sf's, bit for bit."""
    rng = np.random.default_rng(int(freedom) if freedom == freedom else 1)
    ts = [*T, *(rng.choice([-1, 1], 300) * 10 ** rng.uniform(-6, 3, 300)), math.nan, math.inf]
    for one, many in zip((t_sf(freedom, t) for t in ts), t_sfs(freedom, ts), strict=True):
        assert one == many or (math.isnan(one) and math.isnan(many))
