"""RETA, best-of-n and pairwise accuracy from a labelled subset of each prompt's responses
(docs/budget.md).

Per prompt, every metric here is a linear functional of the oracle scores, Σ_j a_j J_j (best-of-n
and RETA's numerator, with a_j the positional weights of :mod:`rmaudit.metrics._positional`
placed on the responses by the RM's ranking), or a ratio of two (RETA divides by the prompt's
mean; pairwise accuracy is agreeing pairs over oracle-ordered pairs, sums over pairs).

Each sum is estimated from the labelled responses S by the generalised regression (GREG)
estimator (Särndal, Swensson & Wretman, "Model Assisted Survey Sampling", 1992, Sec. 6.5): a
working model ŷ = α_q + x·β predicts every response from what is known for all of them (a
cheap judge's predictions Ĵ, the RM's own scores, ``auxiliary`` scores — the run passes the
other RMs'), and the Horvitz–Thompson estimate (Horvitz & Thompson 1952) of the labels'
residuals corrects it: Σ_j a_j ŷ_j + Σ_{j∈S} a_j (J_j − ŷ_j)/π_j.  The slopes β are pooled
across prompts and fitted by least squares without the prompt they serve — for one predictor
and a mean, the power-tuned λ of PPI++ (Angelopoulos, Duchi & Zrnic, arXiv 2311.01453), which
the test suite checks against ppi-python — and α_q is the prompt's own intercept: a prompt's
level (a lenient judge, an easy prompt) is what RMs' scores predict worst, and what a few labels
of the prompt measure best.  Under ``uniform`` the estimate is exactly design-unbiased, under
``rm-guided`` to first order (:func:`_model_assisted`); a ratio of two is unbiased to first order
(its bias is measured in benchmarks/budget.md).  Pairwise accuracy keeps the Horvitz–Thompson
ratio with bounded control variates (:mod:`.pairwise`).

The value is the mean of the per-prompt estimates θ̂_q, and the ± and bootstrap CI are across
prompts as for every metric (:class:`MetricResult`): each θ̂_q carries its prompt's labelling
noise, so the interval covers what full labelling estimates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rmaudit.errors import MetricInputError
from rmaudit.metrics._positional import rank_weights, reta_weights
from rmaudit.metrics._results import CurveResult, MetricResult
from rmaudit.metrics._validation import check_fractions, check_integers
from rmaudit.metrics.reta import reta_n_range

from .design import by_response, check_design, check_inclusion, pair_inclusion

ArrayLike = Sequence[float] | np.ndarray
Floats = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
#: the working model's slopes are fitted only with this many labelled degrees of freedom each
LABELS_PER_COEFFICIENT = 10
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
            pi = check_inclusion(pi, judged.size)
            if self.design == "uniform" and judged.size >= 2 and round(pi.sum()) < 2:
                # with one label no pair is ever labelled together (π_jk = 0), and the
                # covariance estimates of _model_assisted and _ratio_bias need every π_jk > 0
                raise MetricInputError(
                    f"prompt {q}: a uniform design needs at least 2 labels per prompt",
                    field="inclusion",
                    prompt_index=q,
                )
            self.inclusion.append(pi)
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

    def predictors(self, q: int, *, own_scores: bool = True) -> list[np.ndarray]:
        """Scores known for every response of prompt q, by priority: the cheap judge's
        predictions, the RM's own scores, the auxiliary scores."""
        found = []
        if self.predictions is not None:
            found.append(self.predictions[q])
        if own_scores:
            found.append(self.scores[q])
        return found + [pools[q] for pools in self.auxiliary]


def model_slopes(pools: LabelledPools) -> np.ndarray:
    """(prompts × p) slopes of the working model J ≈ α_q + x·β over the predictors known for
    every response (:meth:`LabelledPools.predictors`), fitted by weighted least
    squares (weights 1/π) on the labelled responses centred within their prompt — slopes pooled
    across prompts, an intercept per prompt — leaving prompt q out for row q, so q's slopes do
    not depend on its own labelled subset.  For one predictor and a mean this is PPI++'s
    power-tuned λ (arXiv 2311.01453).  Predictors are taken in priority order while the labels
    give LABELS_PER_COEFFICIENT degrees of freedom per slope; those without spread within
    prompts are dropped (slope 0)."""
    grams: list[Floats] = []
    moments: list[Floats] = []
    freedom = 0
    for q in range(len(pools.oracle)):
        labelled = pools.labelled(q)
        weight = 1 / pools.inclusion[q][labelled]
        x = np.array(pools.predictors(q))[:, labelled].T
        y = pools.oracle[q][labelled]
        if labelled.any():
            x, y = x - weight @ x / weight.sum(), y - weight @ y / weight.sum()
        grams.append((x * weight[:, None]).T @ x)
        moments.append((x * weight[:, None]).T @ y)
        freedom += max(0, int(labelled.sum()) - 1)
    gram, moment = np.array(grams), np.array(moments)  # prompts × p × p, prompts × p
    spread = np.diagonal(gram.sum(axis=0))
    usable = np.flatnonzero(spread > 1e-12 * (1 + spread.max(initial=0.0)))
    usable = usable[: max(0, freedom // LABELS_PER_COEFFICIENT - 1)]
    slopes = np.zeros(moment.shape)
    if usable.size:
        scale = np.sqrt(spread[usable])  # standardised: pinv's cut-off treats each one alike
        gram = gram[:, usable][:, :, usable] / np.outer(scale, scale)
        moment = moment[:, usable] / scale
        left_out = np.linalg.pinv(gram.sum(axis=0) - gram, rtol=1e-10, hermitian=True)
        slopes[:, usable] = (left_out @ (moment.sum(axis=0) - moment)[..., None])[..., 0] / scale
    return slopes


def _model_assisted(
    weights: Floats,
    judged: Floats,
    fitted: Floats,
    labelled: Mask,
    pi: Floats,
    spread: Floats | None,
) -> tuple[Floats, Floats]:
    """(T̂, e) for one prompt: per row of ``weights``, the generalised regression estimate
    (Särndal, Swensson & Wretman 1992, Sec. 6.5) of Σ a J on the working model ŷ = α + f, with
    f = ``fitted`` (slopes fitted without this prompt) and α the prompt's own intercept, the
    Hájek mean Σ_S (J − f)/π ÷ Σ_S 1/π over the labelled responses S; e = J − ŷ on S.

        T̂ = Σ_j a_j ŷ_j + Σ_{j∈S} a_j (J_j − ŷ_j) / π_j  (+ Ĉ under ``uniform``)

    α comes from the same labels, so α·(Σ a − Σ_S a/π) has design expectation
    −Cov(α, Σ_S a/π).  Under ``uniform`` (fixed size; ``spread`` the (π_jk − π_j π_k)/π_jk of
    S) α is a Horvitz–Thompson sum and Ĉ, that covariance's unbiased Horvitz–Thompson estimate,
    makes T̂ exactly design-unbiased.  Under ``rm-guided`` (Poisson; ``spread`` None) α is a
    ratio and T̂ is unbiased to first order: the exact alternatives measured wider and no less
    biased once in RETA's ratio (AlpacaEval, 4 of 11 labels: benchmarks/budget.md).
    T̂ = Σ a J when every π = 1."""
    if labelled.all() and np.all(pi == 1):
        return weights @ judged, np.zeros(judged.size)
    residual = judged[labelled] - fitted[labelled]
    inverse = 1 / pi[labelled]
    intercept = residual @ inverse / inverse.sum() if labelled.any() else 0.0
    errors = residual - intercept
    estimate = weights @ (fitted + intercept) + weights[:, labelled] @ (errors * inverse)
    if spread is not None:
        estimate += (weights[:, labelled] * inverse) @ spread @ (errors * inverse / judged.size)
    return estimate, errors


def _positional_estimate(
    pools: LabelledPools,
    weights_for_size: Callable[[int], Floats],
    normalize: bool,
    points: int,
) -> Floats:
    """(points × prompts) per-prompt estimates: Σ a J (:func:`_model_assisted`), or its ratio
    to the prompt's estimated mean J — under ``uniform`` corrected for its second-order bias
    (:func:`_ratio_bias`).  Under ``rm-guided`` the estimates are only first-order unbiased and
    the correction, which assumes exactly unbiased sums, doubles the bias instead (brute-force
    enumeration, 6 of 12 labelled; AlpacaEval: benchmarks/budget.md), so it is not applied."""
    slopes = model_slopes(pools)
    exact = pools.design == "uniform"
    per_prompt = np.empty((points, len(pools.scores)))
    for q, scores in enumerate(pools.scores):
        labelled, pi, judged = pools.labelled(q), pools.inclusion[q], pools.oracle[q]
        weights = np.atleast_2d(by_response(weights_for_size(scores.size), scores))
        fitted = slopes[q] @ np.array(pools.predictors(q))
        spread = None
        if exact:
            joint = pair_inclusion(pools.design, pi)[np.ix_(labelled, labelled)]
            spread = (joint - np.outer(pi[labelled], pi[labelled])) / joint
        top, residual = _model_assisted(weights, judged, fitted, labelled, pi, spread)
        if not normalize:
            per_prompt[:, q] = top
            continue
        mean = np.full((1, judged.size), 1.0 / judged.size)
        bottom = _model_assisted(mean, judged, fitted, labelled, pi, spread)[0][0]
        if not bottom > 0:
            # a model-assisted mean of a few labels may fall to 0 or below; the plain
            # Horvitz–Thompson mean is positive wherever a labelled score is
            bottom = judged[labelled] @ (1 / pi[labelled]) / judged.size
        if not bottom > 0:
            raise MetricInputError(
                f"prompt {q}: the estimated mean oracle score is not positive (RETA's normaliser)",
                field="oracle",
                prompt_index=q,
            )
        per_prompt[:, q] = top / bottom
        if spread is not None:  # uniform: the sums are exactly unbiased
            errors = residual / pi[labelled]
            per_prompt[:, q] -= _ratio_bias(
                per_prompt[:, q],
                bottom,
                weights[:, labelled] * errors,
                errors / judged.size,
                spread,
            )
    return per_prompt


def _ratio_bias(ratio: Floats, mean: float, top: Floats, bottom: Floats, spread: Floats) -> Floats:
    """The second-order design bias of a ratio of unbiased sums N̂/D̂, (R·V(D̂) − C(N̂, D̂))/D²
    (Cochran, "Sampling Techniques", 3rd ed., 1977, Sec. 6.8), with V and C the unbiased
    Horvitz–Thompson (co)variance estimates Σ_{j,k∈S} (π_jk − π_j π_k)/π_jk · x_j/π_j · y_k/π_k
    (``spread`` the middle factor; ``top`` and ``bottom`` the x/π of the numerators and of the
    denominator) of the residuals the estimators leave.  0 when every response is labelled, and
    where the denominator's estimated relative variance exceeds RATIO_CORRECTION_LIMIT: there the
    expansion fails and the correction explodes."""
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
    """RETA(η) at each η from labelled subsets: per prompt, the model-assisted estimate of
    Eq. 6's exact expectation Σ_i w_i J_(i) (RETA paper, arXiv 2504.14838, Sec. 3.3, App. B.2),
    divided by the estimated mean oracle score when ``normalize`` (module docstring).  With
    every π = 1 it equals :func:`rmaudit.metrics.reta_curve`
    (``method="exact"``).  ``predictions``: a cheap judge's scores of every response;
    ``auxiliary``: more scores of every response (other RMs'), both predictors only."""
    pools = LabelledPools(oracle, scores, inclusion, design, predictions, auxiliary)
    etas = check_fractions(etas, "etas")

    def weights(size: int) -> np.ndarray:
        ns = (n,) if n is not None else tuple(int(v) for v in reta_n_range(size))
        return reta_weights(size, ns, tuple(float(e) for e in etas), False)

    per_prompt = _positional_estimate(pools, weights, normalize, etas.size)
    return CurveResult.from_per_prompt(etas, per_prompt, ci=ci, bootstrap=bootstrap, seed=seed)


def budget_reta(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    inclusion: Sequence[ArrayLike],
    eta: float,
    **options: Any,
) -> MetricResult:
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
    labelled subsets: the model-assisted estimate (module docstring) of App. B.3's unbiased
    estimator Σ_i w_i J_(i) (RETA paper, arXiv 2504.14838, Eq. 1)."""
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


def budget_best_of_n(
    oracle: Sequence[ArrayLike],
    scores: Sequence[ArrayLike],
    inclusion: Sequence[ArrayLike],
    n: int,
    **options: Any,
) -> MetricResult:
    """BoN@n from labelled subsets: :func:`budget_best_of_n_curve` at one n."""
    return budget_best_of_n_curve(oracle, scores, inclusion, [n], **options).point(0)


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
