"""Every (gold, proxy) pair of the regret-correlation study (:mod:`.study`): its error metrics
and best-of-n NDR under each row of per-prompt weights, and their correlations across a
gold's proxies ("Rethinking Reward Model Evaluation", Sec. 2 Fig. 2b)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rmaudit.metrics.pairwise import pairwise_accuracy
from rmaudit.metrics.regret._rows import (
    _accuracy_pair_rows,
    _bo5_rows,
    _by_size,
    _ece_bin_stats,
    _kendall_rows,
    _mrr_rows,
    _ndcg_rows,
    _pearson_rows,
    _reciprocal_gold_rank,
    _spearman_rows,
    _top_mask,
    _xi_rows,
)
from rmaudit.metrics.regret._study_inputs import Split, usable_prompts
from rmaudit.metrics.regret.error_metrics import LOWER_IS_BETTER
from rmaudit.metrics.regret.ndr import _ndr_gains


def _correlations(metric: np.ndarray, regret: np.ndarray) -> dict[str, np.ndarray]:
    """Kendall τ-b, Pearson, Spearman and best-by-metric MRR along the last axis (proxies)."""
    ranks_by_regret = _reciprocal_gold_rank(regret)  # E[1 / rank of each proxy by NDR]
    return {
        "kendall": _kendall_rows(metric, regret),
        "pearson": _pearson_rows(metric, regret),
        "spearman": _spearman_rows(metric, regret),
        "mrr": (_top_mask(metric) * ranks_by_regret).sum(axis=-1),
    }


def pair_values(
    split: Split,
    gold_labels: Sequence[str],
    metrics: Sequence[str],
    n: int,
    weights: np.ndarray,
    *,
    n_bins: int,
    seed: int,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Every (gold, RM) pair's error metrics and best-of-n NDR under each row of per-prompt
    weights: arrays (golds × RMs × rows), NaN where the RM is the gold.  Prompts where a gold
    ranks nothing (:func:`usable_prompts`) weigh 0 for that gold."""
    rms = tuple(split.metric)
    shape = (len(gold_labels), len(rms), weights.shape[0])
    error = {m: np.full(shape, np.nan) for m in metrics}
    regret = np.full(shape, np.nan)
    per_prompt = _per_prompt_metrics(seed)
    for g, gold_label in enumerate(gold_labels):
        usable_metric, usable_regret = usable_prompts(split, gold_label)
        metric_weights = weights[:, split.metric_prompts[usable_metric]]
        regret_weights = weights[:, split.regret_prompts[usable_regret]]
        metric_pools = {
            label: [p for p, use in zip(pools, usable_metric, strict=True) if use]
            for label, pools in split.metric.items()
        }
        regret_pools = {
            label: [p for p, use in zip(pools, usable_regret, strict=True) if use]
            for label, pools in split.regret.items()
        }
        gold = metric_pools[gold_label]
        for p, label in enumerate(rms):
            if label == gold_label:
                continue
            proxy_gain, gold_gain = _ndr_gains(
                regret_pools[gold_label], regret_pools[label], np.array([n])
            )
            with np.errstate(invalid="ignore", divide="ignore"):  # a replicate of no prompt
                regret[g, p] = (regret_weights @ proxy_gain[0]) / (regret_weights @ gold_gain[0])
            proxy = metric_pools[label]
            for metric in metrics:
                with np.errstate(invalid="ignore", divide="ignore"):
                    if metric == "ece":
                        stats = _ece_bin_stats(gold, proxy, n_bins)  # (Q, 3, bins)
                        count, conf, credit = np.einsum("rq,qkb->krb", metric_weights, stats)
                        error[metric][g, p] = np.abs(conf - credit).sum(axis=-1) / count.sum(
                            axis=-1
                        )
                    else:
                        error[metric][g, p] = (
                            metric_weights
                            @ per_prompt[metric](gold, proxy)
                            / metric_weights.sum(axis=1)
                        )
    return error, regret


def correlation_rows(
    error: dict[str, np.ndarray], regret: np.ndarray, rms: Sequence[str], gold_labels: Sequence[str]
) -> dict[tuple[str, str], np.ndarray]:
    """Each (statistic, metric) cell's correlation across proxies: (rows × golds) arrays from
    :func:`pair_values`' (golds × RMs × rows) arrays."""
    others = ~np.eye(len(rms), dtype=bool)[[list(rms).index(g) for g in gold_labels]]
    regret_by_gold = np.stack([regret[g][others[g]] for g in range(len(gold_labels))])
    cells = {}
    for metric, values in error.items():
        sign = -1.0 if metric in LOWER_IS_BETTER else 1.0
        by_gold = np.stack([sign * values[g][others[g]] for g in range(len(gold_labels))])
        # (golds × proxies × rows) → correlate along proxies, rows first
        stats = _correlations(np.moveaxis(by_gold, -1, 0), np.moveaxis(regret_by_gold, -1, 0))
        cells.update({(statistic, metric): rows for statistic, rows in stats.items()})
    return cells


def _per_prompt_metrics(seed: int) -> dict:
    """Per-prompt implementations of the error metrics (the ECE is pooled: handled apart)."""
    return {
        "accuracy": lambda g, p: pairwise_accuracy(g, p, bootstrap=1).per_prompt,
        "pearson": lambda g, p: _by_size(g, p, _pearson_rows),
        "spearman": lambda g, p: _by_size(g, p, _spearman_rows),
        "kendall": lambda g, p: _by_size(g, p, _kendall_rows),
        "xi": lambda g, p: _by_size(g, p, _xi_rows),
        "mrr": lambda g, p: _by_size(g, p, _mrr_rows),
        "ndcg": lambda g, p: _by_size(g, p, _ndcg_rows),
        "bo5": lambda g, p: _by_size(g, p, _bo5_rows),
        "accuracy_pair": lambda g, p: _by_size(g, p, _accuracy_pair_rows(seed)),
    }
