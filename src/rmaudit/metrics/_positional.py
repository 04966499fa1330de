"""Closed-form positional weights behind the exact RETA and best-of-n estimators.

Sort a prompt's N responses by RM score Y, best first (positions i = 1..N). A random subset A
of n responses is drawn from them (without replacement, or as n i.i.d. draws with replacement)
and sorted by Y; "slot j" is rank j within A.  Every estimator here is a fixed linear
combination of the oracle scores at the subset's slots, so its expectation over A is
``sum_i w(i) * J(i)`` with positional weights w that depend only on (N, n, the slot
coefficients) — never on the scores.  They are computed once per pool size and reused for every
prompt and every RM by a matrix product.

All weights are built from the *slot occupancy* G_k(i): the expected number of the top-k slots
that the response at position i fills.

* Without replacement, the response at position i is in A with probability n/N and, given that,
  its rank is 1 + X with X ~ Hypergeometric(population N-1, successes i-1, draws n-1), so
  ``G_k(i) = (n/N) P(X <= k-1)``.  With S_k the k-th smallest of n-1 positions drawn without
  replacement from {1..N-1}, ``X <= k-1  <=>  S_k >= i``, and S_k has the closed-form pmf
  ``C(s-1, k-1) C(N-1-s, n-1-k) / C(N-1, n-1)``; a reverse cumulative sum of that pmf gives
  G_k at every position in O(N).
* With replacement, ``sum_{j<=k} P(slot j holds position i) = H_k(i/N) - H_k((i-1)/N)`` with
  ``H_k(p) = E[min(B, k)]``, B ~ Binomial(n, p), because the draws landing in the top i
  positions fill the first min(B, k) of the top-k slots.  In closed form
  ``H_k(p) = n p (1 - I_p(k, n-k)) + k I_p(k+1, n-k)`` (I the regularised incomplete beta).

Ties in Y are broken uniformly at random.  Because the weights depend on positions only, the
expectation over the tie-break equals the estimator applied to oracle scores in which each tie
group's scores are replaced by the group mean (:func:`oracle_by_position`).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import numpy as np
import numpy.typing as npt

# η·n computed in floating point can land a hair below an integer (1/49 * 49 < 1); snapping
# within this relative tolerance keeps m = ⌊η n⌋ what the caller meant.
_ETA_N_TOLERANCE = 1e-9


def split_eta_n(eta_n: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split η·n into (m, Δ, m + Δ): m = ⌊η n⌋ slots in full plus a fractional slot Δ."""
    eta_n = np.asarray(eta_n, dtype=float)
    nearest = np.rint(eta_n)
    close = np.abs(eta_n - nearest) <= _ETA_N_TOLERANCE * np.maximum(eta_n, 1.0)
    snapped = np.where(close, nearest, eta_n)
    whole = np.floor(snapped).astype(np.int64)
    return whole, snapped - whole, snapped


def smoothed_top_coefficients(delta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Coefficients of G_{m-1}, G_m, G_{m+1} in Eq. 6's smoothed top-m sum.

    Eq. 6 weights slots 1..m-1 by 1, slot m by 1 + Δ(1-Δ) and slot m+1 by Δ².  Writing slot
    weights through cumulative occupancies (slot j = G_j - G_{j-1}) gives
    ``(1 + Δ - 2Δ²) G_m - Δ(1-Δ) G_{m-1} + Δ² G_{m+1}``; the weights sum to m + Δ = η n.
    """
    return -delta * (1.0 - delta), 1.0 + delta - 2.0 * delta**2, delta**2


@lru_cache(maxsize=8)
def _log_factorials(size: int) -> np.ndarray:
    from scipy.special import gammaln  # scipy loads when a metric is computed, not on import

    return gammaln(np.arange(size + 1, dtype=float) + 1.0)


def _log_binomial(log_factorials: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return log_factorials[a] - log_factorials[b] - log_factorials[a - b]


def _occupancy_without_replacement(N: int, n: int, ks: np.ndarray) -> np.ndarray:
    occupancy = np.where(ks[:, None] >= n, n / N, 0.0) * np.ones((1, N))
    inner = (ks >= 1) & (ks <= n - 1)
    if not inner.any():
        return occupancy
    k = ks[inner][:, None]
    s = np.arange(1, N)[None, :]
    support = (s >= k) & (s <= N - n + k)
    # Out-of-support entries get harmless arguments (0 choose 0) and are zeroed below.
    log_pmf = _log_binomial(
        _log_factorials(N), np.where(support, s - 1, 0), np.where(support, k - 1, 0)
    ) + _log_binomial(
        _log_factorials(N), np.where(support, N - 1 - s, 0), np.where(support, n - 1 - k, 0)
    )
    pmf = np.where(support, np.exp(log_pmf - log_pmf.max(axis=1, keepdims=True)), 0.0)
    # Normalising each row (instead of subtracting log C(N-1, n-1)) cancels the rounding that
    # log-factorials of large N share, so the occupancies sum to k to machine precision.
    pmf /= pmf.sum(axis=1, keepdims=True)
    at_or_after = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]  # P(S_k >= i), i = 1..N-1
    occupancy[inner, : N - 1] = (n / N) * at_or_after
    occupancy[inner, N - 1] = 0.0  # the last response outranks nobody else in A
    return occupancy


def _occupancy_with_replacement(N: int, n: int, ks: np.ndarray) -> np.ndarray:
    p = np.arange(N + 1, dtype=float)[None, :] / N
    expected_min = np.where(ks[:, None] >= n, n * p, 0.0)
    inner = (ks >= 1) & (ks <= n - 1)
    if inner.any():
        from scipy.special import betainc

        k = ks[inner][:, None].astype(float)
        expected_min[inner] = n * p * (1.0 - betainc(k, n - k, p)) + k * betainc(k + 1, n - k, p)
    return np.diff(expected_min, axis=1)


def slot_occupancy(N: int, n: int, ks: np.ndarray, replace: bool) -> np.ndarray:
    """G_k(i) for each k in ``ks`` (rows) and position i = 1..N (columns).

    G_k(i) is the expected number of the top-k slots of a random n-subset filled by the
    response at position i; k <= 0 gives zeros and k >= n gives the inclusion rate.
    """
    ks = np.asarray(ks, dtype=np.int64)
    if replace:
        return _occupancy_with_replacement(N, n, ks)
    return _occupancy_without_replacement(N, n, ks)


def _read_only(weights: np.ndarray) -> np.ndarray:
    weights.flags.writeable = False  # cached arrays are shared between callers
    return weights


@lru_cache(maxsize=128)
def reta_weights(N: int, ns: tuple[int, ...], etas: tuple[float, ...], replace: bool) -> np.ndarray:
    """Weights (len(etas) × N) of Eq. 6's per-prompt estimate, averaged over the sizes ``ns``.

    Row e applied to a prompt's position-ordered oracle scores gives
    ``mean_n E_A[smoothed top-(η n) sum] / (η n)`` for η = etas[e]; every η n must be >= 1.
    """
    eta_values = np.asarray(etas, dtype=float)
    weights = np.zeros((eta_values.size, N))
    for n in ns:
        whole, delta, eta_n = split_eta_n(eta_values * n)
        ks, slot = np.unique(np.concatenate([whole - 1, whole, whole + 1]), return_inverse=True)
        occupancy = slot_occupancy(N, n, ks, replace)
        below, at, above = slot.reshape(3, -1)
        c_below, c_at, c_above = smoothed_top_coefficients(delta)
        weights += (
            c_below[:, None] * occupancy[below]
            + c_at[:, None] * occupancy[at]
            + c_above[:, None] * occupancy[above]
        ) / eta_n[:, None]
    return _read_only(weights / len(ns))


@lru_cache(maxsize=128)
def rank_weights(N: int, n: int, rank: int) -> np.ndarray:
    """P(the response at position i is ranked ``rank`` within a random n-subset), i = 1..N."""
    occupancy = slot_occupancy(N, n, np.array([rank - 1, rank]), replace=False)
    return _read_only(occupancy[1] - occupancy[0])


@lru_cache(maxsize=128)
def top_k_weights(N: int, n: int, k: int) -> np.ndarray:
    """Weights of the mean oracle score over the top k of a random n-subset."""
    return _read_only(slot_occupancy(N, n, np.array([k]), replace=False)[0] / k)


def oracle_by_position(oracle: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Oracle scores ordered by RM score (best first), each tie group replaced by its mean.

    ``oracle`` and ``scores`` are (prompts × N); so is the result.  Averaging within tie groups
    is the exact expectation over a uniformly random tie-break (see the module docstring).
    """
    order = np.argsort(-scores, axis=1, kind="stable")
    sorted_scores = np.take_along_axis(scores, order, axis=1)
    sorted_oracle = np.take_along_axis(oracle, order, axis=1)
    starts_group = np.ones(scores.shape, dtype=bool)
    starts_group[:, 1:] = sorted_scores[:, 1:] != sorted_scores[:, :-1]
    group = np.cumsum(starts_group.ravel()) - 1  # ids are unique across rows: each row starts one
    group_mean = np.bincount(group, weights=sorted_oracle.ravel()) / np.bincount(group)
    return group_mean[group].reshape(scores.shape)


def stack_by_size(
    oracle_pools: list[np.ndarray], score_pools: list[np.ndarray]
) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """Group prompts by pool size N: yield (N, prompt indices, oracle rows, score rows)."""
    sizes = np.array([pool.size for pool in oracle_pools])
    for size in np.unique(sizes):
        prompts = np.flatnonzero(sizes == size)
        yield (
            int(size),
            prompts,
            np.stack([oracle_pools[q] for q in prompts]),
            np.stack([score_pools[q] for q in prompts]),
        )
