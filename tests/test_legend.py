"""The legend under a summary says what each number is computed as."""

from __future__ import annotations

import numpy as np
import pytest

from rmaudit.metrics import ece
from rmaudit.results.legend import legend
from rmaudit.results.summary import Column, RunSummary
from rmaudit.store.records import BenchmarkRow, RunRow


def test_the_ece_legend_describes_the_number_computed():
    rng = np.random.default_rng(3)
    chosen, rejected = rng.normal(1.0, 2.0, 400), rng.normal(0.0, 2.0, 400)
    margin = chosen - rejected
    # what the legend says: the RM's confidence in its own pick, σ(|margin|) (the max softmax),
    # against whether that pick is the chosen response, in 10 equal-width bins
    confidence, right = 1.0 / (1.0 + np.exp(-np.abs(margin))), margin > 0
    bins = np.clip(np.ceil(confidence * 10) - 1, 0, 9)
    said = (
        sum(
            np.sum(bins == m) * abs(confidence[bins == m].mean() - right[bins == m].mean())
            for m in range(10)
            if np.any(bins == m)
        )
        / margin.size
    )
    assert ece(chosen, rejected).value == pytest.approx(said)
    summary = RunSummary(
        run=RunRow(
            "run",
            "pairs",
            None,
            None,
            {},
            None,
            "pairs",
            "done",
            False,
            "",
            None,
            None,
            None,
            None,
        ),
        benchmark=BenchmarkRow("pairs", "pairs", "", "", 2, "", False, "pairs", ""),
        reward_models=[],
        columns=[
            Column("calibration", "ece", "ECE", False),
            Column("bt-ece", "bt_ece", "BT-ECE", False),
        ],
    )
    text = " ".join(legend(summary, None))
    assert "max softmax of the two scores, σ(|score margin|)" in text
    assert "against whether its pick is the chosen response" in text
    assert "that the chosen response wins" not in text  # another number altogether
    # the ± of ECE and BT-ECE is a bootstrap's, its interval for the value at this many pairs
    assert "ECE, BT-ECE, AUROC and FPR@95 (also under shift): the bootstrap's" in text
    assert "expected on as many pairs" in text
