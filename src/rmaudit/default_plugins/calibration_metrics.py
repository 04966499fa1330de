"""Built-in calibration metrics of preference pairs (``scope = "pairs"``): the ECE with its
reliability diagram and the Bradley-Terry ECE, thin wrappers over :mod:`rmaudit.metrics`
with the prompt bootstrap's ± (:mod:`.pair_bootstrap`)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.components import ComponentOptions, CurveValue, MetricOutput, PairInputs
from rmaudit.components.kinds import OptionsT
from rmaudit.components.vocabulary import RELIABILITY_DIAGRAM
from rmaudit.metrics import CalibrationResult, bt_ece, ece
from rmaudit.metrics.cluster_bootstrap import BootstrapInterval
from rmaudit.metrics.preference.resampled import resampled_ece

from .pair_bootstrap import (
    CONSERVATIVE_ECE,
    bootstrapped,
    pair_interval,
    pair_resamples,
    statistic_interval,
)
from .pair_metrics import TIES_FIELD, PairMetric, Ties, clustering


class _ECE(PairMetric[OptionsT]):
    """An ECE of the pairs (lower is better, in [0, 1]), stored with the prompt bootstrap's ±
    and interval, marked ≈ (:data:`CONSERVATIVE_ECE`): a subclass says how it is computed
    (``calibration``), how its bootstrap is drawn (``interval``) and what it stores with it."""

    higher_is_better = False
    bounds = (0.0, 1.0)
    #: the stored value's key and label
    ece_key: ClassVar[str]
    ece_label: ClassVar[str]

    def compute(self, inputs: PairInputs) -> MetricOutput:
        result = self.calibration(inputs)
        interval = self.interval(inputs, result)
        value = bootstrapped(
            self.ece_key, self.ece_label, result.value, interval, self.params(), CONSERVATIVE_ECE
        )
        return MetricOutput(values=[value], curves=self.curves(inputs, result))

    def calibration(self, inputs: PairInputs) -> CalibrationResult:
        raise NotImplementedError

    def interval(self, inputs: PairInputs, result: CalibrationResult) -> BootstrapInterval:
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        raise NotImplementedError

    def curves(self, inputs: PairInputs, result: CalibrationResult) -> list[CurveValue]:
        return []


class CalibrationOptions(ComponentOptions):
    n_bins: int = Field(
        10, ge=1, description="equal-width confidence bins M (RMs Under Distribution Shift uses 10)"
    )
    ties: Ties = TIES_FIELD


class Calibration(_ECE[CalibrationOptions]):
    """ECE with M equal-width confidence bins and the reliability diagram (RMs Under Distribution
    Shift, Sec. 3.1)."""

    name = "calibration"
    Options = CalibrationOptions
    ece_key, ece_label = "ece", "ECE"

    def calibration(self, inputs: PairInputs) -> CalibrationResult:
        return ece(
            inputs.chosen,
            inputs.rejected,
            n_bins=self.options.n_bins,
            ties=self.options.ties,
            clusters=inputs.clusters,
        )

    def interval(self, inputs: PairInputs, result: CalibrationResult) -> BootstrapInterval:
        o = self.options
        resampled = resampled_ece(
            inputs.chosen, inputs.rejected, pair_resamples(inputs), n_bins=o.n_bins, ties=o.ties
        )
        return pair_interval(result.value, resampled)

    def params(self) -> dict[str, Any]:
        return {"n_bins": self.options.n_bins}

    def curves(self, inputs: PairInputs, result: CalibrationResult) -> list[CurveValue]:
        filled = result.count > 0
        acc, count = result.accuracy[filled], result.count[filled]
        effective = count if result.effective_count is None else result.effective_count[filled]
        stderr = np.sqrt(acc * (1 - acc) / effective)  # binomial within each bin, or clustered
        low, high = (bound[filled] for bound in result.accuracy_interval())
        diagram = CurveValue(
            RELIABILITY_DIAGRAM,
            "reliability diagram",
            "confidence",
            result.mean_confidence[filled],
            acc,
            stderr,
            low,
            high,
            params={"pairs": count.tolist(), "interval": "Wilson", **clustering(inputs)},
        )
        return [diagram]


class BTECEOptions(ComponentOptions):
    n_bins: int = Field(10, ge=1, description="reward-margin bins")
    binning: Literal["quantile", "uniform"] = "quantile"
    ties: Ties = TIES_FIELD


class BTECE(_ECE[BTECEOptions]):
    """Bradley-Terry ECE: accuracy against σ(margin) in reward-margin bins (Rethinking RM
    Evaluation, App. 8.3)."""

    name = "bt-ece"
    Options = BTECEOptions
    ece_key, ece_label = "bt_ece", "BT-ECE"

    def calibration(self, inputs: PairInputs, index: Any = slice(None)) -> CalibrationResult:
        """BT-ECE of the pairs at ``index`` (all of them by default)."""
        o = self.options
        return bt_ece(
            inputs.chosen[index],
            inputs.rejected[index],
            n_bins=o.n_bins,
            binning=o.binning,
            ties=o.ties,
        )

    def interval(self, inputs: PairInputs, result: CalibrationResult) -> BootstrapInterval:
        return statistic_interval(lambda i: self.calibration(inputs, i).value, inputs)

    def params(self) -> dict[str, Any]:
        return {"n_bins": self.options.n_bins, "binning": self.options.binning}


@hookimpl
def register_metrics(register: Any) -> None:
    for cls in (Calibration, BTECE):
        register(cls)
