"""Pairwise accuracy from a labelled subset of each prompt's responses (docs/budget.md): the
Horvitz–Thompson ratio over labelled pairs, with bounded control variates fitted across
prompts (the module docstring of :mod:`.estimators` gives the setting)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._results import MetricResult
from rmaudit.metrics._validation import check_choice

from .design import pair_inclusion
from .estimators import ArrayLike, LabelledPools

#: control variates are fitted only with at least this many prompts per coefficient
PROMPTS_PER_COEFFICIENT = 10


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
        for values in pools.predictors(q, own_scores=False):
            # the same ratio on scores known everywhere, from the labelled pairs minus from
            # all: a bounded control variate of (to first order) zero design mean
            s_agree, all_agree, s_ordered, all_ordered = _pair_sums(values, credit, joint, labelled)
            usable = s_ordered > 0 and all_ordered > 0
            cv.append(s_agree / s_ordered - all_agree / all_ordered if usable else 0.0)
        controls.append(cv)
    per_prompt = difference_estimates(
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


def difference_estimates(raw: np.ndarray, controls: np.ndarray) -> np.ndarray:
    """θ̂_q = R̂_q − C_q β_(−q): the raw estimates R̂ (one per prompt) minus control variates C
    (prompts × c, each of design expectation zero) times coefficients fitted by least squares
    (with an intercept) on the *other* prompts.  Leaving prompt q out keeps β_(−q) independent
    of q's labelled subset, so θ̂_q is as unbiased as R̂_q; the fit minimises the variance of the
    mean over prompts (PPI++ power tuning, arXiv 2311.01453).  Columns without spread are
    dropped; of the rest (in priority order) the first c are fitted such that there are
    PROMPTS_PER_COEFFICIENT·(c + 1) prompts; none: θ̂ = R̂."""
    keep = controls.std(axis=0) > 1e-12 * (1 + np.abs(controls).max(axis=0))
    count = len(raw)
    columns = np.flatnonzero(keep)[: max(0, count // PROMPTS_PER_COEFFICIENT - 1)]
    controls = controls[:, columns]
    if controls.shape[1] == 0:
        return raw
    design = np.column_stack([np.ones(count), controls])
    inverse = np.linalg.pinv(design.T @ design)
    coefficients = inverse @ design.T @ raw
    residuals = raw - design @ coefficients
    leverage = np.einsum("ij,jk,ik->i", design, inverse, design)
    # β_(−q) = β − (XᵀX)⁻¹ x_q r_q / (1 − h_q): the least-squares fit without row q
    left_out = coefficients[None, :] - (design @ inverse) * (residuals / (1 - leverage))[:, None]
    return raw - np.einsum("ij,ij->i", controls, left_out[:, 1:])
