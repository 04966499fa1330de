"""Correlation of two vectors across RMs, with exact or Monte-Carlo permutation p-values
(``rmaudit correlate``: which stored metric predicts your own downstream results?)."""

from __future__ import annotations

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._validation import check_integer
from rmaudit.metrics.regret._rows import ArrayLike, _kendall_rows, _pearson_rows, _spearman_rows


def correlate_across(x: ArrayLike, y: ArrayLike) -> dict[str, float]:
    """Kendall τ-b, Pearson and Spearman of two equal-length vectors (e.g. across RMs), with
    this module's convention that a constant vector correlates 0.

    >>> {k: round(v, 4) for k, v in correlate_across([1, 2, 3, 4], [1, 3, 2, 4]).items()}
    {'kendall': 0.6667, 'pearson': 0.8, 'spearman': 0.8}
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.ndim != 1 or a.shape != b.shape or a.size < 3:
        raise MetricInputError(
            f"expected two 1-D vectors of the same length >= 3, got shapes {a.shape} and {b.shape}",
            field="x",
        )
    return {
        "kendall": float(_kendall_rows(a, b)),
        "pearson": float(_pearson_rows(a, b)),
        "spearman": float(_spearman_rows(a, b)),
    }


def permutation_p_values(
    x: ArrayLike, y: ArrayLike, *, resamples: int = 20000, seed: int = 0
) -> dict[str, float]:
    """Two-sided permutation p-values of :func:`correlate_across`'s three statistics.

    Under H0 (no association) every pairing of x with a permutation of y is equally likely;
    p = P(|stat(perm)| ≥ |stat(observed)|).  Exact — all n! permutations enumerated — for
    n ≤ 8 (40,320 pairings); otherwise ``resamples`` random permutations (seeded) and
    p = (1 + #{as extreme}) / (1 + resamples).  Distribution-free: no normality assumed.

    >>> round(permutation_p_values([1, 2, 3, 4], [1, 2, 3, 4])["spearman"], 4)   # 2 of 24
    0.0833
    """
    observed = correlate_across(x, y)
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    size = a.size
    exact = size <= 8
    if exact:
        from itertools import permutations

        order = np.array(list(permutations(range(size))))
    else:
        resamples = check_integer(resamples, "resamples", minimum=1)
        rng = np.random.default_rng(seed)
        order = np.argsort(rng.random((resamples, size)), axis=1)
    permuted = b[order]
    tiled = np.broadcast_to(a, permuted.shape)
    null = {
        "kendall": _kendall_rows(tiled, permuted),
        "pearson": _pearson_rows(tiled, permuted),
        "spearman": _spearman_rows(tiled, permuted),
    }
    p_values = {}
    for name, stat in observed.items():
        # a relative tolerance keeps permutations that tie the observed value (up to rounding)
        extreme = np.count_nonzero(np.abs(null[name]) >= abs(stat) - 1e-12 * max(1.0, abs(stat)))
        p_values[name] = float(extreme / len(order) if exact else (1 + extreme) / (1 + len(order)))
    return p_values
