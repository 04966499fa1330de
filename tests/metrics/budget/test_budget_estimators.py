"""Estimators from labelled subsets (rmaudit.metrics.budget.estimators) against independent
computations: the full-label metrics when every response is labelled, brute-force enumeration
of every possible labelled subset (each with its exact probability) for design-unbiasedness,
and the ppi-python package for the prediction-powered special case."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest
from ppi_py import ppi_mean_ci

from rmaudit.metrics import best_of_n, pairwise_accuracy, reta, reta_curve
from rmaudit.metrics.budget import (
    budget_best_of_n,
    budget_pairwise_accuracy,
    budget_reta,
    budget_reta_curve,
    guide_importance,
    labelled_weight_share,
    rm_guided_inclusion,
)

RNG = np.random.default_rng(20261124)


def benchmark(k: int, n: int, rng=RNG):
    oracle = [np.round(rng.normal(5, 1, n), 1) for _ in range(k)]  # ties in labels
    scores = [np.round(j + rng.normal(0, 1, n)) for j in oracle]  # ties in scores
    predictions = [j + rng.normal(0, 0.8, n) for j in oracle]
    return oracle, scores, predictions


@pytest.mark.parametrize("design", ["uniform", "rm-guided"])
@pytest.mark.parametrize("cheap", [False, True])
def test_full_labelling_equals_the_full_label_metrics(design, cheap):
    oracle, scores, predictions = benchmark(40, 48)
    ones = [np.ones(48)] * 40
    options = {"design": design, "predictions": predictions if cheap else None}
    expected = reta_curve(oracle, scores, [0.5, 0.25, 1 / 16])
    found = budget_reta_curve(oracle, scores, ones, [0.5, 0.25, 1 / 16], **options)
    assert np.max(np.abs(found.per_prompt - expected.per_prompt)) < 1e-12
    for n, rank in ((4, 1), (16, 1), (8, 2)):
        assert budget_best_of_n(oracle, scores, ones, n, rank=rank, **options).value == (
            pytest.approx(best_of_n(oracle, scores, n, rank=rank).value, abs=1e-12)
        )
    assert budget_pairwise_accuracy(oracle, scores, ones, **options).value == pytest.approx(
        pairwise_accuracy(oracle, scores).value, abs=1e-12
    )


def enumerate_designs(design: str, pi: np.ndarray):
    """Every labelled subset of one prompt with its probability."""
    n = pi.size
    if design == "uniform":
        m = round(pi.sum())
        for subset in itertools.combinations(range(n), m):
            mask = np.zeros(n, bool)
            mask[list(subset)] = True
            yield mask, 1 / comb(n, m)
    else:
        for bits in itertools.product((False, True), repeat=n):
            mask = np.array(bits)
            yield mask, float(np.prod(np.where(mask, pi, 1 - pi)))


@pytest.mark.parametrize("design", ["uniform", "rm-guided"])
@pytest.mark.parametrize("cheap", [False, True])
def test_linear_estimates_are_design_unbiased_over_every_labelled_subset(design, cheap):
    """Prompt 0 (N = 7) takes every possible labelled subset while 39 other prompts keep one
    draw each: the expectation of prompt 0's best-of-n and unnormalised RETA estimates equals
    its full-label value exactly — the control variates' coefficients are fitted without it."""
    n, k = 7, 40
    oracle, scores, predictions = benchmark(k, n)
    pis = []
    for _q in range(k):
        pi = rm_guided_inclusion(np.linspace(1, 2, n) / np.linspace(1, 2, n).sum(), 3.0)
        pis.append(pi if design == "rm-guided" else np.full(n, 3 / n))
    rng = np.random.default_rng(5)
    fixed = [
        np.where(rng.uniform(size=n) < pis[q], oracle[q], np.nan)
        if design == "rm-guided"
        else np.where(np.isin(np.arange(n), rng.permutation(n)[:3]), oracle[q], np.nan)
        for q in range(k)
    ]
    options = {"design": design, "predictions": predictions if cheap else None, "bootstrap": 1}
    expectation_bon = expectation_reta = total = 0.0
    for mask, probability in enumerate_designs(design, pis[0]):
        labelled = [np.where(mask, oracle[0], np.nan), *fixed[1:]]
        bon = budget_best_of_n(labelled, scores, pis, 3, **options).per_prompt[0]
        top = budget_reta(labelled, scores, pis, 0.5, n=4, normalize=False, **options)
        expectation_bon += probability * bon
        expectation_reta += probability * top.per_prompt[0]
        total += probability
    assert total == pytest.approx(1.0)
    assert expectation_bon == pytest.approx(best_of_n([oracle[0]], [scores[0]], 3).value, abs=1e-10)
    unnormalised = reta([oracle[0]], [scores[0]], 0.5, n=4, normalize=False).value
    assert expectation_reta == pytest.approx(unnormalised, abs=1e-10)


@pytest.mark.parametrize("design", ["uniform", "rm-guided"])
def test_ratio_estimates_have_a_small_bias_that_vanishes_with_full_labels(design):
    """RETA and pairwise accuracy are ratios of unbiased sums: over every subset their bias is
    second order — small against the full-label value, and zero once everything is labelled."""
    n = 7
    oracle, scores, _ = benchmark(1, n, np.random.default_rng(9))
    for m in (4.0, 7.0):
        pi = np.full(n, m / n) if design == "uniform" else rm_guided_inclusion(np.full(n, 1 / n), m)
        mean_reta = mean_pair = 0.0
        for mask, probability in enumerate_designs(design, pi):
            if mask.sum() < 2 or np.all(oracle[0][mask] == oracle[0][mask][0]):
                mean_reta += probability * reta(oracle, scores, 0.5, n=4).value
                mean_pair += probability * pairwise_accuracy(oracle, scores).value
                continue
            labelled = [np.where(mask, oracle[0], np.nan)]
            mean_reta += (
                probability * budget_reta(labelled, scores, [pi], 0.5, n=4, design=design).value
            )
            mean_pair += (
                probability * budget_pairwise_accuracy(labelled, scores, [pi], design=design).value
            )
        tolerance = 1e-12 if m == n else 0.05
        assert mean_reta == pytest.approx(reta(oracle, scores, 0.5, n=4).value, abs=tolerance)
        assert mean_pair == pytest.approx(pairwise_accuracy(oracle, scores).value, abs=tolerance)


def test_prediction_powered_mean_agrees_with_ppi_python():
    """One label per prompt, best-of-1 (the mean label: every RM score tied), predictions on
    every response and no prompt effect: the PPI++ mean of Angelopoulos et al. (arXiv
    2311.01453), which ppi-python computes with its own power-tuned λ.  The estimates differ
    by λ's small-sample noise only (ours is fitted leaving each prompt out), well inside 5% of
    a standard error; the standard errors agree within 2%."""
    rng = np.random.default_rng(0)
    k, n = 3000, 40
    quality = rng.normal(5, 1, (k, n))
    labels = quality + rng.normal(0, 0.5, (k, n))
    predictions = quality + rng.normal(0, 0.8, (k, n))
    chosen = rng.uniform(size=(k, n)).argmin(axis=1)
    oracle = [np.where(np.arange(n) == chosen[q], labels[q], np.nan) for q in range(k)]
    ours = budget_best_of_n(
        oracle,
        [np.zeros(n)] * k,
        [np.full(n, 1 / n)] * k,
        1,
        design="uniform",
        predictions=list(predictions),
    )
    rows = np.arange(k)
    low, high = ppi_mean_ci(
        labels[rows, chosen], predictions[rows, chosen], predictions.ravel(), alpha=0.05
    )
    centre, half = float((low + high)[0] / 2), float((high - low)[0] / 2)
    assert abs(ours.value - centre) < 0.05 * ours.stderr
    assert 1.96 * ours.stderr == pytest.approx(half, rel=0.02)
    labels_only = budget_best_of_n(
        oracle, [np.zeros(n)] * k, [np.full(n, 1 / n)] * k, 1, design="uniform"
    )
    assert ours.stderr < labels_only.stderr  # the cheap judge narrows the interval


def test_the_share_of_top_picks_labelled():
    oracle = [np.array([np.nan, 1.0, np.nan, 2.0])]
    assert labelled_weight_share(oracle, [np.array([0.0, 1.0, 2.0, 3.0])], n=4) == 1.0
    assert labelled_weight_share(oracle, [np.array([3.0, 1.0, 2.0, 0.0])], n=4) == 0.0


@pytest.mark.parametrize("design", ["uniform", "rm-guided"])
@pytest.mark.parametrize("seed", range(4))
def test_the_ratio_correction_reduces_retas_exact_bias(design, seed, monkeypatch):
    """Skewed labels, 3 of 8 labelled: RETA's exact expectation over every labelled subset is
    closer to the full-label value with the second-order correction than without it."""
    import rmaudit.metrics.budget.estimators as estimators

    rng = np.random.default_rng(seed)
    oracle = [rng.gamma(1.0, 1.0, 8) + 0.1]
    scores = [oracle[0] + rng.normal(0, 0.5, 8)]
    if design == "uniform":
        pi = np.full(8, 3 / 8)
    else:
        pi = rm_guided_inclusion(guide_importance(scores[0][None]), 3.0)
    truth = reta(oracle, scores, 0.25).value

    def bias() -> float:
        mean = 0.0
        for mask, probability in enumerate_designs(design, pi):
            if mask.any():
                labelled = [np.where(mask, oracle[0], np.nan)]
                found = budget_reta(labelled, scores, [pi], 0.25, design=design, bootstrap=1)
                mean += probability * found.value
            else:  # no label: undefined, the prompt is skipped; count it as exact
                mean += probability * truth
        return mean - truth

    corrected = bias()
    monkeypatch.setattr(estimators, "_ratio_bias", lambda *args: 0.0)
    assert abs(corrected) < abs(bias())
