"""The parity figures (rmaudit.metrics.parity) against independent computations: the largest
difference and the share within a tolerance by brute force, Spearman's ρ by scipy, flips by
comparing signs one pair at a time, and Tango's interval against the score test inverted on a
grid, its restricted maximum-likelihood estimate found by a numerical optimiser."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import norm, spearmanr

from rmaudit.errors import MetricInputError
from rmaudit.metrics.parity import flipped_pairs, paired_accuracy_difference, parity


def _restricted_p21(gained: int, lost: int, n: int, delta: float) -> float:
    """argmax over q of the multinomial likelihood with P(only first right) = q + Δ,
    P(only second right) = q, found numerically."""
    low, high = max(0.0, -delta) + 1e-12, (1 - delta) / 2 - 1e-12

    def negative(q: float) -> float:
        rest = 1 - 2 * q - delta
        terms = [(gained, q + delta), (lost, q), (n - gained - lost, rest)]
        return -sum(k * math.log(p) for k, p in terms if k)

    if high <= low:
        return low
    return float(minimize_scalar(negative, bounds=(low, high), method="bounded",
                                 options={"xatol": 1e-13}).x)  # fmt: skip


def _grid_interval(gained: int, lost: int, n: int, z: float) -> tuple[float, float]:
    theta = (gained - lost) / n
    kept = []
    for delta in np.linspace(-0.999, 0.999, 3_997):
        q = _restricted_p21(gained, lost, n, delta)
        variance = (2 * q + delta - delta**2) / n
        if variance > 0 and abs(theta - delta) / math.sqrt(variance) <= z:
            kept.append(delta)
    return min(kept), max(kept)


def _logits(gained: int, lost: int, both: int, neither: int) -> tuple[np.ndarray, np.ndarray]:
    first = [1.0] * gained + [-1.0] * lost + [1.0] * both + [-1.0] * neither
    second = [-1.0] * gained + [1.0] * lost + [1.0] * both + [-1.0] * neither
    return np.array(first), np.array(second)


@pytest.mark.parametrize(
    ("gained", "lost", "both", "neither"),
    [(0, 0, 300, 119), (1, 4, 280, 134), (12, 30, 250, 127), (0, 3, 60, 37), (5, 0, 10, 5)],
)
def test_tangos_interval_is_the_score_test_inverted(gained, lost, both, neither):
    first, second = _logits(gained, lost, both, neither)
    found = paired_accuracy_difference(first, second)
    n = gained + lost + both + neither
    assert found.value == pytest.approx((gained - lost) / n)
    assert (found.gained, found.lost, found.pairs) == (gained, lost, n)
    low, high = _grid_interval(gained, lost, n, float(norm.ppf(0.975)))
    assert found.low == pytest.approx(low, abs=1e-3)
    assert found.high == pytest.approx(high, abs=1e-3)
    assert found.low <= found.value <= found.high
    assert found.high - found.low > 0  # no flips is no certainty: the interval keeps a width


def test_a_tie_is_a_loss_and_a_tie_against_a_preference_is_a_flip():
    first = np.array([0.0, 1.0, -2.0, 3.0])
    second = np.array([1.0, 1.0, 0.0, 2.0])
    # brute force: the sign of each pair's logit, compared pair by pair
    flips = [i for i in range(4) if np.sign(first[i]) != np.sign(second[i])]
    assert sorted(flipped_pairs(first, second)) == flips
    assert flipped_pairs(first, second)[0] == 2  # |Δ logit| = 2 beats 1
    found = paired_accuracy_difference(first, second)
    assert found.value == pytest.approx((1 + 1) / 4 - (1 + 1 + 1) / 4)


def test_parity_of_random_scorings_matches_brute_force():
    rng = np.random.default_rng(3)
    a = rng.normal(size=50)
    b = a + rng.normal(0, 0.01, 50) * (rng.random(50) < 0.3)
    la, lb = rng.normal(size=40), rng.normal(size=40)
    found = parity(a, b, la, lb, tolerance=0.005)
    gaps = [abs(x - y) for x, y in zip(a, b, strict=True)]
    assert found.largest_difference == max(gaps)
    assert found.within_tolerance == sum(g <= 0.005 for g in gaps) / 50
    assert found.rank_correlation == pytest.approx(spearmanr(a, b).statistic)
    assert len(found.flips) == sum((x > 0) != (y > 0) for x, y in zip(la, lb, strict=True))


def test_a_constant_scoring_has_no_rank_correlation_and_nan_is_refused():
    found = parity([1.0, 1.0], [0.0, 2.0], [0.5], [0.5], tolerance=0.0)
    assert found.rank_correlation is None
    with pytest.raises(MetricInputError):
        parity([1.0, float("nan")], [0.0, 2.0], [0.5], [0.5], tolerance=0.0)
