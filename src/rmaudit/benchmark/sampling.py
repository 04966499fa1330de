"""Prompt samplers: exact k-DPP, uniform random and stratified selection of prompt indices.

The k-DPP is the RETA paper's curation step (RETA paper (arXiv 2504.14838) Sec. 3.3, "Dataset
Curation with k-DPP Sampling"): embed the candidate pool, build the kernel ``λ·EᵀE`` over the
prompts and draw ``k`` prompts from the k-DPP, so that the benchmark is diverse (near-duplicates
repel each other) and representative.  The paper approximates the k-DPP with MCMC; here it is
sampled exactly with the spectral algorithm of Kulesza & Taskar, "Determinantal Point Processes for
Machine Learning" (2012), Alg. 8 (pick k eigenvectors) followed by the second phase of Alg. 1
(sample the projection DPP they span).  :class:`KDPP` keeps the eigendecomposition, so that many
draws (``kdpp(..., size=m)``) pay for it once.

All samplers return sorted, distinct row indices and are deterministic for a given ``seed``.

>>> import numpy as np
>>> from rmaudit.benchmark.sampling import kdpp, random_indices, stratified_indices
>>> embeddings = np.random.default_rng(0).normal(size=(500, 16))
>>> picked = kdpp(embeddings, 10, seed=1)
>>> len(set(picked.tolist())), bool(np.all(np.diff(picked) > 0))
(10, True)
>>> random_indices(500, 3, seed=1).shape
(3,)
>>> stratified_indices(["a"] * 8 + ["b"] * 2, 5, seed=0).size
5
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Real
from typing import Any

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._validation import check_integer

__all__ = ["KDPP", "kdpp", "random_indices", "stratified_indices"]


def kdpp(
    embeddings: Any, k: int, *, scale: float | None = None, seed: int = 0, size: int | None = None
) -> np.ndarray:
    """Draw ``k`` distinct rows of ``embeddings`` exactly from the k-DPP with kernel ``scale·EEᵀ``.

    One draw, or with ``size=m`` an ``(m, k)`` array of ``m`` independent draws from one
    eigendecomposition (see :class:`KDPP`, which also keeps the decomposition for later draws).
    The first of the ``m`` draws is the single draw for the same ``seed``.

    RETA paper (arXiv 2504.14838) Sec. 3.3 samples the benchmark prompts from the k-DPP whose
    L-ensemble kernel is ``λ·EᵀE`` with one *column* of ``E`` per prompt; here ``embeddings`` holds
    one *row* per item, so the kernel is ``L = scale·E Eᵀ`` and a k-subset ``S`` is drawn with
    probability ``P(S) = det(L_S) / e_k(L)``, where ``e_k(L)`` is the k-th elementary symmetric
    polynomial of the eigenvalues of ``L`` (the sum of ``det(L_S)`` over all ``|S| = k``).

    Algorithm (Kulesza & Taskar 2012, Alg. 8 then phase 2 of Alg. 1), exact, in the low-rank
    dual form, so that a pool of ``n > d`` items in ``d`` dimensions costs
    ``O(n·d² + d³)`` time once and ``O(n·k²)`` per draw, and ``O(n·k)`` memory beyond ``E``
    itself (never ``n×n``):

    1. Eigendecompose the smaller Gram matrix: the dual ``C = EᵀE`` (``d×d``) when ``n > d``,
       else ``EEᵀ`` itself.  Both share their non-zero eigenvalues ``μ``; a dual eigenvector
       ``v`` maps to the unit eigenvector ``E v / √μ`` of ``EEᵀ`` over the items.
    2. Pick a set ``J`` of ``k`` eigenvectors: going from the last eigenvalue to the first,
       keep eigenvalue ``λ_m`` (with ``λ = scale·μ``) with probability
       ``λ_m e_{l-1}(λ_1..λ_{m-1}) / e_l(λ_1..λ_m)`` where ``l`` is the number still wanted.
       The elementary symmetric polynomials are computed in log space, because eigenvalues
       can be tiny or huge and ``e_k`` over- or underflows for realistic ``k``.
    3. Sample the projection DPP onto ``span{E v_j : j ∈ J}`` item by item (chain rule): pick
       item ``i`` with probability proportional to the squared norm of its basis row after
       removing the directions of the items already picked, then add its direction to the
       picked span (Gram–Schmidt in ``k`` dimensions), ``O(n·k)`` per pick.

    The scale cancels mathematically: every subset has exactly ``k`` items, so
    ``det(scale·L_S) = scale^k·det(L_S)`` scales every probability alike.  It is kept because
    the paper states the kernel with it and for numerical conditioning: eigenvalues at most 1
    keep ``e_k`` within floating-point range in the usual linear-space recursion.  This
    implementation works in log space, so any positive scale gives the same draw for a seed
    (up to rounding).  ``scale=None`` picks ``1 / (2·μ_max)``, which puts the largest
    eigenvalue of ``L`` at 1/2, below 1 as the paper asks.

    Args:
        embeddings: ``(n, d)`` finite real array, one row per item (prompt).
        k: number of items to draw, ``1 ≤ k ≤ n``; the k-DPP needs ``rank(E) ≥ k``.
        scale: positive multiplier of the kernel (``λ`` in the paper), or ``None``.
        seed: seed of the random generator; the same seed gives the same indices.
        size: ``None`` for one draw, or the number ``m ≥ 1`` of draws.

    Returns:
        ``k`` distinct row indices, sorted ascending (``int64``); with ``size``, one such row
        per draw, shape ``(size, k)``.

    Raises:
        MetricInputError: ``embeddings`` not a finite non-empty 2-D array, ``k`` not an
            integer in ``[1, n]``, ``rank(E) < k``, ``scale`` not a finite positive number,
            ``size`` not ``None`` or an integer ``≥ 1``.

    >>> import numpy as np
    >>> twins = np.array([[1.0, 0.0], [1.0, 0.001], [0.0, 1.0]])  # rows 0 and 1 nearly equal
    >>> [kdpp(twins, 2, seed=s).tolist() in ([0, 2], [1, 2]) for s in range(5)]
    [True, True, True, True, True]
    >>> kdpp(twins, 2, seed=0, size=4).shape
    (4, 2)
    """
    sampler = KDPP(embeddings, k, scale=scale)
    if size is None:
        return sampler.sample(seed)
    return sampler.samples(size, seed=seed)


class KDPP:
    """The k-DPP over the rows of ``embeddings``, decomposed once, to draw from many times.

    Validation, the eigendecomposition and the elementary symmetric polynomials (steps 1 and
    the table of step 2 of :func:`kdpp`) happen here, once; each draw then costs only the
    choice of eigenvectors and the ``O(n·k²)`` projection sampling.

    >>> import numpy as np
    >>> sampler = KDPP(np.random.default_rng(0).normal(size=(50, 8)), 3)
    >>> bool(np.array_equal(sampler.sample(seed=5), kdpp(sampler.embeddings, 3, seed=5)))
    True
    >>> sampler.samples(1000, seed=0).shape
    (1000, 3)
    """

    def __init__(self, embeddings: Any, k: int, *, scale: float | None = None) -> None:
        self.embeddings = _as_embeddings(embeddings)
        self.k = _check_k(k, self.embeddings.shape[0])
        scale = _check_scale(scale)
        self._spectrum = _Spectrum(self.embeddings)
        if self._spectrum.rank < self.k:
            raise MetricInputError(
                f"expected embeddings of rank ≥ k = {self.k} (a k-DPP gives every k-subset "
                f"probability 0 otherwise), got rank {self._spectrum.rank}",
                field="embeddings",
            )
        if scale is None:
            scale = 0.5 / self._spectrum.eigenvalues[-1]
        self._log_eigenvalues = np.log(scale * self._spectrum.eigenvalues)
        self._log_e = _log_elementary_symmetric(self._log_eigenvalues, self.k)

    def sample(self, seed: int | np.random.Generator = 0) -> np.ndarray:
        """One draw: ``k`` distinct sorted indices.  ``seed``: an integer or a generator,
        which the draw advances (so successive calls give independent draws)."""
        rng = seed if isinstance(seed, np.random.Generator) else _rng(seed)
        chosen = _choose_eigenvectors(self._log_eigenvalues, self._log_e, self.k, rng)
        return _sample_projection_dpp(self._spectrum.item_basis(chosen), rng)

    def samples(self, size: int, *, seed: int = 0) -> np.ndarray:
        """``size`` independent draws from one generator seeded with ``seed``: ``(size, k)``."""
        size = check_integer(size, "size", minimum=1)
        rng = _rng(seed)
        return np.stack([self.sample(rng) for _ in range(size)])


def random_indices(n: int, k: int, seed: int = 0) -> np.ndarray:
    """``k`` distinct indices drawn uniformly from ``range(n)``, sorted ascending.

    The baseline the k-DPP is compared with: every k-subset is equally likely.

    >>> random_indices(10, 4, seed=0).tolist() == random_indices(10, 4, seed=0).tolist()
    True
    """
    n = check_integer(n, "n", minimum=1)
    k = _check_k(k, n)
    return np.sort(_rng(seed).choice(n, size=k, replace=False)).astype(np.int64)


def stratified_indices(groups: Sequence[str], k: int, seed: int = 0) -> np.ndarray:
    """``k`` distinct indices into ``groups``, allocated to groups in proportion to their size.

    Group ``g`` with ``n_g`` of the ``n`` items has quota ``q_g = k·n_g/n``.  Each group gets
    ``floor(q_g)``, raised to 1 when ``k ≥`` the number of groups (so every group is covered);
    the seats left over go one each to the largest remainders ``q_g − floor(q_g)``
    (largest-remainder rounding), and if the raises overshoot ``k`` seats are taken back from
    the most over-allocated groups that keep at least one.  Ties go to the group seen first in
    ``groups``.  Within a group the items are drawn uniformly without replacement.

    Args:
        groups: one group label per item.
        k: number of items to draw, ``1 ≤ k ≤ len(groups)``.
        seed: seed of the random generator; the same seed gives the same indices.

    Returns:
        ``k`` distinct indices, sorted ascending (``int64``).

    >>> groups = ["x"] * 6 + ["y"] * 3 + ["z"]  # quotas 3, 1.5, 0.5 for k = 5
    >>> [groups[i] for i in stratified_indices(groups, 5, seed=0)]
    ['x', 'x', 'x', 'y', 'z']
    """
    if isinstance(groups, (str, bytes)) or not isinstance(groups, Sequence):
        raise MetricInputError(
            f"expected a sequence of group labels, one per item, got {type(groups).__name__}",
            field="groups",
        )
    if len(groups) == 0:
        raise MetricInputError("expected at least one group label, got none", field="groups")
    k = _check_k(k, len(groups))
    rng = _rng(seed)

    members: dict[str, list[int]] = {}  # insertion order = order of first appearance
    for index, label in enumerate(groups):
        members.setdefault(label, []).append(index)
    sizes = np.array([len(m) for m in members.values()])
    allocation = _allocate(sizes, k)

    picked = [
        rng.choice(np.array(group_members), size=count, replace=False)
        for group_members, count in zip(members.values(), allocation, strict=True)
    ]
    return np.sort(np.concatenate(picked)).astype(np.int64)


def _allocate(sizes: np.ndarray, k: int) -> np.ndarray:
    """Largest-remainder proportional allocation of ``k`` seats to groups of ``sizes``."""
    quotas = k * sizes / sizes.sum()
    allocation = np.floor(quotas).astype(np.int64)
    if k >= sizes.size:
        allocation = np.maximum(allocation, 1)
    order = np.arange(sizes.size)  # tie-break: first-appearing group first
    surplus = int(allocation.sum()) - k
    if surplus < 0:
        # Every remainder is below 1, so at least -surplus groups have a positive one.
        by_remainder = np.lexsort((order, -(quotas - allocation)))
        allocation[by_remainder[:-surplus]] += 1
    for _ in range(surplus):
        # Raises to 1 overshot k: take back from the group most above its quota, never
        # emptying a group (some group holds ≥ 2, since the total exceeds k ≥ #groups).
        over = np.where(allocation >= 2, allocation - quotas, -np.inf)
        allocation[np.lexsort((order, -over))[0]] -= 1
    return allocation


class _Spectrum:
    """Non-zero eigenpairs of ``EEᵀ``, held in whichever of the primal or dual form is smaller."""

    def __init__(self, items: np.ndarray) -> None:
        n_items, n_dims = items.shape
        self._items = items
        self._dual = n_items > n_dims
        gram = items.T @ items if self._dual else items @ items.T
        eigenvalues, eigenvectors = np.linalg.eigh(gram)
        # eigh resolves eigenvalues only to about eps·μ_max·size; anything below is rank noise.
        tolerance = eigenvalues[-1] * max(n_items, n_dims) * np.finfo(np.float64).eps
        keep = eigenvalues > tolerance
        self.eigenvalues = eigenvalues[keep]
        self._eigenvectors = eigenvectors[:, keep]

    @property
    def rank(self) -> int:
        return int(self.eigenvalues.size)

    def item_basis(self, chosen: np.ndarray) -> np.ndarray:
        """Orthonormal ``(n, |chosen|)`` basis of the chosen eigenvectors over the items."""
        if not self._dual:
            return self._eigenvectors[:, chosen]
        lifted = self._items @ (self._eigenvectors[:, chosen] / np.sqrt(self.eigenvalues[chosen]))
        # E v/√μ is orthonormal only up to eps·μ_max/μ, and the projection sampler is exact
        # only for an orthonormal basis.  Cholesky QR re-orthonormalises within the same span;
        # it is accurate here because `lifted` is already near-orthonormal (Gram ≈ I), and
        # several times cheaper than Householder QR on an n×k matrix.
        import scipy.linalg  # loaded when prompts are drawn, not on a rerun that reuses them

        cholesky = np.linalg.cholesky(lifted.T @ lifted)
        return scipy.linalg.solve_triangular(cholesky, lifted.T, lower=True, check_finite=False).T


def _log_elementary_symmetric(log_eigenvalues: np.ndarray, k: int) -> np.ndarray:
    """``log_e[m, l] = log e_l(λ_1, …, λ_m)`` for ``l ≤ k`` (Kulesza & Taskar Alg. 7, in log
    space): ``e_l(λ_1..λ_m) = e_l(λ_1..λ_{m-1}) + λ_m·e_{l-1}(λ_1..λ_{m-1})``."""
    n_eigen = log_eigenvalues.size
    log_e = np.full((n_eigen + 1, k + 1), -np.inf)
    log_e[:, 0] = 0.0
    for m in range(1, n_eigen + 1):
        log_e[m, 1:] = np.logaddexp(log_e[m - 1, 1:], log_eigenvalues[m - 1] + log_e[m - 1, :-1])
    return log_e


def _choose_eigenvectors(
    log_eigenvalues: np.ndarray, log_e: np.ndarray, k: int, rng: np.random.Generator
) -> np.ndarray:
    """Kulesza & Taskar Alg. 8: indices of ``k`` eigenvalues, drawn with the k-DPP's weights
    (``log_e`` from :func:`_log_elementary_symmetric`)."""
    chosen = []
    wanted = k
    for m in range(log_eigenvalues.size, 0, -1):
        if wanted == 0:
            break
        # When m == wanted, log_e[m-1, wanted] is -inf and the probability is exactly 1.
        keep_probability = np.exp(
            log_eigenvalues[m - 1] + log_e[m - 1, wanted - 1] - log_e[m, wanted]
        )
        if rng.random() < keep_probability:
            chosen.append(m - 1)
            wanted -= 1
    return np.array(chosen[::-1], dtype=np.intp)


def _sample_projection_dpp(basis: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Sample the projection DPP with kernel ``basis·basisᵀ`` (Kulesza & Taskar Alg. 1, phase 2).

    With ``basis`` orthonormal (``n×k``), the chain rule gives
    ``P(next = i | picked) ∝ ‖P⊥ basis_i‖²``, where ``P⊥`` projects out the span of the rows
    already picked.  ``residual`` holds those squared norms and ``span`` an orthonormal basis
    of the picked rows, so each pick costs one ``n×k`` product instead of re-orthogonalising
    the whole ``n×k`` basis as Alg. 1 does.
    """
    n_items, k = basis.shape
    residual = np.einsum("ij,ij->i", basis, basis)
    span = np.zeros((k, k))
    picked = np.empty(k, dtype=np.int64)
    for t in range(k):
        weights = np.maximum(residual, 0.0)  # rounding can push a spent item below 0
        item = _pick(weights, rng)
        picked[t] = item
        direction = basis[item]
        # Gram–Schmidt twice: one pass loses orthogonality when the residual is small.
        for _ in range(2):
            direction = direction - span[:, :t] @ (span[:, :t].T @ direction)
        span[:, t] = direction / np.sqrt(direction @ direction)
        residual -= (basis @ span[:, t]) ** 2
        residual[item] = 0.0
    return np.sort(picked)


def _pick(weights: np.ndarray, rng: np.random.Generator) -> int:
    """An index drawn with probability ``weights / weights.sum()``: the inverse-CDF lookup of
    ``rng.choice(n, p=...)`` on the same uniform, so the same index for the same generator
    state, without the input checks that cost more than the pick on small pools."""
    cdf = np.cumsum(weights / weights.sum())
    cdf /= cdf[-1]
    return int(np.searchsorted(cdf, rng.random(), side="right"))


def _as_embeddings(embeddings: Any) -> np.ndarray:
    try:
        items = np.asarray(embeddings, dtype=np.float64)
    except (TypeError, ValueError):
        raise MetricInputError(
            f"expected a 2-D array of real numbers, got {type(embeddings).__name__}",
            field="embeddings",
        ) from None
    if items.ndim != 2 or items.shape[0] == 0 or items.shape[1] == 0:
        raise MetricInputError(
            f"expected a non-empty 2-D array (items × dimensions), got shape {items.shape}",
            field="embeddings",
        )
    if not np.isfinite(items).all():
        bad_row = int(np.argwhere(~np.isfinite(items))[0, 0])
        raise MetricInputError(
            f"expected finite values, got NaN or infinity (first in row {bad_row})",
            field="embeddings",
        )
    return items


def _check_k(k: Any, n_items: int) -> int:
    k = check_integer(k, "k", minimum=1)
    if k > n_items:
        raise MetricInputError(f"expected k ≤ the number of items ({n_items}), got {k}", field="k")
    return k


def _check_scale(scale: Any) -> float | None:
    if scale is None:
        return None
    if (
        isinstance(scale, bool)
        or not isinstance(scale, Real)
        or not (np.isfinite(float(scale)) and float(scale) > 0)
    ):
        raise MetricInputError(
            f"expected None or a finite number > 0, got {scale!r}", field="scale"
        )
    return float(scale)


def _rng(seed: Any) -> np.random.Generator:
    return np.random.default_rng(check_integer(seed, "seed", minimum=0))
