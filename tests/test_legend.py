"""The legend under a summary says what each number is computed as."""

from __future__ import annotations

import numpy as np
import pytest

from rmaudit.metrics import ece
from rmaudit.results.legend import legend
from rmaudit.results.summary import Column, Curve, RunSummary
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


def _summary(columns: list[Column], curves: dict) -> RunSummary:
    return RunSummary(
        run=RunRow(
            "run", "t", None, None, {}, None, "b", "done", False, "", None, None, None, None
        ),
        benchmark=BenchmarkRow("b", "t", "", "", 10, "", False, "s", ""),
        reward_models=[],
        columns=columns,
        curves=curves,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("etas", "said"),
    [
        ((0.5, 0.25, 1 / 16), "The RETA curve runs from η = ½ to 1/16 (its sparkline"),
        ((0.1, 0.5, 0.9), "The RETA curve runs from η = 0.9 to 1/10 (its sparkline"),
        (None, None),
    ],
)
def test_the_reta_legend_says_where_the_stored_curve_runs_and_nothing_of_a_missing_one(etas, said):
    reta = Column("reta", "reta@0.25", "RETA(1/4)", True)
    curves = {}
    if etas is not None:
        x = np.array(etas)
        curves[("rm", "curve", "reta_curve")] = Curve("RETA curve", "eta", x, x + 1, x * 0)
    text = " ".join(legend(_summary([reta], curves), None))
    assert "RETA(1/4): its top quarter" in text
    if said is None:
        assert "RETA curve" not in text and "sparkline" not in text
    else:
        assert said in text
