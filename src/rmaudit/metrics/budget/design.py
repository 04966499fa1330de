"""Label designs: which of a prompt's N responses the oracle labels, with known inclusion
probabilities (docs/budget.md).

Every draw uses *permanent random numbers* (Ohlsson, "Sequential Poisson sampling", J. Official
Statistics 1998): each response carries its own u ~ Uniform(0, 1), fixed by the caller from a
seeded hash of the response's id, so a design is a deterministic function of (u, budget) and
raising the budget labels a superset of what a smaller budget labelled (a *top-up* keeps every
stored label valid).

* ``uniform`` — simple random sampling without replacement of m responses: the m smallest u.
  π_j = m/N and π_jk = m(m−1)/(N(N−1)).
* ``rm-guided`` — Poisson sampling: response j is labelled iff u_j < π_j, independently, so
  π_jk = π_j π_k exactly.  π_j = min(1, c·w_j) with Σ_j π_j = m, where w_j mixes a uniform floor
  with the importance of j to the metrics that weigh an RM's top picks (Horvitz & Thompson 1952,
  "A generalization of sampling without replacement from a finite universe": a total is
  estimated best with π_j ∝ |a_j y_j|; here a_j are the positional weights of RETA(1/4) and
  best-of-n under each guide RM, y_j unknown and taken as equal).  c grows with m, so every π_j
  is non-decreasing in the budget.
"""

from __future__ import annotations

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._positional import rank_weights, reta_weights
from rmaudit.metrics.reta import reta_n_range

LABEL_DESIGNS = ("uniform", "rm-guided")
#: the share of an rm-guided budget spread evenly over all responses: it keeps every π_j at
#: least FLOOR_SHARE·m/N, so RETA's denominator (the prompt's mean) and RMs that are not among
#: the guides are still estimated from a spread of labels
FLOOR_SHARE = 0.5
#: the metrics whose positional weights guide the draw: RETA(η) at these η, best-of-n at these n
GUIDE_ETAS = (0.25, 1 / 16)
GUIDE_BON = 16


def check_design(design: str) -> str:
    if design not in LABEL_DESIGNS:
        raise MetricInputError(
            f"expected design in {', '.join(LABEL_DESIGNS)}, got {design!r}", field="design"
        )
    return design


def check_sample_size(m: float, n_responses: int) -> float:
    """m, the (expected) number of labels of a prompt of N responses: 2 ≤ m ≤ N."""
    if isinstance(m, bool) or not np.isfinite(m) or not 2 <= m <= n_responses:
        raise MetricInputError(
            f"expected 2 <= labels per prompt <= N = {n_responses}, got {m!r}", field="budget"
        )
    return float(m)


def check_random_numbers(u: np.ndarray) -> np.ndarray:
    u = np.asarray(u, dtype=float)
    if u.ndim != 1 or not np.all((u > 0) & (u < 1)):
        raise MetricInputError(
            "expected permanent random numbers in (0, 1), one per response", field="u"
        )
    return u


def uniform_sample_size(budget: float, n_responses: int) -> int:
    """m of a uniform design for a fraction of N: round(budget·N), at least 2, at most N."""
    return int(min(n_responses, max(2, round(budget * n_responses))))


def guide_importance(guide_scores: np.ndarray) -> np.ndarray:
    """Importance of each response to the metrics that weigh the guides' top picks: for every
    guide RM (rows of ``guide_scores``, shape (G, N)) the positional weights of RETA at
    :data:`GUIDE_ETAS` and of best-of-:data:`GUIDE_BON` (each normalised to sum 1), placed at
    the response's rank under that RM (ties share their group's mean), averaged over metrics and
    guides.  Sums to 1."""
    guide_scores = np.atleast_2d(np.asarray(guide_scores, dtype=float))
    n_responses = guide_scores.shape[1]
    rows: list[np.ndarray] = []
    ns = tuple(int(v) for v in reta_n_range(n_responses))
    etas = tuple(e for e in GUIDE_ETAS if e * ns[0] >= 1)
    if etas:
        rows.extend(reta_weights(n_responses, ns, etas, False))
    if n_responses >= GUIDE_BON:
        rows.append(rank_weights(n_responses, GUIDE_BON, 1))
    positional = np.array([row / row.sum() for row in rows]).mean(axis=0)
    importance = np.zeros(n_responses)
    for scores in guide_scores:
        importance += by_response(positional, scores)
    return importance / len(guide_scores)


def by_response(positional: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Positional weights (best first; shape (N,) or (P, N)) moved to the responses they fall
    on under ``scores``, each tie group sharing its mean weight — the weight a_j that response
    j gets in a positional estimator whose ties are broken uniformly at random."""
    scores = np.asarray(scores, dtype=float)
    positional = np.asarray(positional, dtype=float)
    order = np.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    starts = np.ones(scores.size, dtype=bool)
    starts[1:] = sorted_scores[1:] != sorted_scores[:-1]
    group = np.cumsum(starts) - 1
    rows = np.atleast_2d(positional)
    sizes = np.bincount(group)
    weights = np.empty_like(rows)
    for row, out in zip(rows, weights, strict=True):
        out[order] = (np.bincount(group, weights=row) / sizes)[group]
    return weights if positional.ndim == 2 else weights[0]


def rm_guided_inclusion(importance: np.ndarray, m: float) -> np.ndarray:
    """π_j = min(1, c·w_j), w_j = FLOOR_SHARE/N + (1 − FLOOR_SHARE)·importance_j, with c such
    that Σ π_j = m.  Solved exactly: with the t largest w capped at 1, c = (m − t) / Σ of the
    other w, for the smallest t at which the largest uncapped c·w stays ≤ 1."""
    importance = np.asarray(importance, dtype=float)
    n_responses = importance.size
    m = check_sample_size(m, n_responses)
    if np.any(importance < 0) or not np.isclose(importance.sum(), 1.0):
        raise MetricInputError("expected non-negative importances summing to 1", field="importance")
    w = FLOOR_SHARE / n_responses + (1.0 - FLOOR_SHARE) * importance
    if m >= n_responses:
        return np.ones(n_responses)
    descending = np.sort(w)[::-1]
    capped = np.arange(n_responses)
    rest = np.cumsum(descending[::-1])[::-1]  # Σ of w from position t on
    c = (m - capped) / rest
    fits = (capped < m) & (c * descending <= 1.0)
    return np.minimum(1.0, c[np.argmax(fits)] * w)


def uniform_inclusion(n_responses: int, m: int) -> np.ndarray:
    check_sample_size(m, n_responses)
    return np.full(n_responses, m / n_responses)


def select(design: str, u: np.ndarray, inclusion: np.ndarray) -> np.ndarray:
    """The labelled responses (a boolean mask): the m = Σπ smallest u (uniform), or u < π
    (rm-guided)."""
    design = check_design(design)
    u = check_random_numbers(u)
    inclusion = check_inclusion(inclusion, u.size)
    if design == "uniform":
        m = int(round(inclusion.sum()))
        mask = np.zeros(u.size, dtype=bool)
        mask[np.argsort(u, kind="stable")[:m]] = True
        return mask
    return u < inclusion


def check_inclusion(inclusion: np.ndarray, n_responses: int) -> np.ndarray:
    inclusion = np.asarray(inclusion, dtype=float)
    if inclusion.shape != (n_responses,) or not np.all((inclusion > 0) & (inclusion <= 1)):
        raise MetricInputError(
            f"expected {n_responses} inclusion probabilities in (0, 1]", field="inclusion"
        )
    return inclusion


def pair_inclusion(design: str, inclusion: np.ndarray) -> np.ndarray:
    """π_jk for j ≠ k (N × N; the diagonal holds π_j): m(m−1)/(N(N−1)) for ``uniform``,
    π_j π_k for ``rm-guided``."""
    design = check_design(design)
    inclusion = np.asarray(inclusion, dtype=float)
    n_responses = inclusion.size
    if design == "uniform":
        m = inclusion.sum()
        joint = np.full((n_responses, n_responses), m * (m - 1) / (n_responses * (n_responses - 1)))
    else:
        joint = np.outer(inclusion, inclusion)
    np.fill_diagonal(joint, inclusion)
    return joint
