"""RETA, best-of-n and pairwise accuracy from a labelled subset of each prompt's responses
(docs/budget.md).

Per prompt, every metric here is a linear functional of the oracle scores, Σ_j a_j J_j (best-of-n
and RETA's numerator, with a_j the positional weights of :mod:`rmaudit.metrics._positional`
placed on the responses by the RM's ranking), or a ratio of two (RETA divides by the prompt's
mean; pairwise accuracy is agreeing pairs over oracle-ordered pairs, sums over pairs).  Each
sum is estimated from the labelled responses S by Horvitz–Thompson (Horvitz & Thompson 1952),
Σ_{j∈S} a_j J_j / π_j (pairs: / π_jk), unbiased for the full-label sum whatever the RM; a ratio
of two such sums is unbiased to first order (its bias is measured in benchmarks/budget.md).

The labelling noise is reduced with control variates whose design expectation is exactly zero:
the Horvitz–Thompson error of the same sums computed on quantities known for every response
(``C = Σ_S a x/π − Σ_all a x``) — in order of priority the constant 1, a cheap judge's
predictions Ĵ, the RM's own scores, and ``auxiliary`` scores (the run passes the other RMs'):
a model-assisted difference estimator (Särndal, Swensson & Wretman, "Model Assisted Survey
Sampling", 1992, Ch. 6).  The
per-prompt estimate is θ̂_q = R̂_q − Σ_c β_c C_{q,c} with β fitted across prompts by least
squares, which minimises the variance of the mean over prompts — the power tuning of PPI++
(Angelopoulos, Duchi & Zrnic, "PPI++: Efficient Prediction-Powered Inference", arXiv
2311.01453), generalised from one mean to designed subsets; β = 0 is the labels-only estimate,
so in-sample the interval is never wider than labels alone.  The value is the mean of θ̂_q, and
the ± and bootstrap CI are across prompts as for every metric (:class:`MetricResult`): each θ̂_q
carries its prompt's labelling noise, so the interval covers what full labelling estimates.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._positional import rank_weights, reta_weights
from rmaudit.metrics._results import CurveResult, MetricResult
from rmaudit.metrics._validation import check_choice, check_fractions, check_integers
from rmaudit.metrics.reta import reta_n_range

from .design import by_response, check_design, check_inclusion, pair_inclusion

ArrayLike = Sequence[float] | np.ndarray
#: control variates are fitted only with at least this many prompts per coefficient
PROMPTS_PER_COEFFICIENT = 10
#: RETA's ratio is corrected for its second-order bias only where the estimated relative
#: variance of its denominator (the prompt's mean) is at most this (a coefficient of variation
#: of 0.5), where the Taylor expansion behind the correction holds
RATIO_CORRECTION_LIMIT = 0.25


class LabelledPools:
    """Validated per-prompt inputs: oracle scores (NaN: unlabelled), RM scores, inclusion
    probabilities of every response, the design, optional cheap-judge predictions, and
    optional auxiliary scores (each, like the predictions, one array per prompt)."""

    def __init__(self, oracle, scores, inclusion, design, predictions=None, auxiliary=()) -> None:
        self.design = check_design(design)
        self.oracle = [np.asarray(pool, dtype=float) for pool in oracle]
        self.scores = [np.asarray(pool, dtype=float) for pool in scores]
        self.inclusion = []
        if not (len(self.oracle) == len(self.scores) == len(inclusion)):
            raise MetricInputError(
                "expected oracle, scores and inclusion for the same prompts", field="inclusion"
            )
        for q, (judged, scored, pi) in enumerate(
            zip(self.oracle, self.scores, inclusion, strict=True)
        ):
            if judged.ndim != 1 or judged.shape != scored.shape:
                raise MetricInputError(
                    f"prompt {q}: expected as many RM scores as responses ({judged.size})",
                    field="scores",
                    prompt_index=q,
                )
            if not np.all(np.isfinite(scored)) or np.any(np.isinf(judged)):
                raise MetricInputError(
                    f"prompt {q}: expected finite scores", field="scores", prompt_index=q
                )
            self.inclusion.append(check_inclusion(pi, judged.size))
        self.predictions = None
        if predictions is not None:
            self.predictions = self._known_everywhere(predictions, "predictions")
        self.auxiliary = [self._known_everywhere(pools, "auxiliary") for pools in auxiliary]

    def _known_everywhere(self, pools, field: str) -> list[np.ndarray]:
        pools = [np.asarray(pool, dtype=float) for pool in pools]
        if len(pools) != len(self.oracle):
            raise MetricInputError(f"expected {field} for every prompt", field=field)
        for q, (pool, judged) in enumerate(zip(pools, self.oracle, strict=True)):
            if pool.shape != judged.shape or not np.all(np.isfinite(pool)):
                raise MetricInputError(
                    f"prompt {q}: expected a finite value for every response",
                    field=field,
                    prompt_index=q,
                )
        return pools

    def labelled(self, q: int) -> np.ndarray:
        return ~np.isnan(self.oracle[q])

    def known(self, q: int, *, own_scores: bool = True) -> list[np.ndarray]:
        """Quantities known for every response of prompt q, by priority: 1, the cheap judge's
        predictions, the RM's own scores, the auxiliary scores."""
        found = [np.ones(self.oracle[q].size)]
        if self.predictions is not None:
            found.append(self.predictions[q])
        if own_scores:
            found.append(self.scores[q])
        return found + [pools[q] for pools in self.auxiliary]


def _ht(weights: np.ndarray, values: np.ndarray, labelled: np.ndarray, pi: np.ndarray):
    """Σ_{j∈S} a_j x_j / π_j for each row of ``weights`` (shape (P, N))."""
    return weights[:, labelled] @ (values[labelled] / pi[labelled])


def difference_estimates(raw: np.ndarray, controls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(θ̂, β): θ̂_q = R̂_q − C_q β_(−q): the raw Horvitz–Thompson estimates R̂ (one per prompt) minus
    control variates C (prompts × c, each of design expectation zero) times coefficients fitted
    by least squares (with an intercept) on the *other* prompts.  Leaving prompt q out keeps
    β_(−q) independent of q's labelled subset, so θ̂_q is exactly design-unbiased whenever R̂_q
    is; the fit minimises the variance of the mean over prompts (PPI++ power tuning, arXiv
    2311.01453).  Columns without spread are dropped; of the rest (in priority order) the first
    c are fitted such that there are PROMPTS_PER_COEFFICIENT·(c + 1) prompts; none: β = 0.
    β, one per column of ``controls`` (0 where none is fitted), is the fit on every prompt."""
    keep = controls.std(axis=0) > 1e-12 * (1 + np.abs(controls).max(axis=0))
    count = len(raw)
    columns = np.flatnonzero(keep)[: max(0, count // PROMPTS_PER_COEFFICIENT - 1)]
    beta = np.zeros(controls.shape[1])
    controls = controls[:, columns]
    if controls.shape[1] == 0:
        return raw, beta
    design = np.column_stack([np.ones(count), controls])
    inverse = np.linalg.pinv(design.T @ design)
    coefficients = inverse @ design.T @ raw
    residuals = raw - design @ coefficients
    leverage = np.einsum("ij,jk,ik->i", design, inverse, design)
    # β_(−q) = β − (XᵀX)⁻¹ x_q r_q / (1 − h_q): the least-squares fit without row q
    left_out = coefficients[None, :] - (design @ inverse) * (residuals / (1 - leverage))[:, None]
    beta[columns] = coefficients[1:]
    return raw - np.einsum("ij,ij->i", controls, left_out[:, 1:]), beta


def _sums(weights, values, known, labelled, pi):
    """Raw estimates (rows of ``weights``) of Σ a x and their control variates (rows × c)."""
    raw = _ht(weights, values, labelled, pi)
    controls = [_ht(weights, x, labelled, pi) - weights @ x for x in known]
    return raw, np.array(controls).T.reshape(raw.size, -1)


def _positional_estimate(pools, weights_for_size, normalize: bool, points: int) -> np.ndarray:
    """(points × prompts) per-prompt estimates: Σ a J, or Σ a J / mean J, each sum a
    difference estimate (:func:`difference_estimates`) before the ratio is taken, the ratio
    corrected for its second-order bias (:func:`_ratio_bias`)."""
    weights, tops, top_controls, bottoms, bottom_controls = [], [], [], [], []
    for q, scores in enumerate(pools.scores):
        labelled, pi, judged = pools.labelled(q), pools.inclusion[q], pools.oracle[q]
        weights.append(np.atleast_2d(by_response(weights_for_size(scores.size), scores)))
        known = pools.known(q)
        raw, controls = _sums(weights[q], judged, known, labelled, pi)
        tops.append(raw)
        top_controls.append(controls)
        if normalize:
            mean = np.full((1, judged.size), 1.0 / judged.size)
            raw, controls = _sums(mean, judged, known, labelled, pi)
            bottoms.append(raw[0])
            bottom_controls.append(controls[0])
    tops, top_controls = np.array(tops), np.array(top_controls)  # prompts × points (× c)
    fits = [difference_estimates(tops[:, p], top_controls[:, p, :]) for p in range(points)]
    per_prompt = np.array([estimates for estimates, _ in fits])
    if not normalize:
        return per_prompt
    means, mean_beta = difference_estimates(np.array(bottoms), np.array(bottom_controls))
    # a correction may push a small mean below 0; the plain Horvitz–Thompson mean is positive
    # wherever a labelled score is (prompts whose mean is not are undefined for RETA)
    means = np.where(means > 0, means, bottoms)
    for q in np.flatnonzero(~(means > 0)):
        raise MetricInputError(
            f"prompt {q}: the estimated mean oracle score is not positive (RETA's normaliser)",
            field="oracle",
            prompt_index=int(q),
        )
    ratios = per_prompt / means
    top_beta = np.array([beta for _, beta in fits])
    for q in range(len(pools.scores)):
        ratios[:, q] -= _ratio_bias(
            pools, q, weights[q], ratios[:, q], means[q], top_beta, mean_beta
        )
    return ratios


def _ratio_bias(pools, q, weights, ratio, mean, top_beta, mean_beta) -> np.ndarray:
    """The second-order design bias of a ratio of estimated sums N̂/D̂, (R·V(D̂) − C(N̂, D̂))/D²
    (Cochran, "Sampling Techniques", 3rd ed., 1977, Sec. 6.8), with V and C the unbiased
    Horvitz–Thompson (co)variance estimates Σ_{j,k∈S} (π_jk − π_j π_k)/π_jk · x_j/π_j · y_k/π_k
    of the residuals the difference estimators leave.  0 when every response is labelled, and
    where the denominator's estimated relative variance exceeds RATIO_CORRECTION_LIMIT: there the
    expansion fails and the correction explodes (on AlpacaEval, 4 of 11 labelled rm-guided, an
    ungated correction took the mean to −0.41 from a bias of +0.018; gated, −0.0004:
    benchmarks/budget.md)."""
    labelled = np.flatnonzero(pools.labelled(q))
    pi, judged = pools.inclusion[q][labelled], pools.oracle[q]
    joint = pair_inclusion(pools.design, pools.inclusion[q])[np.ix_(labelled, labelled)]
    spread = (joint - np.outer(pi, pi)) / joint
    known = np.array(pools.known(q))[:, labelled]
    bottom = (judged[labelled] - mean_beta @ known) / judged.size / pi
    top = weights[:, labelled] * (judged[labelled][None, :] - top_beta @ known) / pi
    variance = bottom @ spread @ bottom
    if variance > RATIO_CORRECTION_LIMIT * mean**2:
        return np.zeros_like(ratio)  # the expansion does not hold: correcting would add error
    covariance = top @ spread @ bottom
    return (ratio * variance - covariance) / mean**2


def budget_reta_curve(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    inclusion: Sequence[ArrayLike],
    etas: ArrayLike,
    *,
    design: str,
    predictions: Sequence[ArrayLike] | None = None,
    auxiliary: Sequence[Sequence[ArrayLike]] = (),
    normalize: bool = True,
    n: int | None = None,
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
) -> CurveResult:
    """RETA(η) at each η from labelled subsets: per prompt, the Horvitz–Thompson estimate of
    Eq. 6's exact expectation Σ_i w_i J_(i) (RETA paper, arXiv 2504.14838, Sec. 3.3, App. B.2),
    divided by the estimated mean oracle score when ``normalize``, with control variates (module
    docstring).  With every π = 1 and no predictions it equals :func:`rmaudit.metrics.reta_curve`
    (``method="exact"``).  ``predictions``: a cheap judge's scores of every response;
    ``auxiliary``: more scores of every response (other RMs'), both control variates only."""
    pools = LabelledPools(oracle, scores, inclusion, design, predictions, auxiliary)
    etas = check_fractions(etas, "etas")

    def weights(size: int) -> np.ndarray:
        ns = (n,) if n is not None else tuple(int(v) for v in reta_n_range(size))
        return reta_weights(size, ns, tuple(float(e) for e in etas), False)

    per_prompt = _positional_estimate(pools, weights, normalize, etas.size)
    return CurveResult.from_per_prompt(etas, per_prompt, ci=ci, bootstrap=bootstrap, seed=seed)


def budget_reta(oracle, scores, inclusion, eta: float, **options) -> MetricResult:
    """RETA(η) from labelled subsets: :func:`budget_reta_curve` at one η."""
    return budget_reta_curve(oracle, scores, inclusion, [eta], **options).point(0)


def budget_best_of_n_curve(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    inclusion: Sequence[ArrayLike],
    ns: ArrayLike,
    *,
    design: str,
    rank: int = 1,
    predictions: Sequence[ArrayLike] | None = None,
    auxiliary: Sequence[Sequence[ArrayLike]] = (),
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
) -> CurveResult:
    """Best-of-n (``rank`` = 1) or the rank-th choice among n random responses, at each n, from
    labelled subsets: the Horvitz–Thompson estimate of App. B.3's unbiased estimator Σ_i w_i
    J_(i) (RETA paper, arXiv 2504.14838, Eq. 1), with control variates."""
    pools = LabelledPools(oracle, scores, inclusion, design, predictions, auxiliary)
    ns = check_integers(ns, "n", minimum=1)
    smallest = min(pool.size for pool in pools.oracle)
    if ns.max() > smallest or rank > ns.min():
        raise MetricInputError(
            f"expected rank <= n <= {smallest} responses, got n = {ns.tolist()}", field="n"
        )

    def weights(size: int) -> np.ndarray:
        return np.array([rank_weights(size, int(v), rank) for v in ns])

    per_prompt = _positional_estimate(pools, weights, False, ns.size)
    return CurveResult.from_per_prompt(
        ns.astype(float), per_prompt, ci=ci, bootstrap=bootstrap, seed=seed
    )


def budget_best_of_n(oracle, scores, inclusion, n: int, **options) -> MetricResult:
    """BoN@n from labelled subsets: :func:`budget_best_of_n_curve` at one n."""
    return budget_best_of_n_curve(oracle, scores, inclusion, [n], **options).point(0)


def budget_pairwise_accuracy(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    inclusion: Sequence[ArrayLike],
    *,
    design: str,
    predictions: Sequence[ArrayLike] | None = None,
    auxiliary: Sequence[Sequence[ArrayLike]] = (),
    ties: str = "half",
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
) -> MetricResult:
    """Pairwise accuracy from labelled subsets: per prompt the ratio of the Horvitz–Thompson
    estimates (weights 1/π_jk over labelled pairs) of Σ_{J_a > J_b} credit(a, b) and of
    #{J_a > J_b} (Rethinking RM Evaluation, arXiv 2410.05584, App. 8.3).  With a cheap judge
    the control variate is the same ratio computed on its predictions, from the labelled pairs
    minus from every pair (bounded, so stable with few labels).  With ``uniform`` every pair
    weighs the same, so without a cheap judge it is the labelled subset's own accuracy.  The
    ``auxiliary`` scores (other RMs') enter as the cheap judge does."""
    pools = LabelledPools(oracle, scores, inclusion, design, predictions, auxiliary)
    tie_credit = {"half": 0.5, "loss": 0.0}[check_choice(ties, ("half", "loss"), "ties")]
    estimates, controls = [], []
    for q, scored in enumerate(pools.scores):
        labelled = np.flatnonzero(pools.labelled(q))
        joint = pair_inclusion(pools.design, pools.inclusion[q])
        credit = (scored[:, None] > scored[None, :]) + tie_credit * (
            scored[:, None] == scored[None, :]
        )
        np.fill_diagonal(credit, 0.0)
        agree, _, ordered, _ = _pair_sums(pools.oracle[q], credit, joint, labelled)
        if ordered <= 0:
            raise MetricInputError(
                f"prompt {q}: no two labelled responses with different oracle scores",
                field="oracle",
                prompt_index=q,
            )
        estimates.append(agree / ordered)
        cv = []
        for values in pools.known(q, own_scores=False)[1:]:
            # the same ratio on scores known everywhere, from the labelled pairs minus from
            # all: a bounded control variate of (to first order) zero design mean
            s_agree, all_agree, s_ordered, all_ordered = _pair_sums(values, credit, joint, labelled)
            usable = s_ordered > 0 and all_ordered > 0
            cv.append(s_agree / s_ordered - all_agree / all_ordered if usable else 0.0)
        controls.append(cv)
    per_prompt, _ = difference_estimates(
        np.array(estimates), np.array(controls).reshape(len(estimates), -1)
    )
    return MetricResult.from_per_prompt(per_prompt, ci=ci, bootstrap=bootstrap, seed=seed)


def _pair_sums(values, credit, joint, labelled) -> tuple[float, float, float, float]:
    """Over the pairs with values_a > values_b: Σ_S credit/π_ab, Σ_all credit, Σ_S 1/π_ab and
    their number (S the labelled responses)."""
    prefers = values[:, None] > values[None, :]
    block = np.ix_(labelled, labelled)
    weight = prefers[block] / joint[block]
    return (
        float((weight * credit[block]).sum()),
        float((prefers * credit).sum()),
        float(weight.sum()),
        float(prefers.sum()),
    )


def labelled_weight_share(
    oracle: Sequence[ArrayLike], scores: Sequence[ArrayLike], n: int = 16
) -> float:
    """The share of an RM's best-of-n weight (its top picks) that falls on labelled responses,
    averaged over prompts: near 1, its top picks were labelled; near the labelled fraction, they
    were labelled no more often than any response (the estimate then leans on few labels)."""
    shares = []
    for judged, scored in zip(oracle, scores, strict=True):
        judged, scored = np.asarray(judged, float), np.asarray(scored, float)
        weights = by_response(rank_weights(judged.size, min(n, judged.size), 1), scored)
        shares.append(weights[~np.isnan(judged)].sum() / weights.sum())
    return float(np.mean(shares))
