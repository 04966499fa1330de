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
    oracle, scores, predictions = benchmark(40, 48, np.random.default_rng(1))
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
    its full-label value — exactly under ``uniform`` (the slopes are fitted without prompt 0,
    the intercept's covariance is cancelled); under ``rm-guided``, whose intercept is a ratio
    (unbiased to first order), within a quarter of the estimate's own standard deviation at
    this smallest of sizes (3 labels expected of 7; up to 0.23 over seeds)."""
    n, k = 7, 40
    oracle, scores, predictions = benchmark(k, n, np.random.default_rng(5))
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
    moments = np.zeros((2, 3))  # (best-of-n, RETA) × (Σp, Σp·x, Σp·x²)
    for mask, probability in enumerate_designs(design, pis[0]):
        labelled = [np.where(mask, oracle[0], np.nan), *fixed[1:]]
        bon = budget_best_of_n(labelled, scores, pis, 3, **options).per_prompt[0]
        top = budget_reta(labelled, scores, pis, 0.5, n=4, normalize=False, **options)
        for row, value in enumerate((bon, top.per_prompt[0])):
            moments[row] += probability * np.array([1.0, value, value**2])
    assert moments[:, 0] == pytest.approx(1.0)
    expected = (
        best_of_n([oracle[0]], [scores[0]], 3).value,
        reta([oracle[0]], [scores[0]], 0.5, n=4, normalize=False).value,
    )
    for (_, mean, square), truth in zip(moments, expected, strict=True):
        spread = np.sqrt(square - mean**2)
        assert abs(mean - truth) < (1e-10 if design == "uniform" else 0.25 * spread)


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
    """Two labels per prompt, best-of-1 (the mean label: every RM score tied), predictions on
    every response and no prompt effect, so the labelled responses are i.i.d.: the PPI++ mean
    of Angelopoulos et al. (arXiv 2311.01453), which ppi-python computes with its own
    power-tuned λ.  Our slope is fitted on the other fold of prompts, so the estimates differ
    by the slopes' small-sample noise only, well inside 5% of a standard error; the standard
    errors agree within 3%."""
    rng = np.random.default_rng(0)
    k, n = 3000, 40
    quality = rng.normal(5, 1, (k, n))
    labels = quality + rng.normal(0, 0.5, (k, n))
    predictions = quality + rng.normal(0, 0.8, (k, n))
    chosen = np.argsort(rng.uniform(size=(k, n)), axis=1)[:, :2]
    mask = np.zeros((k, n), bool)
    np.put_along_axis(mask, chosen, True, axis=1)
    oracle = list(np.where(mask, labels, np.nan))
    ours = budget_best_of_n(
        oracle,
        [np.zeros(n)] * k,
        [np.full(n, 2 / n)] * k,
        1,
        design="uniform",
        predictions=list(predictions),
    )
    low, high = ppi_mean_ci(labels[mask], predictions[mask], predictions.ravel(), alpha=0.05)
    centre, half = float((low + high)[0] / 2), float((high - low)[0] / 2)
    assert abs(ours.value - centre) < 0.05 * ours.stderr
    assert 1.96 * ours.stderr == pytest.approx(half, rel=0.03)
    labels_only = budget_best_of_n(
        oracle, [np.zeros(n)] * k, [np.full(n, 2 / n)] * k, 1, design="uniform"
    )
    assert ours.stderr < labels_only.stderr  # the cheap judge narrows the interval


def test_the_share_of_top_picks_labelled():
    oracle = [np.array([np.nan, 1.0, np.nan, 2.0])]
    assert labelled_weight_share(oracle, [np.array([0.0, 1.0, 2.0, 3.0])], n=4) == 1.0
    assert labelled_weight_share(oracle, [np.array([3.0, 1.0, 2.0, 0.0])], n=4) == 0.0


@pytest.mark.parametrize("seed", range(3))
def test_the_ratio_correction_reduces_retas_exact_bias(seed, monkeypatch):
    """Skewed labels, 6 of 12 labelled uniformly: RETA's exact expectation over every labelled
    subset is closer to the full-label value with the second-order correction than without."""
    import rmaudit.metrics.budget.estimators as estimators

    rng = np.random.default_rng(seed)
    oracle = [rng.gamma(3.0, 1.0, 12) + 0.1]
    scores = [oracle[0] + rng.normal(0, 0.5, 12)]
    pi = np.full(12, 0.5)
    truth = reta(oracle, scores, 0.25).value

    def bias() -> float:
        mean = 0.0
        for mask, probability in enumerate_designs("uniform", pi):
            labelled = [np.where(mask, oracle[0], np.nan)]
            found = budget_reta(labelled, scores, [pi], 0.25, design="uniform", bootstrap=1)
            mean += probability * found.value
        return mean - truth

    corrected = bias()
    monkeypatch.setattr(estimators, "_ratio_bias", lambda ratio, *args: np.zeros_like(ratio))
    assert abs(corrected) < 0.8 * abs(bias())


@pytest.mark.parametrize("design", ["uniform", "rm-guided"])
def test_a_perfect_cheap_judge_recovers_full_labelling(design):
    """Predictions equal to the labels leave the working model no residual: a quarter of the
    labels then give the full-label RETA and best-of-n and their width, where the labels alone
    are wider."""
    oracle, scores, _ = benchmark(120, 64, np.random.default_rng(3))
    rng = np.random.default_rng(4)
    if design == "uniform":
        pis = [np.full(64, 0.25)] * 120
        labelled = [np.where(np.argsort(rng.uniform(size=64)) < 16, j, np.nan) for j in oracle]
    else:
        pis = [rm_guided_inclusion(guide_importance(s[None]), 16.0) for s in scores]
        drawn = [rng.uniform(size=64) < p for p in pis]
        labelled = [np.where(d, j, np.nan) for d, j in zip(drawn, oracle, strict=True)]
    options = {"design": design, "bootstrap": 1}
    for metric, full in (
        (lambda **o: budget_reta(labelled, scores, pis, 0.25, **o), reta(oracle, scores, 0.25)),
        (lambda **o: budget_best_of_n(labelled, scores, pis, 8, **o), best_of_n(oracle, scores, 8)),
    ):
        perfect = metric(predictions=oracle, **options)
        alone = metric(**options)
        assert perfect.value == pytest.approx(full.value, abs=1e-9)
        assert perfect.stderr == pytest.approx(full.stderr, rel=1e-9)
        print(
            design,
            alone.stderr / perfect.stderr,
            perfect.value - full.value,
            full.stderr,
            perfect.stderr / full.stderr,
        )
