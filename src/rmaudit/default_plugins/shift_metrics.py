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
from rmaudit.metrics.preference.resampled import (
    resampled_auroc,
    resampled_ece,
    resampled_fpr95,
)

from .pair_bootstrap import (
    CONSERVATIVE_ECE,
    PROMPT_BOOTSTRAP,
    bootstrapped,
    pair_interval,
    pair_resamples,
)
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
        resamples = pair_resamples(inputs)
        area, fpr = auroc(in_dist, shifted), fpr_at_95_tpr(in_dist, shifted)
        return MetricOutput(
            values=[
                bootstrapped(
                    "ood_auroc",
                    f"AUROC ({where})",
                    area,
                    pair_interval(area, resampled_auroc(in_dist, shifted, resamples)),
                    params,
                ),
                bootstrapped(
                    "ood_fpr95",
                    f"FPR@95 ({where})",
                    fpr,
                    pair_interval(fpr, resampled_fpr95(in_dist, shifted, resamples)),
                    params,
                    higher_is_better=False,
                ),
            ]
        )


#: a shift curve point: (value, stderr, interval low, interval high)
Point = tuple[float, float, float, float]
NAN = float("nan")
#: the quantities whose ± has a closed form (the others': a prompt bootstrap)
CLOSED_FORM = ("accuracy", "confidence")


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
        curves = []
        resamples = pair_resamples(inputs)
        for target, levels in inputs.shifted.items():
            ps = np.array(sorted(levels))
            points: dict[str, list[Point]] = {quantity: [] for quantity in SHIFT_QUANTITIES}
            for p in ps:
                for quantity, point in self._points(inputs, resamples, *levels[p]).items():
                    points[quantity].append(point)
            for quantity, rows in points.items():
                value, stderr, low, high = np.array(rows, dtype=float).T
                interval = {} if quantity in CLOSED_FORM else {"interval": PROMPT_BOOTSTRAP}
                if quantity == "ece":
                    interval["approximate"] = CONSERVATIVE_ECE
                curves.append(
                    CurveValue(
                        shift_curve_key(quantity, target),
                        f"{SHIFT_QUANTITIES[quantity][0]} under {target} shift",
                        "p",
                        ps,
                        value,
                        stderr,
                        low,
                        high,
                        params={"target": target, "detector": o.detector, **interval},
                    )
                )
        return MetricOutput(curves=curves)

    def _points(
        self, inputs: PairInputs, resamples: np.ndarray, chosen: np.ndarray, rejected: np.ndarray
    ) -> dict[str, Point]:
        """Each quantity's (value, stderr, low, high) on one shift level's pairs: accuracy's
        and confidence's clustered ± (accuracy's Wilson interval), and a prompt bootstrap on
        ``resamples`` for ECE, AUROC and FPR@95, which have no closed form."""
        o = self.options
        acc = accuracy(chosen, rejected, ties=o.ties, clusters=inputs.clusters)
        conf = confidence(chosen, rejected)
        in_dist = detector_scores(o.detector, inputs.chosen, inputs.rejected)
        shifted = detector_scores(o.detector, chosen, rejected)
        bootstrapped_points = {
            "ece": (
                ece(chosen, rejected, n_bins=o.n_bins, ties=o.ties).value,
                resampled_ece(chosen, rejected, resamples, n_bins=o.n_bins, ties=o.ties),
            ),
            "auroc": (auroc(in_dist, shifted), resampled_auroc(in_dist, shifted, resamples)),
            "fpr95": (
                fpr_at_95_tpr(in_dist, shifted),
                resampled_fpr95(in_dist, shifted, resamples),
            ),
        }
        points = {
            "accuracy": (acc.value, acc.stderr, acc.ci_low, acc.ci_high),
            "confidence": (conf.mean(), clustered_stderr(conf, inputs.clusters), NAN, NAN),
        }
        for quantity, (value, resampled) in bootstrapped_points.items():
            interval = pair_interval(value, resampled)
            points[quantity] = (value, interval.stderr, interval.ci_low, interval.ci_high)
        return points


@hookimpl
def register_metrics(register: Any) -> None:
    for cls in (OODDetection, ShiftCurves):
        register(cls)
