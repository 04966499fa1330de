"""The N×N regret-correlation study ("Rethinking Reward Model Evaluation", Sec. 2 Fig. 2b,
Table 1 and Table 4): each error metric correlated with best-of-n regret across proxies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._validation import check_choice, check_fraction, check_integer, check_pools
from rmaudit.metrics.pairwise import pairwise_accuracy
from rmaudit.metrics.regret._resampling import bootstrap_counts, percentile_interval
from rmaudit.metrics.regret._rows import (ArrayLike, Pools, _accuracy_pair_rows, _bo5_rows,
                                          _by_size, _check_gold_proxy, _ece_bin_stats,
                                          _kendall_rows, _mrr_rows, _ndcg_rows, _pearson_rows,
                                          _reciprocal_gold_rank, _spearman_rows, _top_mask,
                                          _xi_rows)
from rmaudit.metrics.regret.error_metrics import ERROR_METRICS, LOWER_IS_BETTER
from rmaudit.metrics.regret.ndr import _check_ndr_n, _ndr_gains

CORRELATIONS: dict[str, str] = {
    "kendall": "Kendall τ",
    "pearson": "Pearson",
    "spearman": "Spearman",
    "mrr": "MRR",
}


def _correlations(metric: np.ndarray, regret: np.ndarray) -> dict[str, np.ndarray]:
    """Kendall τ-b, Pearson, Spearman and best-by-metric MRR along the last axis (proxies)."""
    ranks_by_regret = _reciprocal_gold_rank(regret)  # E[1 / rank of each proxy by NDR]
    return {
        "kendall": _kendall_rows(metric, regret),
        "pearson": _pearson_rows(metric, regret),
        "spearman": _spearman_rows(metric, regret),
        "mrr": (_top_mask(metric) * ranks_by_regret).sum(axis=-1),
    }


@dataclass(frozen=True)
class CorrelationEstimate:
    """One cell of Table 1 / Table 4: the mean over golds, with a bootstrap CI over prompts."""

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
    """

    rms: tuple[str, ...]
    golds: tuple[str, ...]
    metrics: tuple[str, ...]
    n: int
    error: dict[str, np.ndarray]
    ndr: np.ndarray
    correlation: dict[tuple[str, str], CorrelationEstimate] = field(default_factory=dict)


def _check_study_pools(pools_by_rm: Mapping[str, Sequence[ArrayLike]],
                       golds: Sequence[str] | None) -> tuple[dict[str, Pools], tuple[str, ...]]:
    if not isinstance(pools_by_rm, Mapping):
        raise MetricInputError(f"expected a mapping of RM label to per-prompt scores, got "
                               f"{type(pools_by_rm).__name__}", field="scores")
    if len(pools_by_rm) < 3:
        raise MetricInputError(
            f"expected at least 3 reward models (each gold needs >= 2 proxies to correlate "
            f"across), got {len(pools_by_rm)}", field="scores")
    labels = list(pools_by_rm)
    first = labels[0]
    checked: dict[str, Pools] = {}
    for label in labels:
        try:
            reference, pools = check_pools(pools_by_rm[first], pools_by_rm[label])
        except MetricInputError as error:
            raise MetricInputError(f"RM {label!r} and RM {first!r} must score the same pools; "
                                   f"{error.problem}", field="scores",
                                   prompt_index=error.prompt_index) from None
        checked[label] = pools
    gold_labels = tuple(labels) if golds is None else tuple(golds)
    unknown = [g for g in gold_labels if g not in checked]
    if unknown or not gold_labels:
        raise MetricInputError(f"expected gold labels among {labels}, got {list(gold_labels)}",
                               field="golds")
    for gold in gold_labels:
        try:
            _check_gold_proxy(checked[gold], checked[gold])
        except MetricInputError as error:
            raise MetricInputError(f"RM {gold!r} as gold: {error.problem}", field="gold",
                                   prompt_index=error.prompt_index) from None
    return checked, gold_labels


def regret_correlation(pools_by_rm: Mapping[str, Sequence[ArrayLike]], *,
                       metrics: Sequence[str] = tuple(ERROR_METRICS), n: int | None = None,
                       golds: Sequence[str] | None = None, n_bins: int = 10,
                       ci: float = 0.95, bootstrap: int = 200, seed: int = 0) -> RegretStudy:
    """The N×N regret-correlation study (Sec. 2 Fig. 2b; Table 1 and Table 4).

    ``pools_by_rm`` maps each RM label to its per-prompt scores of the same pools.  Every RM
    in ``golds`` (default: all) in turn is the gold and every other RM a proxy.  For each
    (gold, proxy) pair: each error metric of ``metrics`` (keys of :data:`ERROR_METRICS`) and
    the regret :func:`ndr` at best-of-``n`` (default: the smallest pool size, i.e. the proxy's
    best response of the whole pool).  For each gold, the correlation across its proxies of
    each metric with NDR — Kendall τ-b, Pearson, Spearman, and MRR: the reciprocal NDR rank of
    the proxy the metric ranks best (the seed's footnote 2) — is averaged over golds.
    Lower-is-better metrics (ECE) are negated first, so a positive correlation always means
    "better by the metric, less regret".  NDR is higher-is-better, so correlating with it is
    correlating with −regret, the sign the seed reports.

    Uncertainty: ``bootstrap`` replicates redraw the prompts with replacement (seeded); each
    replicate recomputes every metric, NDR and correlation from the redrawn prompts (the ECE
    keeps the full sample's margin bins), and the CI is the percentile interval of the mean
    over golds.  Metrics are computed per prompt then averaged — with the same pools as the
    regret, as when the RM test set is sampled from the policy being optimised (Table 2's
    starred row).

    >>> rng = np.random.default_rng(0)
    >>> gold = rng.normal(size=(40, 8))
    >>> pools = {f"σ={s}": list(gold + s * rng.normal(size=gold.shape)) for s in (0, 1, 2, 4)}
    >>> study = regret_correlation(pools, metrics=["accuracy"], n=4, bootstrap=20)
    >>> round(study.correlation[("spearman", "accuracy")].value, 3)
    0.875
    """
    pools, gold_labels = _check_study_pools(pools_by_rm, golds)
    metrics = tuple(check_choice(m, tuple(ERROR_METRICS), "metrics") for m in metrics)
    if not metrics:
        raise MetricInputError("expected at least one error metric, got none", field="metrics")
    check_fraction(ci, "ci")
    bootstrap = check_integer(bootstrap, "bootstrap", minimum=2)
    seed = check_integer(seed, "seed", minimum=0)
    n_bins = check_integer(n_bins, "n_bins", minimum=1)
    rms = tuple(pools)
    smallest = min(pool.size for pool in pools[rms[0]])
    n = _check_ndr_n(smallest if n is None else n, pools[rms[0]])
    n_prompts = len(pools[rms[0]])
    # Row 0 weighs every prompt once (the point estimate); rows 1.. are bootstrap replicates.
    weights = np.vstack([np.ones(n_prompts), bootstrap_counts(n_prompts, bootstrap, seed)])

    shape = (len(gold_labels), len(rms), weights.shape[0])
    error = {m: np.full(shape, np.nan) for m in metrics}
    regret = np.full(shape, np.nan)
    for g, gold_label in enumerate(gold_labels):
        gold = pools[gold_label]
        for p, label in enumerate(rms):
            if label == gold_label:
                continue
            proxy_gain, gold_gain = _ndr_gains(gold, pools[label], np.array([n]))
            regret[g, p] = (weights @ proxy_gain[0]) / (weights @ gold_gain[0])
            for metric in metrics:
                error[metric][g, p] = _weighted_metric(metric, gold, pools[label], weights,
                                                       n_bins=n_bins, seed=seed)

    others = ~np.eye(len(rms), dtype=bool)[[rms.index(g) for g in gold_labels]]
    regret_by_gold = np.stack([regret[g][others[g]] for g in range(len(gold_labels))])
    correlation = {}
    for metric in metrics:
        sign = -1.0 if metric in LOWER_IS_BETTER else 1.0
        by_gold = np.stack([sign * error[metric][g][others[g]] for g in range(len(gold_labels))])
        # (golds × proxies × replicates) → correlate along proxies, replicates first
        stats = _correlations(np.moveaxis(by_gold, -1, 0), np.moveaxis(regret_by_gold, -1, 0))
        for statistic, values in stats.items():  # values: (replicates × golds)
            mean_over_golds = values.mean(axis=1)
            stderr, low, high = percentile_interval(mean_over_golds[1:], ci)
            correlation[(statistic, metric)] = CorrelationEstimate(
                float(mean_over_golds[0]), float(stderr), float(low), float(high),
                dict(zip(gold_labels, values[0].tolist())))
    return RegretStudy(rms, gold_labels, metrics, n, {m: e[..., 0] for m, e in error.items()},
                       regret[..., 0], correlation)


def _weighted_metric(metric: str, gold: Pools, proxy: Pools, weights: np.ndarray, *,
                     n_bins: int, seed: int) -> np.ndarray:
    """An error metric under each row of prompt weights (row 0: the plain estimate)."""
    if metric == "ece":
        stats = _ece_bin_stats(gold, proxy, n_bins)  # (Q, 3, bins)
        count, conf, credit = np.einsum("rq,qkb->krb", weights, stats)
        return np.abs(conf - credit).sum(axis=-1) / count.sum(axis=-1)
    rows = {
        "accuracy": lambda g, p: pairwise_accuracy(g, p, bootstrap=1).per_prompt,
        "pearson": lambda g, p: _by_size(g, p, _pearson_rows),
        "spearman": lambda g, p: _by_size(g, p, _spearman_rows),
        "kendall": lambda g, p: _by_size(g, p, _kendall_rows),
        "xi": lambda g, p: _by_size(g, p, _xi_rows),
        "mrr": lambda g, p: _by_size(g, p, _mrr_rows),
        "ndcg": lambda g, p: _by_size(g, p, _ndcg_rows),
        "bo5": lambda g, p: _by_size(g, p, _bo5_rows),
        "accuracy_pair": lambda g, p: _by_size(g, p, _accuracy_pair_rows(seed)),
    }[metric]
    per_prompt = rows(gold, proxy)
    return weights @ per_prompt / weights.sum(axis=1)

