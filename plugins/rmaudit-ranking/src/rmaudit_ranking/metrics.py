"""Ranking metrics of the RETA paper's App. A.1 (arXiv 2504.14838): Hit Rate@n, MRR and NDCG.

Inputs follow ``rmaudit.metrics``: per prompt q, ``oracle[q]`` holds the oracle scores J of
q's N responses and ``scores[q]`` the RM's scores Y of the same responses.  Every function
returns an :class:`rmaudit.metrics.MetricResult` (mean over prompts, stderr and bootstrap CI
across prompts, per-prompt values).

Ties.  Ties in Y are broken uniformly at random and every value is the exact expectation over
that tie-break (as in ``rmaudit.metrics``), so a metric never depends on the order in which a
prompt's responses are listed.  Ties in J are treated per metric, as documented below.

Why the definitions below (App. A.1 gives no formulas).  MRR and NDCG "focus on evaluating the
ranking of the best answer selected by the RM", and Table 3 also reports them for the
*second*-best answer.  Table 3's Oracle row pins the definitions down: using the oracle as the
RM gives MRR 0.725 and NDCG 0.7970 for its second-best answer.  If a fraction p of prompts
have a tie for the oracle's top score, the oracle's second pick has oracle rank 1 on those
and rank 2 elsewhere, so MRR = p + (1 − p)/2 and, with NDCG = 1/log2(1 + rank),
NDCG = p + (1 − p)/log2(3).  MRR = 0.725 gives p = 0.45, and then NDCG = 0.7970 — exactly the
table.  Hence: oracle ranks count ties as the best rank ("min" ranking), and NDCG is the
DCG of a single relevant item (the RM's pick) found at its oracle rank, whose ideal DCG is 1.

>>> import numpy as np
>>> oracle = [np.array([9.0, 7.0, 7.0, 2.0])]
>>> scores = [np.array([0.1, 0.9, 0.3, 0.2])]   # the RM's favourite has oracle rank 2
>>> mrr(oracle, scores).value, round(ndcg(oracle, scores).value, 4)
(0.5, 0.6309)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics import MetricResult
from rmaudit.metrics.validation import check_fraction, check_integer, check_pools, check_subset_size

ArrayLike = Sequence[float] | np.ndarray

__all__ = ["hit_rate", "mrr", "ndcg", "oracle_ranks", "pick_probabilities", "top_probabilities"]


def oracle_ranks(oracle_pool: ArrayLike) -> np.ndarray:
    """Rank of each response by oracle score, 1 = best; ties share the best rank ("min").

    r_i = 1 + #{k : J_k > J_i}.

    >>> oracle_ranks(np.array([7.0, 9.0, 7.0, 2.0])).tolist()
    [2, 1, 2, 4]
    """
    pool = np.asarray(oracle_pool, dtype=float)
    ascending = np.sort(pool)
    return pool.size - np.searchsorted(ascending, pool, side="right") + 1


def pick_probabilities(score_pool: ArrayLike, rank: int) -> np.ndarray:
    """P(response i is the RM's ``rank``-th choice) under a uniformly random tie-break.

    Sorting by Y (descending) places a tie group in consecutive positions, and a random
    tie-break makes each member of the group equally likely at each of those positions, so
    position ``rank`` holds a uniform draw from the tie group that covers it.

    >>> pick_probabilities(np.array([0.5, 0.9, 0.9, 0.1]), 2).tolist()
    [0.0, 0.5, 0.5, 0.0]
    """
    pool = np.asarray(score_pool, dtype=float)
    value_at_rank = np.sort(pool)[::-1][rank - 1]
    members = pool == value_at_rank
    return members / members.sum()


def top_probabilities(pool: ArrayLike, k: int) -> np.ndarray:
    """P(response i is among the top k by ``pool``) under a uniformly random tie-break.

    Responses above the k-th largest value are in for sure; those tied with it share the
    places left over equally.

    >>> top_probabilities(np.array([3.0, 2.0, 2.0, 1.0]), 2).tolist()
    [1.0, 0.5, 0.5, 0.0]
    """
    values = np.asarray(pool, dtype=float)
    threshold = np.sort(values)[::-1][k - 1]
    above = values > threshold
    tied = values == threshold
    return above + tied * (k - above.sum()) / tied.sum()


def hit_rate(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    n: int,
    *,
    eta: float = 0.25,
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
) -> MetricResult:
    """Hit Rate@n: the share of the oracle's top-η responses that the RM ranks in its top n.

    RETA paper App. A.1 and Fig. 5: the ground-truth set G is the oracle's top η quantile of a
    prompt's N responses, m = ⌊η N⌋ of them (η = 1/4 and N = 256 give m = 64), and

        HR@n = E |top_n(Y) ∩ G| / m,

    the expectation taken over random tie-breaks of Y (for top_n) and of J (for G, when
    responses tie at the quantile's edge).  The two tie-breaks are independent, so
    HR@n = Σ_i P(i ∈ top_n(Y)) · P(i ∈ G) / m.  A perfect RM scores min(n, m)/m (the paper's
    Oracle row: 50, 100, 100 % at n = 32, 64, 128), a random RM n/N.

    Example:
        >>> oracle = [np.array([4.0, 3.0, 2.0, 1.0])]         # G = the top ⌊N/2⌋ = 2: {0, 1}
        >>> scores = [np.array([0.9, 0.1, 0.8, 0.2])]         # RM's top 2: {0, 2}
        >>> hit_rate(oracle, scores, 2, eta=0.5).value
        0.5
    """
    oracle_pools, score_pools = check_pools(oracle, scores, min_responses=1)
    n = check_integer(n, "n", minimum=1)
    eta = check_fraction(eta, "eta")
    check_subset_size(n, [pool.size for pool in oracle_pools])
    per_prompt = np.empty(len(oracle_pools))
    for q, (judged, scored) in enumerate(zip(oracle_pools, score_pools, strict=True)):
        m = int(np.floor(eta * judged.size))
        if m < 1:
            raise MetricInputError(
                f"prompt {q}: expected η·N >= 1 so that the oracle's top-η set is not empty, "
                f"got η·N = {eta * judged.size:g} (N = {judged.size})",
                field="eta",
                value=eta,
                prompt_index=q,
            )
        in_truth = top_probabilities(judged, m)
        per_prompt[q] = top_probabilities(scored, n) @ in_truth / m
    return MetricResult.from_per_prompt(per_prompt, ci=ci, bootstrap=bootstrap, seed=seed)


def mrr(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    *,
    rank: int = 1,
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
) -> MetricResult:
    """MRR: the mean reciprocal oracle rank of the RM's ``rank``-th choice (App. A.1, Table 3).

    Per prompt, with r_i = 1 + #{k : J_k > J_i} the oracle rank of response i (ties share the
    best rank) and π the RM's ``rank``-th choice under a random tie-break of Y:

        MRR = E[1 / r_π] = Σ_i P(π = i) / r_i,

    averaged over prompts.  rank = 1 is the paper's "best response", rank = 2 its "second best
    response".  1 is the best value; an RM that ties every response scores the mean of 1/r_i.

    Example:
        >>> oracle = [np.array([9.0, 7.0, 5.0]), np.array([1.0, 2.0, 3.0])]
        >>> scores = [np.array([0.0, 1.0, 0.5]), np.array([0.0, 1.0, 2.0])]
        >>> mrr(oracle, scores).value              # oracle ranks 2 and 1: (1/2 + 1) / 2
        0.75
        >>> round(mrr(oracle, scores, rank=2).value, 6)   # oracle ranks 3 and 2: (1/3 + 1/2) / 2
        0.416667
    """
    return _reciprocal_rank_metric(
        oracle, scores, rank, lambda ranks: 1.0 / ranks, ci, bootstrap, seed
    )


def ndcg(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    *,
    rank: int = 1,
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
) -> MetricResult:
    """NDCG of the RM's ``rank``-th choice: 1 / log2(1 + its oracle rank) (App. A.1, Table 3).

    The RM's choice π is the one relevant item; found at oracle rank r_π (ties share the best
    rank, as in :func:`mrr`) it has DCG = 1/log2(1 + r_π), and the ideal DCG (rank 1) is 1:

        NDCG = E[1 / log2(1 + r_π)] = Σ_i P(π = i) / log2(1 + r_i),

    averaged over prompts.  This reading reproduces Table 3's Oracle row together with MRR
    (see the module docstring).  It discounts an imperfect pick more gently than MRR
    (rank 2: 0.63 against 0.5).

    Example:
        >>> oracle = [np.array([9.0, 7.0, 5.0])]
        >>> scores = [np.array([0.0, 0.0, 1.0])]          # picks oracle rank 3: 1/log2(4)
        >>> ndcg(oracle, scores).value
        0.5
        >>> round(ndcg(oracle, scores, rank=2).value, 6)  # ranks 1 and 2 tie for 2nd place
        0.815465
    """
    return _reciprocal_rank_metric(
        oracle, scores, rank, lambda ranks: 1.0 / np.log2(1.0 + ranks), ci, bootstrap, seed
    )


def _reciprocal_rank_metric(oracle, scores, rank, gain, ci, bootstrap, seed) -> MetricResult:
    oracle_pools, score_pools = check_pools(oracle, scores, min_responses=1)
    rank = check_integer(rank, "rank", minimum=1)
    check_subset_size(rank, [pool.size for pool in oracle_pools], field="rank")
    per_prompt = np.array(
        [
            pick_probabilities(scored, rank) @ gain(oracle_ranks(judged))
            for judged, scored in zip(oracle_pools, score_pools, strict=True)
        ]
    )
    return MetricResult.from_per_prompt(per_prompt, ci=ci, bootstrap=bootstrap, seed=seed)
