"""The N×N regret-correlation study ("Rethinking Reward Model Evaluation", Sec. 2 Fig. 2b,
Table 1 and Table 4): each error metric correlated with best-of-n regret across proxies.

**Study designs** (:data:`REGRET_STUDY_DESIGNS`) decide what the error metrics are measured
on.  The seed scores its RMs on a separate test set; measured on the very responses the regret
is measured on, a metric such as Bo5 is nearly the regret itself and wins by construction.
``"held-out-responses"`` (the default) splits each prompt's responses into two halves,
pseudo-randomly by a keyed hash of their scores (the same split every run, whatever ``seed`` and
however the responses are listed): error metrics on one, NDR on the other.
``"held-out-prompts"`` splits the prompts instead (a test set of other prompts, as the seed's).
``"shared"`` uses the same pools for both (Table 2's starred row in Rethinking RM Evaluation: a
test set sampled from the policy being optimised).

**Uncertainty.** Prompts are the independent unit — every RM scores the same responses of a
prompt, so its responses and the RMs' scores of them are dependent, while prompts are
drawn independently — and the proxies are fixed RMs, not a sample.  ``bootstrap``
replicates redraw the prompts with replacement (seeded; under ``"held-out-prompts"``
within each half); each replicate recomputes every metric, NDR and correlation (the ECE
keeps the full sample's margin bins).  A correlation of estimated metrics with estimated
regrets is attenuated by their noise and the replicates are attenuated once more, so the
percentile interval sits off the truth by twice the bias (on ``recipes/regret.toml`` it
even left out its own estimate).  The interval is the bias-corrected percentile interval
(:func:`~rmaudit.metrics.regret._resampling.bias_corrected_interval`), which always holds
the point estimate.

**Screened golds.** A gold whose proxies' NDRs differ by less than their sampling noise ranks
nothing: its correlations are noise, biased towards 0 by far more than any interval can see (a
gold that is itself a very noisy RM, at a few hundred prompts).  Its *reliability* — the share
of the variance of its proxies' NDRs that is not sampling noise, 1 − tr(H V H)/(K − 1) /
s², with V the bootstrap covariance of the K proxies' NDRs, H the centring matrix and s²
their variance — is reported in ``reliability``; golds below ``min_reliability`` are left
out of the means (``averaged`` holds the others; all are kept when none passes).  With
``min_reliability=0`` every gold is averaged, as in the seed.  Measured coverage of the
intervals, per cell: ``benchmarks/coverage.py`` and :mod:`.measured`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._validation import check_choice, check_fraction, check_integer
from rmaudit.metrics.regret._resampling import bias_corrected_interval
from rmaudit.metrics.regret._study_inputs import (
    REGRET_STUDY_DESIGNS,
    ArrayLike,
    Split,
    check_study_pools,
    replicate_weights,
    split_pools,
    usable_prompts,
)
from rmaudit.metrics.regret.error_metrics import ERROR_METRICS
from rmaudit.metrics.regret.gold_proxy import correlation_rows, pair_values
from rmaudit.metrics.regret.ndr import _check_ndr_n

CORRELATIONS: dict[str, str] = {
    "kendall": "Kendall τ",
    "pearson": "Pearson",
    "spearman": "Spearman",
    "mrr": "MRR",
}

#: Golds whose proxies' NDRs are less reliable than this are left out of the means.
MIN_RELIABILITY = 0.8
__all__ = [
    "CORRELATIONS",
    "REGRET_STUDY_DESIGNS",
    "MIN_RELIABILITY",
    "CorrelationEstimate",
    "RegretStudy",
    "regret_correlation",
]


@dataclass(frozen=True)
class CorrelationEstimate:
    """One cell of Table 1 / Table 4: the mean over the averaged golds, its bootstrap standard
    error and bias-corrected interval over prompts (which always holds ``value``);
    ``per_gold`` holds every gold's correlation, screened-out ones included."""

    value: float
    stderr: float
    ci_low: float
    ci_high: float
    per_gold: dict[str, float]


@dataclass(frozen=True)
class RegretStudy:
    """The N×N study: every gold-proxy pair's error metrics and NDR, and their correlations.

    ``error[m]`` and ``ndr`` are (gold × RM) matrices over ``golds`` and ``rms`` (NaN where
    the RM is the gold); ``correlation[(statistic, metric)]`` is a :class:`CorrelationEstimate`.
    ``design`` says which responses the error metrics and the NDR were computed on
    (:data:`REGRET_STUDY_DESIGNS`).
    """

    rms: tuple[str, ...]
    golds: tuple[str, ...]
    metrics: tuple[str, ...]
    n: int
    error: dict[str, np.ndarray]
    ndr: np.ndarray
    correlation: dict[tuple[str, str], CorrelationEstimate] = field(default_factory=dict)
    design: str = "held-out-responses"
    reliability: dict[str, float] = field(default_factory=dict)
    averaged: tuple[str, ...] = ()
    #: per gold, the prompts left out because the gold ranks nothing there (all scores equal)
    skipped: dict[str, int] = field(default_factory=dict)
    #: each RM's scores of the responses the regret was measured on (per prompt)
    regret_pools: dict[str, list[np.ndarray]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def screened(self) -> tuple[str, ...]:
        """Golds left out of the means: their proxies' NDRs differ by less than their noise."""
        return tuple(g for g in self.golds if g not in self.averaged)

    @property
    def kendall_equals_accuracy(self) -> bool:
        """Whether the Kendall τ and accuracy rows hold the same correlations.

        Per prompt, when neither RM ties two responses, every pair is concordant or
        discordant, so τ_b = (n_c − n_d) / C(N, 2) = 2·accuracy − 1; a correlation across
        proxies is unchanged by that increasing affine map, so without ties the two rows are
        identical — one metric, not two.  Ties (in the gold or a proxy) make them differ.
        """
        if not {"kendall", "accuracy"} <= set(self.metrics):
            return False
        return all(
            np.isclose(
                self.correlation[(s, "kendall")].value,
                self.correlation[(s, "accuracy")].value,
                rtol=0,
                atol=1e-9,
            )
            for s in CORRELATIONS
        )


def regret_correlation(
    pools_by_rm: Mapping[str, Sequence[ArrayLike]],
    *,
    metrics: Sequence[str] = tuple(ERROR_METRICS),
    n: int | None = None,
    golds: Sequence[str] | None = None,
    design: str = "held-out-responses",
    min_reliability: float = MIN_RELIABILITY,
    n_bins: int = 10,
    ci: float = 0.95,
    bootstrap: int = 200,
    seed: int = 0,
) -> RegretStudy:
    """The N×N regret-correlation study (Sec. 2 Fig. 2b; Table 1 and Table 4).

    ``pools_by_rm`` maps each RM label to its per-prompt scores of the same pools.  Every RM
    in ``golds`` (default: all) in turn is the gold and every other RM a proxy.  For each
    (gold, proxy) pair: each error metric of ``metrics`` (keys of :data:`ERROR_METRICS`) and
    the regret :func:`~rmaudit.metrics.regret.ndr.ndr` at best-of-``n`` (default: the
    smallest pool the regret is measured on, i.e. the proxy's best response of that pool).
    For each gold, the correlation across its proxies of each metric with NDR — Kendall τ-b,
    Pearson, Spearman, and MRR: the reciprocal NDR rank of the proxy the metric ranks best
    (the seed's footnote 2) — is averaged over golds.  Lower-is-better metrics (ECE) are
    negated first, so a positive correlation always means "better by the metric, less
    regret".  NDR is higher-is-better, so correlating with it is correlating with −regret, the
    sign the seed reports.

    ``design`` (:data:`REGRET_STUDY_DESIGNS`) decides what the error metrics are measured on,
    ``bootstrap`` replicates over prompts (seeded by ``seed``) give each correlation its
    interval at level ``ci``, and golds whose reliability is below ``min_reliability`` are left
    out of the means (0: every gold is averaged, as in the seed): the module docstring says why
    and how.

    >>> rng = np.random.default_rng(0)
    >>> gold = rng.normal(size=(40, 8))
    >>> pools = {f"σ={s}": list(gold + s * rng.normal(size=gold.shape)) for s in (0, 1, 2, 4)}
    >>> study = regret_correlation(pools, metrics=["accuracy"], bootstrap=20)
    >>> round(study.correlation[("spearman", "accuracy")].value, 3)
    0.875
    """
    pools, gold_labels = check_study_pools(pools_by_rm, golds)
    metrics = tuple(check_choice(m, tuple(ERROR_METRICS), "metrics") for m in metrics)
    if not metrics:
        raise MetricInputError("expected at least one error metric, got none", field="metrics")
    design = check_choice(design, tuple(REGRET_STUDY_DESIGNS), "design")
    if isinstance(min_reliability, bool) or not 0.0 <= min_reliability < 1.0:
        raise MetricInputError(
            f"expected a reliability in [0, 1), got {min_reliability!r}", field="min_reliability"
        )
    check_fraction(ci, "ci")
    bootstrap = check_integer(bootstrap, "bootstrap", minimum=2)
    seed = check_integer(seed, "seed", minimum=0)
    n_bins = check_integer(n_bins, "n_bins", minimum=1)
    split = split_pools(pools, design)
    n = _regret_n(split, n, design)
    # Rows of per-prompt weights: row 0 the point estimate (every prompt once), then the
    # bootstrap replicates.
    replicates = replicate_weights(split, bootstrap, seed)
    weights = np.vstack([np.ones(replicates.shape[1]), replicates])
    error, regret = pair_values(split, gold_labels, metrics, n, weights, n_bins=n_bins, seed=seed)
    rms = tuple(pools)
    reliability = {gold: _reliability(regret[g]) for g, gold in enumerate(gold_labels)}
    kept = _kept_golds(reliability, min_reliability)
    rows = correlation_rows(error, regret, rms, gold_labels)
    return RegretStudy(
        rms,
        gold_labels,
        metrics,
        n,
        {m: e[..., 0] for m, e in error.items()},
        regret[..., 0],
        {cell: _estimate(values, kept, gold_labels, cell[0], ci) for cell, values in rows.items()},
        design,
        reliability,
        tuple(g for g, keep in zip(gold_labels, kept, strict=True) if keep),
        _skipped_prompts(split, gold_labels, design),
        split.regret,
    )


def _kept_golds(reliability: dict[str, float], min_reliability: float) -> np.ndarray:
    """Which golds the means average: those reliable enough (all when none is)."""
    # (a reliability can be negative: noise larger than the spread it inflates)
    kept = np.array([min_reliability == 0 or r >= min_reliability for r in reliability.values()])
    if not kept.any():
        kept[:] = True
    return kept


def _regret_n(split: Split, n: int | None, design: str) -> int:
    """The best-of-n the regret is measured at, checked against the pools it is measured on."""
    regret_pools = next(iter(split.regret.values()))
    smallest = min(pool.size for pool in regret_pools)
    try:
        return _check_ndr_n(smallest if n is None else n, regret_pools)
    except MetricInputError as refused:
        if design != "held-out-responses":
            raise
        raise MetricInputError(
            f"{refused.problem} (design 'held-out-responses' measures the "
            f"regret on half of each prompt's responses)",
            field="n",
            prompt_index=refused.prompt_index,
        ) from None


def _estimate(
    values: np.ndarray, kept: np.ndarray, golds: tuple[str, ...], statistic: str, ci: float
) -> CorrelationEstimate:
    """One cell from its (weights row × gold) correlations: the mean over the kept golds, with
    its bias-corrected bootstrap interval."""
    mean_over_golds = values[:, kept].mean(axis=1)
    stderr, low, high = bias_corrected_interval(
        mean_over_golds[0],
        mean_over_golds[1:],
        ci,
        (0.0, 1.0) if statistic == "mrr" else (-1.0, 1.0),
    )
    return CorrelationEstimate(
        float(mean_over_golds[0]),
        stderr,
        low,
        high,
        dict(zip(golds, values[0].tolist(), strict=True)),
    )


def _skipped_prompts(split: Split, golds: tuple[str, ...], design: str) -> dict[str, int]:
    """Per gold, the prompts left out because the gold ranks nothing there."""
    skipped = {}
    for gold in golds:
        usable_metric, usable_regret = usable_prompts(split, gold)
        left_out = int(
            (~usable_metric).sum() + (~usable_regret).sum()
            if design == "held-out-prompts"
            else (~usable_metric).sum()
        )
        if left_out:
            skipped[gold] = left_out
    return skipped


def _reliability(ndr_rows: np.ndarray) -> float:
    """Share of the across-proxy variance of a gold's proxies' NDR estimates (row 0; the gold's
    own row, NaN, left out) that is not sampling noise, from the bootstrap rows:
    1 − tr(H V H) / (K − 1) / s² (see the module docstring, "Screened golds").  −inf when the
    proxies' NDRs are all equal."""
    ndr_rows = ndr_rows[~np.isnan(ndr_rows[:, 0])]
    proxies = ndr_rows.shape[0]
    centring = np.eye(proxies) - 1.0 / proxies
    noise = np.trace(centring @ np.cov(ndr_rows[:, 1:]) @ centring) / (proxies - 1)
    spread = ndr_rows[:, 0].var(ddof=1)
    return float(1.0 - noise / spread) if spread > 0 else float("-inf")
