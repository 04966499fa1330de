"""The prompt-clustered bootstrap (rmaudit.metrics.cluster_bootstrap) and the ± it gives ECE,
BT-ECE, AUROC and FPR@95, against independent computations."""

from __future__ import annotations

import numpy as np
import pytest

from rmaudit.components import PairInputs
from rmaudit.default_plugins.pair_metrics import BTECE, Calibration
from rmaudit.default_plugins.shift_metrics import OODDetection, detector_scores
from rmaudit.errors import MetricInputError
from rmaudit.metrics import auroc, ece
from rmaudit.metrics.cluster_bootstrap import cluster_bootstrap


def test_the_bootstrap_standard_error_of_a_mean_is_the_analytic_one():
    values = np.random.default_rng(2).normal(size=400)
    result = cluster_bootstrap(lambda i: float(values[i].mean()), 400, draws=4000)
    analytic = values.std(ddof=0) / np.sqrt(400)  # the bootstrap's plug-in variance
    assert result.stderr == pytest.approx(analytic, rel=0.05)
    assert result.ci_low < values.mean() < result.ci_high


def test_resampling_clusters_keeps_their_items_together():
    # two prompts, each all ones or all zeros: every resample mean is 0, ½ or 1
    values = np.array([1.0] * 5 + [0.0] * 5)
    clusters = ["a"] * 5 + ["b"] * 5
    seen = set()
    cluster_bootstrap(lambda i: seen.add(float(values[i].mean())) or 0.0, 10, clusters, draws=50)
    assert seen <= {0.0, 0.5, 1.0}
    with pytest.raises(MetricInputError, match="one cluster per item"):
        cluster_bootstrap(lambda i: 0.0, 3, ["a"])


def pairs(n: int = 120) -> PairInputs:
    rng = np.random.default_rng(7)
    chosen, rejected = rng.normal(0.5, 1.0, n), rng.normal(0.0, 1.0, n)
    shifted = {"response": {0.25: (0.5 * chosen, 0.5 * rejected + rng.normal(0, 0.3, n))}}
    ids = tuple(f"p{i}" for i in range(n))
    return PairInputs(ids, chosen, rejected, (None,) * n, ({},) * n, shifted, ids)


def test_ece_bt_ece_auroc_and_fpr_carry_a_bootstrap_interval_and_say_when_it_is_approximate():
    inputs = pairs()
    (ece_value,) = Calibration(Calibration.Options()).compute(inputs).values
    assert ece_value.value == pytest.approx(ece(inputs.chosen, inputs.rejected).value)
    direct = cluster_bootstrap(
        lambda i: ece(inputs.chosen[i], inputs.rejected[i]).value, inputs.chosen.size
    )
    assert (ece_value.stderr, ece_value.ci_low, ece_value.ci_high) == (
        direct.stderr,
        direct.ci_low,
        direct.ci_high,
    )
    assert "0.80" in ece_value.params["approximate"]
    (bt,) = BTECE(BTECE.Options()).compute(inputs).values
    assert bt.stderr > 0 and "0.22" in bt.params["approximate"]
    options = OODDetection.Options(target="response", level=0.25)
    area, fpr = OODDetection(options).compute(inputs).values
    in_dist = detector_scores("energy", inputs.chosen, inputs.rejected)
    shifted = detector_scores("energy", *inputs.shifted["response"][0.25])
    assert area.value == pytest.approx(auroc(in_dist, shifted))
    assert area.ci_low <= area.value <= area.ci_high and "approximate" not in area.params
    assert "0.986" in fpr.params["approximate"]
