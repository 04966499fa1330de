"""RETA — reliability at the η quantile (RETA paper, arXiv 2504.14838, Sec. 3.2–3.3, App. B.1–B.2).

For one prompt with N labelled responses, a random subset A of n responses is sorted by the RM
score Y (ties broken uniformly at random).  With m = ⌊η n⌋ and Δ = η n − m, Eq. 6 scores A by
the smoothed top-(η n) sum of oracle scores

    T(A) = Σ_{j ≤ m} J(a_(j)) + Δ·(Δ·J(a_(m+1)) + (1 − Δ)·J(a_(m)))

and the per-prompt estimate is E_A[T(A)] / (η n), divided by the prompt's mean oracle score
when ``normalize`` is on (Eq. 5 writes the same thing as N/(η n) · E_A[T(A)] / Σ_all J).  The
estimate is averaged over every n in [3 N^(2/3), 5 N^(2/3)] (Sec. 3.3) and then over prompts.
RETA = 1 is a random RM; Theorem 1 (Eq. 4) gives the large-N limit
E[J | Y ≥ Θ(η)] / E[J].

**Finite N.**  The estimate is exact for its own expectation at the benchmark's pool size N
(the finite-pool quantity: the top η n of random n-subsets, n ∈ [3N^⅔, 5N^⅔]), and its
± stderr and CI cover that quantity at the nominal rate.  It is not Theorem 1's limit: the
top η n of a subset hold fewer extreme responses than the top η of the whole distribution,
so the finite-pool value lies below the limit, by about 0.02 / (η n_min) of RETA in a
bivariate normal world (correlation 1/√2, J ~ N(5, 1)): −0.003 at η = 1/16 and N = 256,
−0.008 at N = 64, −0.001 at η = 1/4 and N = 256.  The gap is fixed while the ± shrinks as
1/√prompts, so the ± covers Theorem 1's limit less the more prompts there are; its coverage
of either, measured against the number of prompts, and the notes a summary prints about it
are in :mod:`rmaudit.metrics.reta_coverage`.

``method="exact"`` takes E_A in closed form (:mod:`rmaudit.metrics._positional`), so it has no
Monte-Carlo noise and costs one matrix product per pool size; ``method="mc"`` resamples subsets
as the paper did (200 per n by default).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._positional import (
    oracle_by_position,
    reta_weights,
    split_eta_n,
    stack_by_size,
)
from rmaudit.metrics._results import CurveResult, MetricResult
from rmaudit.metrics._validation import (
    check_choice,
    check_flag,
    check_fraction,
    check_fractions,
    check_integer,
    check_pools,
    check_positive_means,
    check_subset_size,
)

ArrayLike = Sequence[float] | np.ndarray

_CURVE_POINTS = 15  # the paper's Fig. 3 and Fig. 7 draw 15 η values
_LARGEST_ETA = 0.5
# Monte-Carlo draws are vectorised over (prompts × resamples × N); this caps one batch at
# about 32 MB of float64.
_MC_BATCH_ELEMENTS = 4_000_000


def _integer_cube_root(value: int, *, round_up: bool) -> int:
    """⌈value^(1/3)⌉ or ⌊value^(1/3)⌋ exactly, so that e.g. N = 8 gives n from exactly 12."""
    root = round(value ** (1.0 / 3.0))
    while root**3 > value:
        root -= 1
    while (root + 1) ** 3 <= value:
        root += 1
    if round_up and root**3 < value:
        root += 1
    return root


def reta_n_range(N: int) -> np.ndarray:
    """Subset sizes n averaged over for a pool of N responses (RETA paper Sec. 3.3).

    Every integer n with 3 N^(2/3) ≤ n ≤ 5 N^(2/3), clipped to [1, N].  The bounds are decided
    in exact integer arithmetic (n³ ≥ 27 N², n³ ≤ 125 N²).  The range is never empty: the
    interval is at least 2 N^(2/3) ≥ 2 wide, and clipping maps it to [N] when 3 N^(2/3) > N.

    >>> r = reta_n_range(256)
    >>> int(r[0]), int(r[-1]), len(r)
    (121, 201, 81)
    >>> reta_n_range(8).tolist()
    [8]
    """
    N = check_integer(N, "N", minimum=1)
    lowest = _integer_cube_root(27 * N * N, round_up=True)
    highest = _integer_cube_root(125 * N * N, round_up=False)
    return np.arange(min(lowest, N), min(highest, N) + 1)


def _log_spaced_etas(smallest_n: int) -> np.ndarray:
    return np.geomspace(_LARGEST_ETA, 1.0 / smallest_n, _CURVE_POINTS)


def default_etas(N_min: int) -> np.ndarray:
    """The 15 η of a RETA curve: log-spaced from 1/2 down to 1/n_min (RETA paper Fig. 3).

    n_min is the smallest subset size used for the smallest pool (``reta_n_range(N_min)[0]``),
    so η·n ≥ 1 holds for every η and every n, as Eq. 6 needs.

    >>> etas = default_etas(256)
    >>> len(etas), float(etas[0]), float(etas[-1]) == 1 / 121
    (15, 0.5, True)
    """
    N_min = check_integer(N_min, "N_min", minimum=2)
    return _log_spaced_etas(int(reta_n_range(N_min)[0]))


def reta(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    eta: float,
    *,
    method: str = "exact",
    normalize: bool = True,
    n: int | None = None,
    resamples: int = 200,
    seed: int = 0,
    replace: bool = False,
    ci: float = 0.95,
    bootstrap: int = 1000,
) -> MetricResult:
    """RETA at quantile η (RETA paper, arXiv 2504.14838, Sec. 3.3 Eq. 5, App. B.2 Eq. 6).

    Per prompt: ``mean_n E_A[T(A)] / (η n) / mean(J)`` with T the smoothed top-(η n) oracle sum
    of Eq. 6 over a random size-n subset A of the prompt's responses ranked by RM score, ties
    broken at random; n runs over :func:`reta_n_range` (N) unless ``n`` is given.  The value is
    the mean over prompts; ``stderr`` and the bootstrap CI are across prompts.

    Args:
        oracle: per prompt, the oracle scores J of its responses (1-D arrays).
        scores: per prompt, the RM scores Y of the same responses.
        eta: the quantile, 0 < η < 1, with η n ≥ 1 for every n used.
        method: ``"exact"`` (closed-form expectation over subsets and tie-breaks) or ``"mc"``
            (``resamples`` random subsets per n, as in the paper).
        normalize: divide by the prompt's mean oracle score (which must then be positive);
            ``False`` gives the raw top-quantile oracle mean (Sec. 4.3 ablation).
        n: a single subset size instead of the paper's range.
        resamples: subsets per n for ``method="mc"``.
        seed: seeds the Monte-Carlo draws and the bootstrap over prompts.
        replace: draw subsets with replacement (n i.i.d. draws) instead of without.
        ci, bootstrap: confidence level and number of bootstrap resamples of prompts.

    Example:
        >>> oracle = [np.array([1.0, 2.0, 3.0, 4.0])]
        >>> round(reta(oracle, oracle, 0.5, n=4).value, 6)   # top 2 of 4: (4 + 3) / 2 / 2.5
        1.4
        >>> round(reta(oracle, [np.zeros(4)], 0.5, n=4).value, 6)   # all ties: random choice
        1.0
    """
    eta = check_fraction(eta, "eta")
    curve = _reta(
        oracle,
        scores,
        np.array([eta]),
        "eta",
        method=method,
        normalize=normalize,
        n=n,
        resamples=resamples,
        seed=seed,
        replace=replace,
        ci=ci,
        bootstrap=bootstrap,
    )
    return curve.point(0)


def reta_curve(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    etas: ArrayLike | None = None,
    *,
    method: str = "exact",
    normalize: bool = True,
    n: int | None = None,
    resamples: int = 200,
    seed: int = 0,
    replace: bool = False,
    ci: float = 0.95,
    bootstrap: int = 1000,
) -> CurveResult:
    """RETA at several η (RETA paper, arXiv 2504.14838, Sec. 3.3, Fig. 3): ``x`` holds the η values.

    Each point is :func:`reta` at that η with the same options.  ``etas`` defaults to 15
    values log-spaced from 1/2 down to 1/n_min (:func:`default_etas` of the smallest pool, or
    1/n when ``n`` is given).  All η share one pass over the data: the exact method builds one
    (η × N) weight matrix per pool size, the Monte-Carlo method scores every η on the same
    resampled subsets.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> oracle = [rng.normal(5, 1, 64) for _ in range(3)]
        >>> curve = reta_curve(oracle, oracle)        # a perfect RM
        >>> len(curve.x), bool(np.all(curve.value >= 1))
        (15, True)
    """
    if etas is None:
        pools, _ = check_pools(oracle, scores)
        if n is None:
            eta_grid = default_etas(min(pool.size for pool in pools))
        else:
            eta_grid = _log_spaced_etas(check_integer(n, "n", minimum=2))
    else:
        eta_grid = check_fractions(etas, "etas")
    return _reta(
        oracle,
        scores,
        eta_grid,
        "etas",
        method=method,
        normalize=normalize,
        n=n,
        resamples=resamples,
        seed=seed,
        replace=replace,
        ci=ci,
        bootstrap=bootstrap,
    )


def _reta(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    etas: np.ndarray,
    eta_field: str,
    *,
    method: str,
    normalize: bool,
    n: int | None,
    resamples: int,
    seed: int,
    replace: bool,
    ci: float,
    bootstrap: int,
) -> CurveResult:
    oracle_pools, score_pools = check_pools(oracle, scores)
    method = check_choice(method, ("exact", "mc"), "method")
    normalize = check_flag(normalize, "normalize")
    replace = check_flag(replace, "replace")
    resamples = check_integer(resamples, "resamples", minimum=1)
    seed = check_integer(seed, "seed", minimum=0)
    sizes = [pool.size for pool in oracle_pools]
    if n is not None:
        n = check_integer(n, "n", minimum=2)
        check_subset_size(n, sizes)
    _check_eta_n(etas, eta_field, n if n is not None else int(reta_n_range(min(sizes))[0]))
    means = check_positive_means(oracle_pools) if normalize else None

    per_prompt = np.empty((etas.size, len(oracle_pools)))
    rng = np.random.default_rng(seed)
    for size, prompts, judged, scored in stack_by_size(oracle_pools, score_pools):
        ns = (n,) if n is not None else tuple(int(v) for v in reta_n_range(size))
        if method == "exact":
            weights = reta_weights(size, ns, tuple(float(e) for e in etas), replace)
            per_prompt[:, prompts] = weights @ oracle_by_position(judged, scored).T
        else:
            per_prompt[:, prompts] = _monte_carlo(judged, scored, etas, ns, resamples, replace, rng)
    if means is not None:
        per_prompt /= means
    return CurveResult.from_per_prompt(etas, per_prompt, ci=ci, bootstrap=bootstrap, seed=seed)


def _check_eta_n(etas: np.ndarray, field: str, smallest_n: int) -> None:
    """Eq. 6 needs m = ⌊η n⌋ ≥ 1 (it reads the m-th ranked response) for every n used."""
    smallest_eta = float(etas.min())
    whole, _, _ = split_eta_n(smallest_eta * smallest_n)
    if whole < 1:
        raise MetricInputError(
            f"expected {field} >= 1/{smallest_n} = {1 / smallest_n:.6g} so that eta*n >= 1 for "
            f"every subset size n used (the smallest is n={smallest_n}), got {smallest_eta:.6g}",
            field=field,
        )


def _monte_carlo(
    oracle: np.ndarray,
    scores: np.ndarray,
    etas: np.ndarray,
    ns: tuple[int, ...],
    resamples: int,
    replace: bool,
    rng: np.random.Generator,
) -> np.ndarray:
    """The paper's resampling estimate for prompts of one pool size: (η × prompts) values."""
    n_prompts, size = oracle.shape
    # Rank responses once; a subset is then a set of positions, and sorting it by
    # (tie group, uniform key) is a uniformly random tie-break.  Keys stay within half a unit
    # of the group index so that float rounding never reorders groups.
    ranked_oracle = np.take_along_axis(oracle, np.argsort(-scores, axis=1, kind="stable"), axis=1)
    sorted_scores = -np.sort(-scores, axis=1)
    starts_group = np.ones(scores.shape, dtype=bool)
    starts_group[:, 1:] = sorted_scores[:, 1:] != sorted_scores[:, :-1]
    tie_group = np.cumsum(starts_group, axis=1).astype(float)

    batch = max(1, _MC_BATCH_ELEMENTS // (resamples * size))
    total = np.zeros((etas.size, n_prompts))
    for n in ns:
        whole, delta, eta_n = split_eta_n(etas * n)
        # Δ = 0 whenever m = n (only reachable through η n snapping to n), so clamping the
        # index of slot m + 1 never changes the value.
        after = np.minimum(whole, n - 1)
        for start in range(0, n_prompts, batch):
            rows = slice(start, start + batch)
            count = ranked_oracle[rows].shape[0]
            if replace:
                positions = rng.integers(0, size, size=(count, resamples, n))
            else:
                positions = np.argpartition(rng.random((count, resamples, size)), n - 1, axis=-1)[
                    ..., :n
                ]
            keys = np.take_along_axis(tie_group[rows, None, :], positions, axis=-1)
            keys += 0.5 * rng.random(keys.shape)
            order = np.take_along_axis(positions, np.argsort(keys, axis=-1), axis=-1)
            subset_oracle = np.take_along_axis(ranked_oracle[rows, None, :], order, axis=-1)
            top_sums = np.cumsum(subset_oracle, axis=-1)[..., whole - 1]
            smoothed = top_sums + delta * (
                delta * subset_oracle[..., after] + (1.0 - delta) * subset_oracle[..., whole - 1]
            )
            total[:, rows] += (smoothed / eta_n).mean(axis=1).T
    return total / len(ns)
