"""Best-of-n curves from a fixed pool of labelled responses (RETA paper, arXiv 2504.14838, Sec. 3.1
Eq. 1 and App. B.3).

With N ≥ n labelled responses per prompt, the unbiased estimator of App. B.3 averages, over all
C(N, n) subsets of size n, the oracle score of the response the RM ranks first in the subset.
Here that average is computed in closed form from positional weights
(:mod:`rmaudit.metrics._positional`) instead of by enumeration, with ties in RM score broken
uniformly at random.  Scores are raw oracle scores (not normalised).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._positional import (
    oracle_by_position,
    rank_weights,
    stack_by_size,
    top_k_weights,
)
from rmaudit.metrics._results import CurveResult, MetricResult
from rmaudit.metrics._validation import (
    check_integer,
    check_integers,
    check_pools,
    check_subset_size,
)

ArrayLike = Sequence[float] | np.ndarray


def best_of_n(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    n: int,
    *,
    rank: int = 1,
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
) -> MetricResult:
    """Expected oracle score of the RM's ``rank``-th choice among n random responses.

    Per prompt: ``C(N, n)^-1 Σ_{|A| = n} J(a_(rank))`` where a_(rank) is the response ranked
    ``rank`` by RM score within A (ties broken at random) — App. B.3's unbiased estimator of
    Eq. 1 for rank=1 (best-of-n), and the paper's "2nd-best-of-n" for rank=2 (Fig. 2c).
    The value is the mean over prompts; ``seed`` seeds only the bootstrap CI.

    Example:
        >>> oracle = [np.array([1.0, 2.0, 3.0])]
        >>> round(best_of_n(oracle, oracle, 2).value, 6)   # pairs 12, 13, 23: (2 + 3 + 3) / 3
        2.666667
        >>> round(best_of_n(oracle, oracle, 2, rank=2).value, 6)   # (1 + 1 + 2) / 3
        1.333333
    """
    return _at_n(oracle, scores, n, (rank, "rank"), rank_weights, ci, bootstrap, seed)


def best_of_n_curve(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    ns: Sequence[int] | np.ndarray,
    *,
    rank: int = 1,
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
) -> CurveResult:
    """:func:`best_of_n` at each subset size in ``ns`` (the BON curve, RETA paper Eq. 1 and
    App. B.3); ``x`` holds the sizes.  Plot against :func:`bon_kl` for a KL axis.

    Example:
        >>> oracle = [np.array([1.0, 2.0, 3.0])]
        >>> best_of_n_curve(oracle, oracle, [1, 2, 3]).value.round(4).tolist()
        [2.0, 2.6667, 3.0]
    """
    oracle_pools, score_pools = check_pools(oracle, scores)
    sizes = check_integers(ns, "ns", minimum=1)
    for size in sizes:
        check_subset_size(int(size), [pool.size for pool in oracle_pools], field="ns")
    rank = check_integer(rank, "rank", minimum=1)
    if rank > sizes.min():
        raise MetricInputError(
            f"expected every n in ns >= rank ({rank}), got n={int(sizes.min())}", field="ns"
        )
    per_prompt = _positional_mean(
        oracle_pools,
        score_pools,
        sizes.size,
        lambda size: np.stack([rank_weights(size, int(n), rank) for n in sizes]),
    )
    return CurveResult.from_per_prompt(sizes, per_prompt, ci=ci, bootstrap=bootstrap, seed=seed)


def best_k_of_n(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    n: int,
    k: int,
    *,
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
) -> MetricResult:
    """Expected mean oracle score of the RM's top k among n random responses.

    Per prompt: ``C(N, n)^-1 Σ_{|A| = n} (1/k) Σ_{j ≤ k} J(a_(j))``, ties in RM score broken
    at random — App. B.3's estimator extended from the single best response to the top k
    (k = 1 is :func:`best_of_n`; k = ⌊η n⌋ is RETA's un-normalised Eq. 5 at a single n).

    Example:
        >>> oracle = [np.array([1.0, 2.0, 3.0, 4.0])]
        >>> round(best_k_of_n(oracle, oracle, 4, 2).value, 6)   # the top 2 of all 4
        3.5
    """
    return _at_n(oracle, scores, n, (k, "k"), top_k_weights, ci, bootstrap, seed)


def bon_kl(n: int | Sequence[int] | np.ndarray) -> float | np.ndarray:
    """KL divergence of best-of-n sampling from the base policy: ``log n − (n − 1)/n``
    (RETA paper, arXiv 2504.14838, Sec. 3.1, citing Stiennon et al.).  An array in, an array out.

    Example:
        >>> bon_kl(1)
        0.0
        >>> round(bon_kl(4), 6)
        0.636294
    """
    if np.ndim(n) == 0:
        size = float(check_integer(n, "n", minimum=1))
        return float(np.log(size) - (size - 1.0) / size)
    sizes = np.asarray(n)
    if sizes.dtype.kind not in "iu":
        raise MetricInputError(
            f"expected integers >= 1, got values of dtype {sizes.dtype}", field="n"
        )
    if sizes.size and sizes.min() < 1:
        raise MetricInputError(f"expected integers >= 1, got {sizes.min()}", field="n")
    sizes = sizes.astype(float)
    return np.log(sizes) - (sizes - 1.0) / sizes


def rank_of_n_kl(n: int | Sequence[int] | np.ndarray, rank: int = 1) -> float | np.ndarray:
    """KL divergence from the base policy of the policy that draws n responses and returns the
    one the reward ranks ``rank``-th (1 = best-of-n, 2 = the 2nd-best-of-n of the RETA paper,
    RETA paper, arXiv 2504.14838, Sec. 3.1), for a continuous reward without ties.

    The chosen response's reward quantile ``U = F(r)`` is the (n − rank + 1)-th order statistic
    of n uniforms, so it has the Beta(a, b) density ``f`` with ``a = n − rank + 1``, ``b = rank``
    (David & Nagaraja, *Order Statistics*, 3rd ed., Sec. 2.1), and the policy is
    ``π(y) = π_ref(y) · f(F(r(y)))``.  Hence ``KL(π ‖ π_ref) = E[log f(U)]``, minus the
    differential entropy of Beta(a, b)::

        KL = −log B(a, b) + (a − 1) ψ(a) + (b − 1) ψ(b) − (a + b − 2) ψ(a + b)

    For ``rank = 1`` this is :func:`bon_kl`'s ``log n − (n − 1)/n``; for ``rank = 2`` and
    ``n = 2`` it is the same value (the worse of two is as far from the base as the better).
    An array in, an array out; every n must be at least ``rank``.

    Example:
        >>> round(rank_of_n_kl(4, rank=2), 6)
        0.234907
    """
    rank = check_integer(rank, "rank", minimum=1)
    sizes = np.asarray(n)
    if sizes.dtype.kind not in "iu":
        raise MetricInputError(
            f"expected integers >= {rank}, got values of dtype {sizes.dtype}", field="n"
        )
    if sizes.size and sizes.min() < rank:
        raise MetricInputError(f"expected integers >= rank {rank}, got {sizes.min()}", field="n")
    from scipy.special import betaln, digamma  # scipy loads only when a metric needs it

    a, b = sizes.astype(float) - rank + 1.0, float(rank)
    kl = (
        (a - 1.0) * digamma(a)
        + (b - 1.0) * digamma(b)
        - (a + b - 2.0) * digamma(a + b)
        - betaln(a, b)
    )
    kl = np.maximum(kl, 0.0)  # a KL is never negative; rounding at n = rank can give -0.0
    return float(kl) if np.ndim(n) == 0 else kl


def _at_n(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    n: int,
    position: tuple[int, str],
    weights: Callable[[int, int, int], np.ndarray],
    ci: float,
    bootstrap: int,
    seed: int,
) -> MetricResult:
    """The mean over prompts of ``Σ_i w(i) J(i)`` at one subset size n, the weights
    ``weights(N, n, p)`` of the RM-ordered responses of a pool of N for ``position`` = (p, its
    argument's name), 1 <= p <= n: :func:`best_of_n`'s rank, :func:`best_k_of_n`'s k."""
    oracle_pools, score_pools = check_pools(oracle, scores)
    n = check_integer(n, "n", minimum=1)
    check_subset_size(n, [pool.size for pool in oracle_pools])
    value, field = position
    value = check_integer(value, field, minimum=1)
    if value > n:
        raise MetricInputError(f"expected {field} <= n ({n}), got {field}={value}", field=field)
    per_prompt = _positional_mean(
        oracle_pools, score_pools, 1, lambda size: weights(size, n, value)
    )[0]
    return MetricResult.from_per_prompt(per_prompt, ci=ci, bootstrap=bootstrap, seed=seed)


def _positional_mean(
    oracle_pools: list[np.ndarray],
    score_pools: list[np.ndarray],
    points: int,
    weights_for_size: Callable[[int], np.ndarray],
) -> np.ndarray:
    """Per-prompt ``Σ_i w(i) J(i)`` over RM-ordered, tie-averaged oracle scores, shape
    (points, Q); ``weights_for_size(N)`` gives the (points, N) weights for pools of N."""
    per_prompt = np.empty((points, len(oracle_pools)))
    for size, prompts, judged, scored in stack_by_size(oracle_pools, score_pools):
        weights = np.atleast_2d(weights_for_size(size))
        per_prompt[:, prompts] = weights @ oracle_by_position(judged, scored).T
    return per_prompt
