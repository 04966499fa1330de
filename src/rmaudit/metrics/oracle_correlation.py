"""How well a model's scores predict the oracle's labels within prompts: the correlation a
cheap judge brings to a label budget (docs/budget.md, docs/judges.md).

The label-budget estimators fit one slope across prompts to the labels centred within their
prompt (the generalised regression estimator, Särndal, Swensson & Wretman, *Model Assisted
Survey Sampling*, 1992, Sec. 6.5, with a per-prompt intercept), so what a predictor x is worth
to them is the **pooled within-prompt correlation** with the oracle scores J:

    r = Σ_q Σ_j (x_qj − x̄_q)(J_qj − J̄_q) / √(Σ_q Σ_j (x_qj − x̄_q)² · Σ_q Σ_j (J_qj − J̄_q)²).

A prompt's leniency (how generous the oracle is on it) is left out, as the estimators' per-prompt
intercept leaves it out.  Prompts are the independent units: the interval is the delete-one-
prompt jackknife's on Fisher's z scale (Efron & Tibshirani, *An Introduction to the Bootstrap*,
1993, Sec. 11.2), tanh(atanh(r) ± t_{K−1} · SE_jack(z)), so it stays inside (−1, 1); the
delta-method standard error with a normal quantile covered 0.84–0.89 at 30 prompts.
``stderr`` is the jackknife's SE of r itself.  Measured coverage (1,000 data sets a cell,
benchmarks/coverage_oracle_correlation.py): 0.89–0.94 at 30 prompts, 0.91–0.95 at 100 to 300
prompts (lowest with whole-number labels and r ≈ 0.9): approximate, slightly under 95%.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics.student_t import t_quantile


@dataclass(frozen=True)
class CorrelationResult:
    """The pooled within-prompt correlation, its standard error and 95% interval."""

    value: float
    stderr: float
    ci_low: float
    ci_high: float
    #: prompts that contributed (at least two responses, with labels that vary or not)
    prompts: int


def within_prompt_correlation(
    oracle: Sequence[np.ndarray], scores: Sequence[np.ndarray]
) -> CorrelationResult:
    """The pooled within-prompt correlation of ``scores`` with ``oracle`` (one array per
    prompt, aligned), with its prompt-clustered delta-method interval.

    >>> r = within_prompt_correlation([np.array([1.0, 2, 3]), np.array([5.0, 9, 7])],
    ...                               [np.array([0.0, 1, 2]), np.array([0.0, 2, 1])])
    >>> round(r.value, 6)  # (2 + 4) / √((2 + 2)·(2 + 8))
    0.948683
    """
    if len(oracle) != len(scores):
        raise MetricInputError(
            f"expected one score array per prompt, got {len(scores)} for {len(oracle)} prompts",
            field="scores",
        )
    cross, score_ss, oracle_ss = [], [], []
    for q, (labels, predicted) in enumerate(zip(oracle, scores, strict=True)):
        labels, predicted = np.asarray(labels, float), np.asarray(predicted, float)
        if labels.shape != predicted.shape:
            raise MetricInputError(
                f"prompt {q}: {predicted.size} scores for {labels.size} labels", field="scores"
            )
        if not (np.all(np.isfinite(labels)) and np.all(np.isfinite(predicted))):
            raise MetricInputError(f"prompt {q}: expected finite scores", field="scores")
        if labels.size < 2:
            continue
        x, y = predicted - predicted.mean(), labels - labels.mean()
        cross.append(float(x @ y))
        score_ss.append(float(x @ x))
        oracle_ss.append(float(y @ y))
    a, b, c = np.array(cross), np.array(score_ss), np.array(oracle_ss)
    if a.size < 2 or b.sum() <= 0 or c.sum() <= 0:
        raise MetricInputError(
            "the correlation needs two prompts and scores and labels that vary within a prompt",
            field="oracle",
        )
    r = float(a.sum() / np.sqrt(b.sum() * c.sum()))
    k = a.size
    with np.errstate(divide="ignore", invalid="ignore"):
        # r with each prompt left out (a prompt holding all the variance leaves nan: ±1 then)
        left_out = np.nan_to_num((a.sum() - a) / np.sqrt((b.sum() - b) * (c.sum() - c)))
    inside = 1 - 1e-12
    z = np.arctanh(np.clip(left_out, -inside, inside))
    stderr = float(np.sqrt((k - 1) / k * np.sum((left_out - left_out.mean()) ** 2)))
    half = t_quantile(k - 1, 0.975) * np.sqrt((k - 1) / k * np.sum((z - z.mean()) ** 2))
    centre = np.arctanh(np.clip(r, -inside, inside))
    return CorrelationResult(
        r, stderr, float(np.tanh(centre - half)), float(np.tanh(centre + half)), k
    )
