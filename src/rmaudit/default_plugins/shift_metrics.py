"""Built-in metrics of a shift sweep (``needs = ("pairs", "shift")``): out-of-distribution
detection of the shifted pairs and every quantity's curve against the shift level p (RMs Under
Distribution Shift, arXiv 2311.14743).  Their inputs are :class:`~rmaudit.components.PairInputs`
with ``shifted`` filled; the TUI panel of the curves is in ``default_plugins.panels``.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.components import (
    ComponentOptions,
    CurveValue,
    MetricOutput,
    PairInputs,
)
from rmaudit.components.vocabulary import SHIFT_QUANTITIES, ShiftTarget, shift_curve_key
from rmaudit.errors import BadInput, MetricInputError
from rmaudit.metrics import (
    accuracy,
    auroc,
    clustered_stderr,
    confidence,
    ece,
    energy_score,
    fpr_at_95_tpr,
)

from .pair_bootstrap import bootstrapped
from .pair_metrics import TIES_FIELD, PairMetric, Ties


def detector_scores(detector: str, chosen: np.ndarray, rejected: np.ndarray) -> np.ndarray:
    """OOD detector scores, higher meaning more in-distribution: −energy (RMs Under Distribution
    Shift, arXiv 2311.14743, Sec. 5.1) or MSP."""
    if detector == "energy":
        return -energy_score(chosen, rejected)
    return confidence(chosen, rejected)


class OODOptions(ComponentOptions):
    detector: Literal["energy", "msp"] = Field(
        "energy", description="energy score (RMs Under Distribution Shift) or max softmax"
    )
    target: ShiftTarget = Field("response", description="which shift is the OOD set")
    level: float = Field(
        0.25, gt=0, le=1, description="shift level p of the OOD set (a level of the sweep)"
    )


class OODDetection(PairMetric[OODOptions]):
    """AUROC and FPR@95 of an OOD detector between the unshifted pairs and one shifted set (RMs
    Under Distribution Shift, Sec. 5)."""

    name = "ood-detection"
    Options = OODOptions
    needs = ("pairs", "shift")
    bounds = (0.0, 1.0)

    def check_shift_levels(self, levels: tuple[float, ...]) -> None:
        if not np.isclose(levels, self.options.level).any():
            raise BadInput(
                f"not a level of the shift sweep ({', '.join(f'{p:g}' for p in levels)})",
                field="level",
                value=self.options.level,
            )

    def compute(self, inputs: PairInputs) -> MetricOutput:
        o = self.options
        if o.target not in inputs.shifted:
            raise MetricInputError(
                f"the shift sweep has no {o.target!r} target", field="target", value=o.target
            )
        levels = inputs.shifted[o.target]
        level = next(p for p in levels if np.isclose(p, o.level))
        in_dist = detector_scores(o.detector, inputs.chosen, inputs.rejected)
        shifted = detector_scores(o.detector, *levels[level])
        where = f"{o.detector}, {o.target} p={level:g}"
        params = {"detector": o.detector, "target": o.target, "level": level}
        # a pair's shifted copy is at its position: resampling a prompt takes both
        return MetricOutput(
            values=[
                bootstrapped(
                    "ood_auroc",
                    f"AUROC ({where})",
                    auroc(in_dist, shifted),
                    lambda i: auroc(in_dist[i], shifted[i]),
                    inputs,
                    params,
                ),
                bootstrapped(
                    "ood_fpr95",
                    f"FPR@95 ({where})",
                    fpr_at_95_tpr(in_dist, shifted),
                    lambda i: fpr_at_95_tpr(in_dist[i], shifted[i]),
                    inputs,
                    params,
                    higher_is_better=False,
                ),
            ]
        )


class ShiftCurvesOptions(ComponentOptions):
    detector: Literal["energy", "msp"] = Field(
        "energy", description="OOD detector for AUROC and FPR@95"
    )
    n_bins: int = Field(10, ge=1, description="confidence bins of the ECE")
    ties: Ties = TIES_FIELD


class ShiftCurves(PairMetric[ShiftCurvesOptions]):
    """Accuracy, mean confidence, ECE, AUROC and FPR@95 against shift level p, per target (RMs Under
    Distribution Shift, Fig. 1-2)."""

    name = "shift-curves"
    Options = ShiftCurvesOptions
    needs = ("pairs", "shift")

    def compute(self, inputs: PairInputs) -> MetricOutput:
        o = self.options
        in_dist = detector_scores(o.detector, inputs.chosen, inputs.rejected)
        nan = float("nan")  # no standard error or interval for ECE, AUROC and FPR@95
        curves = []
        for target, levels in inputs.shifted.items():
            ps = np.array(sorted(levels))
            points: dict[str, list[tuple[float, float, float, float]]] = {
                quantity: [] for quantity in SHIFT_QUANTITIES
            }  # (value, stderr, low, high)
            for p in ps:
                chosen, rejected = levels[p]
                acc = accuracy(chosen, rejected, ties=o.ties, clusters=inputs.clusters)
                conf = confidence(chosen, rejected)
                conf_se = clustered_stderr(conf, inputs.clusters)
                shifted = detector_scores(o.detector, chosen, rejected)
                points["accuracy"].append((acc.value, acc.stderr, acc.ci_low, acc.ci_high))
                points["confidence"].append((conf.mean(), conf_se, nan, nan))
                points["ece"].append(
                    (ece(chosen, rejected, n_bins=o.n_bins, ties=o.ties).value, nan, nan, nan)
                )
                points["auroc"].append((auroc(in_dist, shifted), nan, nan, nan))
                points["fpr95"].append((fpr_at_95_tpr(in_dist, shifted), nan, nan, nan))
            for quantity, rows in points.items():
                value, stderr, low, high = np.array(rows, dtype=float).T
                label = f"{SHIFT_QUANTITIES[quantity][0]} under {target} shift"
                curves.append(
                    CurveValue(
                        shift_curve_key(quantity, target),
                        label,
                        "p",
                        ps,
                        value,
                        stderr,
                        low,
                        high,
                        params={"target": target, "detector": o.detector},
                    )
                )
        return MetricOutput(curves=curves)


@hookimpl
def register_metrics(register: Any) -> None:
    for cls in (OODDetection, ShiftCurves):
        register(cls)
