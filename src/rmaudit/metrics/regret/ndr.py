"""Policy regret: the normalised drop ratio of best-of-n sampling ("Rethinking Reward Model
Evaluation", Sec. 2, Eq. 2)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rmaudit.metrics._results import CurveResult, MetricResult
from rmaudit.metrics._validation import (
    check_fraction,
    check_integer,
    check_integers,
    check_subset_size,
)
from rmaudit.metrics.best_of_n import best_of_n, best_of_n_curve
from rmaudit.metrics.regret._resampling import bootstrap_counts, percentile_interval
from rmaudit.metrics.regret._rows import ArrayLike, Pools, _check_gold_proxy


def _check_ndr_n(n: int, gold_pools: Pools) -> int:
    n = check_integer(n, "n", minimum=2)  # n = 1 is π0 itself: the ratio would be 0/0
    check_subset_size(n, [pool.size for pool in gold_pools])
    return n


def _ndr_gains(gold_pools: Pools, proxy_pools: Pools, ns: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per-prompt gains over π0 of the proxy's and the gold's best-of-n picks, (len(ns), Q)."""
    random_pick = best_of_n(gold_pools, gold_pools, 1, bootstrap=1).per_prompt
    proxy_pick = best_of_n_curve(gold_pools, proxy_pools, ns, bootstrap=1).per_prompt
    gold_pick = best_of_n_curve(gold_pools, gold_pools, ns, bootstrap=1).per_prompt
    return proxy_pick - random_pick, gold_pick - random_pick


def ndr_curve(
    gold: Sequence[ArrayLike],
    proxy: Sequence[ArrayLike],
    ns: Sequence[int],
    *,
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
) -> CurveResult:
    """:func:`ndr` at each n in ``ns`` (x = n; plot against :func:`rmaudit.metrics.bon_kl` for
    the KL axis, as Fig. 9 of Rethinking RM Evaluation does).

    >>> gold = [np.array([1.0, 2.0, 3.0, 4.0])]
    >>> ndr_curve(gold, [np.array([4.0, 3.0, 2.0, 1.0])], [2, 4]).value.round(4).tolist()
    [-1.0, -1.0]
    """
    gold_pools, proxy_pools = _check_gold_proxy(gold, proxy)
    sizes = check_integers(ns, "ns", minimum=2)
    for size in sizes:
        check_subset_size(int(size), [pool.size for pool in gold_pools], field="ns")
    check_fraction(ci, "ci")
    bootstrap = check_integer(bootstrap, "bootstrap", minimum=1)
    proxy_gain, gold_gain = _ndr_gains(gold_pools, proxy_pools, sizes)
    value = proxy_gain.sum(axis=1) / gold_gain.sum(axis=1)
    counts = bootstrap_counts(len(gold_pools), bootstrap, check_integer(seed, "seed", minimum=0))
    draws = (proxy_gain @ counts.T) / (gold_gain @ counts.T)
    stderr, low, high = percentile_interval(draws, ci)
    # Per-prompt contributions: each prompt's gain over the mean gold gain, whose mean over
    # prompts is exactly the ratio of prompt-averaged expectations.
    contributions = proxy_gain / gold_gain.mean(axis=1, keepdims=True)
    return CurveResult(sizes, value, stderr, low, high, contributions)


def ndr(
    gold: Sequence[ArrayLike],
    proxy: Sequence[ArrayLike],
    n: int,
    *,
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
) -> MetricResult:
    """Normalised drop ratio of best-of-n sampling: the seed's estimate of policy regret (Eq. 2).

        NDR = (E_π[r*] − E_π0[r*]) / (E_π*[r*] − E_π0[r*])

    with π0 a random response of the pool (best-of-1), π the proxy's best-of-n pick and π* the
    gold's best-of-n pick, every expectation averaged over prompts before the ratio is taken
    (a ratio of prompt-averaged expectations, not a mean of per-prompt ratios).  Each
    expectation is the exact unbiased best-of-n estimator over all size-n subsets of the pool
    (:func:`rmaudit.metrics.best_of_n`, proxy ties broken at random).  1 = as good as
    optimising the gold itself, 0 = no better than a random response, < 0 = worse.  NDR is
    the *complement* of regret: higher is better.

    ``stderr`` and the CI come from a percentile bootstrap of the ratio over prompts (seeded);
    ``per_prompt`` holds each prompt's gain over π0 divided by the mean gold gain, whose mean
    is the value.

    >>> gold = [np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 1.0, 4.0, 3.0])]
    >>> round(ndr(gold, gold, 2).value, 6)
    1.0
    >>> proxies = [np.array([1.0, 2.0, 4.0, 3.0]), np.array([2.0, 1.0, 4.0, 3.0])]
    >>> round(ndr(gold, proxies, 4).value, 6)   # (0.5 + 1.5) / (1.5 + 1.5)
    0.666667
    """
    gold_pools, _ = _check_gold_proxy(gold, proxy)
    n = _check_ndr_n(n, gold_pools)
    return ndr_curve(gold, proxy, [n], ci=ci, bootstrap=bootstrap, seed=seed).point(0)
