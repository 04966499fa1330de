"""The prompt-clustered bootstrap (rmaudit.metrics.cluster_bootstrap) and the ± it gives ECE,
BT-ECE, AUROC, FPR@95 and the shift curves' points, against independent computations."""

from __future__ import annotations

import numpy as np
import pytest

from rmaudit.components import PairInputs
from rmaudit.default_plugins.calibration_metrics import BTECE, Calibration
from rmaudit.default_plugins.shift_metrics import OODDetection, ShiftCurves, detector_scores
from rmaudit.errors import MetricInputError
from rmaudit.metrics import auroc, ece, fpr_at_95_tpr
from rmaudit.metrics.cluster_bootstrap import cluster_bootstrap, resample_counts
from rmaudit.metrics.preference import resampled
from rmaudit.metrics.preference.resampled import (
    resampled_auroc,
    resampled_ece,
    resampled_fpr95,
)


def test_the_bootstrap_standard_error_of_a_mean_is_the_analytic_one():
    values = np.random.default_rng(2).normal(size=400)
    result = cluster_bootstrap(lambda i: float(values[i].mean()), 400, draws=4000)
    analytic = values.std(ddof=0) / np.sqrt(400)  # the bootstrap's plug-in variance
    assert result.stderr == pytest.approx(analytic, rel=0.05)
    assert result.ci_low < values.mean() < result.ci_high


def test_the_interval_is_the_percentile_interval_moved_by_the_bootstrap_bias():
    # recomputed by hand: the same seeded resamples of 60 single-item clusters, a statistic
    # biased upward (the squared mean: E = μ² + σ²/n), clipped at 0
    values = np.random.default_rng(3).normal(0.1, 1.0, 60)
    result = cluster_bootstrap(
        lambda i: float(values[i].mean() ** 2), 60, draws=300, seed=5, bounds=(0.0, np.inf)
    )
    rng = np.random.default_rng(5)
    resampled = np.array([values[rng.integers(0, 60, 60)].mean() ** 2 for _ in range(300)])
    bias = resampled.mean() - values.mean() ** 2
    low, high = np.percentile(resampled, [2.5, 97.5]) - bias
    assert result.stderr == pytest.approx(resampled.std(ddof=1))
    assert (result.ci_low, result.ci_high) == pytest.approx((max(low, 0.0), high))
    assert bias > 0  # the plain percentile interval would sit above the estimate by as much


def test_resampling_clusters_keeps_their_items_together():
    # two prompts, each all ones or all zeros: every resample mean is 0, ½ or 1
    values = np.array([1.0] * 5 + [0.0] * 5)
    clusters = ["a"] * 5 + ["b"] * 5
    seen = set()
    cluster_bootstrap(lambda i: seen.add(float(values[i].mean())) or 0.0, 10, clusters, draws=50)
    assert seen <= {0.0, 0.5, 1.0}
    with pytest.raises(MetricInputError, match="one cluster per item"):
        cluster_bootstrap(lambda i: 0.0, 3, ["a"])


def test_a_large_file_is_resampled_in_blocks_that_are_each_a_full_resample():
    # 12,000 clusters of two: 166 rows a block, so 500 resamples take four blocks
    counts = resample_counts(24_000, [i // 2 for i in range(24_000)], draws=500, seed=5)
    assert counts.dtype == np.int32 and counts.shape == (500, 24_000)
    assert (counts.sum(axis=1) == 24_000).all() and (counts[:, 0::2] == counts[:, 1::2]).all()
    drawn = counts[:, 0::2]  # a cluster's draws: binomial(12,000, 1/12,000), variance ≈ 1
    assert abs(drawn.var() - 1.0) < 0.01 and len({r.tobytes() for r in drawn}) == 500


@pytest.mark.parametrize("chunk_cells", [137, 1000, 10**9])  # one row, several, all at once
def test_resampled_ece_auroc_and_fpr_equal_the_metrics_on_each_resamples_pairs(
    chunk_cells, monkeypatch
):
    monkeypatch.setattr(resampled, "CHUNK_CELLS", chunk_cells)
    # rounded scores: ties within and between the ID and OOD sets; three pairs a prompt
    rng = np.random.default_rng(1)
    chosen, rejected, ind, ood = np.round(rng.normal(0.0, 1.0, (4, 137)), 1)
    chosen += 0.5
    counts = resample_counts(137, [f"q{i // 3}" for i in range(137)], draws=60, seed=3)
    assert (counts.sum(axis=1) != 137).any()  # clusters of 3 and one of 2: sizes vary
    resamples = [np.repeat(np.arange(137), row) for row in counts]
    assert resampled_ece(chosen, rejected, counts, n_bins=7, ties="half") == pytest.approx(
        [ece(chosen[i], rejected[i], n_bins=7, ties="half").value for i in resamples], abs=1e-12
    )
    assert resampled_auroc(ind, ood, counts) == pytest.approx(
        [auroc(ind[i], ood[i]) for i in resamples], abs=1e-12
    )
    assert resampled_fpr95(ind, ood, counts).tolist() == [
        fpr_at_95_tpr(ind[i], ood[i]) for i in resamples
    ]
    with pytest.raises(MetricInputError, match="as many ID and OOD scores"):
        resampled_auroc(ind[:10], ood[:10], counts)


def pairs(n: int = 120) -> PairInputs:
    rng = np.random.default_rng(7)
    chosen, rejected = rng.normal(0.5, 1.0, n), rng.normal(0.0, 1.0, n)
    shifted = {"response": {0.25: (0.5 * chosen, 0.5 * rejected + rng.normal(0, 0.3, n))}}
    ids = tuple(f"p{i}" for i in range(n))
    return PairInputs(ids, chosen, rejected, (None,) * n, ({},) * n, shifted, ids)


def test_ece_bt_ece_auroc_and_fpr_carry_the_centred_bootstrap_interval():
    inputs = pairs()
    (ece_value,) = Calibration(Calibration.Options()).compute(inputs).values
    assert ece_value.value == pytest.approx(ece(inputs.chosen, inputs.rejected).value)
    direct = cluster_bootstrap(
        lambda i: ece(inputs.chosen[i], inputs.rejected[i]).value,
        inputs.chosen.size,
        bounds=(0.0, 1.0),
    )
    assert (ece_value.stderr, ece_value.ci_low, ece_value.ci_high) == pytest.approx(
        (direct.stderr, direct.ci_low, direct.ci_high), rel=1e-12
    )
    (bt,) = BTECE(BTECE.Options()).compute(inputs).values
    options = OODDetection.Options(target="response", level=0.25)
    area, fpr = OODDetection(options).compute(inputs).values
    in_dist = detector_scores("energy", inputs.chosen, inputs.rejected)
    shifted = detector_scores("energy", *inputs.shifted["response"][0.25])
    assert area.value == pytest.approx(auroc(in_dist, shifted))
    for value in (ece_value, bt, area, fpr):
        assert value.stderr > 0 and value.ci_low <= value.value <= value.ci_high
        assert value.params["interval"] == "prompt bootstrap"
    # a binned ECE's interval over-covers for a nearly calibrated RM (measured): marked ≈
    assert "0.98-0.99" in ece_value.params["approximate"] == bt.params["approximate"]
    assert "approximate" not in area.params and "approximate" not in fpr.params


def test_shift_curve_points_of_ece_auroc_and_fpr_carry_the_bootstrap_interval():
    inputs = pairs()
    curves = {c.key: c for c in ShiftCurves(ShiftCurves.Options()).compute(inputs).curves}
    chosen, rejected = inputs.shifted["response"][0.25]
    in_dist = detector_scores("energy", inputs.chosen, inputs.rejected)
    shifted = detector_scores("energy", chosen, rejected)
    statistics = {
        "shift_ece_response": lambda i: ece(chosen[i], rejected[i]).value,
        "shift_auroc_response": lambda i: auroc(in_dist[i], shifted[i]),
        "shift_fpr95_response": lambda i: fpr_at_95_tpr(in_dist[i], shifted[i]),
    }
    for key, statistic in statistics.items():
        direct = cluster_bootstrap(statistic, chosen.size, inputs.clusters, bounds=(0.0, 1.0))
        curve = curves[key]
        assert curve.value[0] == pytest.approx(statistic(np.arange(chosen.size)))
        assert (curve.stderr[0], curve.ci_low[0], curve.ci_high[0]) == pytest.approx(
            (direct.stderr, direct.ci_low, direct.ci_high), rel=1e-12
        )
        assert curve.params["interval"] == "prompt bootstrap"
    assert "interval" not in curves["shift_accuracy_response"].params
    assert "0.98-0.99" in curves["shift_ece_response"].params["approximate"]
    assert "approximate" not in curves["shift_auroc_response"].params
