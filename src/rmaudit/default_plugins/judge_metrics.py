"""``judge-audit``: what a pairwise judge's verdicts in both orders say about it, per suite and
per subset (:mod:`rmaudit.metrics.judging`; docs/judges.md).  An RM that scores responses has
no verdicts: the metric reports nothing for it.  ``oracle-correlation``: how well a rating
judge's (or any RM's) scores predict the oracle's labels within prompts, what it is worth as a
label budget's cheap judge (:mod:`rmaudit.metrics.oracle_correlation`; docs/budget.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.components import (
    ComponentOptions,
    JudgedPairs,
    Metric,
    MetricInputs,
    MetricOutput,
    MetricValue,
    PairInputs,
    PerPair,
)
from rmaudit.components.vocabulary import CLUSTERED_PROMPTS, DETAIL, HEADLINE, SIGNED, ResultKey
from rmaudit.errors import MetricInputError
from rmaudit.metrics import ece, position_bias
from rmaudit.metrics.judging import (
    Estimate,
    judge_audit,
    pair_credits,
    random_order_accuracy,
    random_order_credits,
    seed_spread,
)
from rmaudit.metrics.oracle_correlation import within_prompt_correlation

#: the convention of a pairwise judge's headline accuracy, shown with it
JUDGE_CONVENTION = "judge accuracy: both orders, a tie ½"
#: the meaning of a position bias's sign, shown in place of an arrow
BIAS_SIGN = "+: prefers the answer shown first"

#: key → (label, higher is better, how it is shown) of each value, in the order shown
_VALUES: dict[str, tuple[str, bool | None, dict[str, Any]]] = {
    "judge_accuracy": ("judge acc (both orders)", True, {HEADLINE: JUDGE_CONVENTION}),
    "accuracy_chosen_first": ("acc, chosen shown first", True, {DETAIL: True}),
    "accuracy_rejected_first": ("acc, rejected shown first", True, {DETAIL: True}),
    "position_bias": ("position bias", None, {SIGNED: BIAS_SIGN}),
    "consistency": ("consistency", True, {}),
    "tie_rate": ("tie rate", False, {}),
    "parse_failure_rate": ("parse failures", False, {}),
}


class JudgeAuditOptions(ComponentOptions):
    by_subset: bool = Field(True, description="also report each subset")
    seed: int = Field(0, ge=0, description="the order drawn for reward-bench's convention")
    seeds: int = Field(
        200, ge=2, description="seeds over which reward-bench's convention's spread is measured"
    )


class JudgeAudit(Metric):
    """A pairwise judge's accuracy in both orders, position bias, consistency, ties, parse
    failures, calibration and reward-bench's single-order accuracy."""

    name = "judge-audit"
    scope = "pairs"
    needs = ("pairs",)
    Options = JudgeAuditOptions
    options: JudgeAuditOptions

    def compute(self, inputs: PairInputs) -> MetricOutput:
        judged = inputs.verdicts
        if judged is None:
            return MetricOutput()
        if not np.all(np.isfinite(inputs.chosen)):
            raise MetricInputError("expected finite judge logits, got NaN or inf", field="chosen")
        everything = list(range(len(inputs.pair_ids)))
        values = self._values(inputs, judged, everything, None)
        for subset in self._subsets(inputs):
            rows = [i for i, s in enumerate(inputs.subsets) if s == subset]
            values += self._values(inputs, judged, rows, subset)
        return MetricOutput(values=values)

    def _subsets(self, inputs: PairInputs) -> list[str]:
        """The subsets reported one by one (none with ``by_subset`` off, or a single one)."""
        subsets = list(dict.fromkeys(s for s in inputs.subsets if s is not None))
        return subsets if self.options.by_subset and len(subsets) > 1 else []

    def _values(
        self, inputs: PairInputs, judged: JudgedPairs, rows: list[int], subset: str | None
    ) -> list[MetricValue]:
        cf = [judged.chosen_first[i] for i in rows]
        rf = [judged.rejected_first[i] for i in rows]
        clusters = None if inputs.clusters is None else [inputs.clusters[i] for i in rows]
        audit = judge_audit(cf, rf, clusters=clusters)
        common: dict[str, Any] = {} if subset is None else {"subset": subset}
        if clusters is not None:
            common[CLUSTERED_PROMPTS] = len(set(clusters))
        label_suffix = "" if subset is None else f" {subset}"
        values = [
            _value(
                str(ResultKey(key, subset)),
                label + label_suffix,
                getattr(audit, _field(key)),
                higher,
                {**common, **shown},
            )
            for key, (label, higher, shown) in _VALUES.items()
        ]
        keys = [inputs.pair_ids[i] for i in rows]
        rewardbench = random_order_accuracy(
            cf, rf, seed=self.options.seed, clusters=clusters, keys=keys
        )
        spread, low, high = seed_spread(cf, rf, seeds=self.options.seeds, keys=keys)
        values.append(
            _value(
                str(ResultKey("rewardbench_accuracy", subset)),
                "acc, one random order (reward-bench)" + label_suffix,
                rewardbench,
                True,
                {
                    **common,
                    DETAIL: True,
                    "seed": self.options.seed,
                    "seed_sd": spread,
                    "seed_min": low,
                    "seed_max": high,
                    "seeds": self.options.seeds,
                },
            )
        )
        if judged.from_logprobs:
            chosen = inputs.chosen[rows]
            calibration = ece(chosen, np.zeros_like(chosen), ties="half", clusters=clusters)
            values.append(
                MetricValue(
                    str(ResultKey("judge_ece", subset)),
                    "ECE of P(chosen)" + label_suffix,
                    float(calibration.value),
                    params={**common, DETAIL: True},
                    higher_is_better=False,
                )
            )
        return values

    def per_pair(self, inputs: PairInputs) -> dict[str, PerPair]:
        """Each pair's credit in both orders and in each, whether its verdict survives the
        swap, its share of unparsed showings and its credit in reward-bench's one random
        order, overall and per subset (the ratios, position bias and tie rate, are not means
        over pairs and are not compared pair by pair)."""
        judged = inputs.verdicts
        if judged is None:
            return {}
        c = pair_credits(judged.chosen_first, judged.rejected_first)
        credits = {
            "judge_accuracy": c.accuracy,
            "accuracy_chosen_first": c.chosen_first,
            "accuracy_rejected_first": c.rejected_first,
            "consistency": c.consistency,
            "parse_failure_rate": c.parse_failures,
            "rewardbench_accuracy": random_order_credits(
                judged.chosen_first,
                judged.rejected_first,
                seed=self.options.seed,
                keys=inputs.pair_ids,
            ),
        }
        found = {key: PerPair(values) for key, values in credits.items()}
        for subset in self._subsets(inputs):
            mine = np.array([s == subset for s in inputs.subsets])
            for key, values in credits.items():
                found[str(ResultKey(key, subset))] = PerPair(np.where(mine, values, np.nan))
        return found


def _field(key: str) -> str:
    return "accuracy" if key == "judge_accuracy" else key


#: why an interval on a few events is approximate (params["approximate"])
FEW = (
    "a rate from 1–4 events: its 95% interval covered 0.92–0.98 in simulation, as the true "
    "rate varies (benchmarks/coverage_judges.py)"
)


#: why the position bias's ± is approximate where few pairs follow a position
FEW_FOLLOWING = (
    f"± from fewer than {position_bias.FEW_FOLLOWING} prompts (or pairs) that follow a "
    "position: "
    "value ± 1.96·± covered less than 0.93 in simulation; cite the 95% interval "
    "(benchmarks/coverage_position_bias.py)"
)


def _value(
    key: str, label: str, estimate: Estimate, higher: bool | None, params: dict[str, Any]
) -> MetricValue:
    if estimate.few:
        params = {**params, "approximate": FEW_FOLLOWING if key == "position_bias" else FEW}
    low, high = estimate.ci
    return MetricValue(
        key,
        label,
        estimate.value,
        stderr=estimate.stderr,
        ci_low=low,
        ci_high=high,
        params={**params, "n": estimate.n, "skipped": estimate.skipped},
        higher_is_better=higher,
    )


class OracleCorrelation(Metric[ComponentOptions, MetricInputs]):
    """Pooled within-prompt correlation of the scores with the oracle's labels: a rating
    judge's worth as the cheap judge of a label budget."""

    name = "oracle-correlation"
    Options = ComponentOptions
    bounds = (-1.0, 1.0)

    def compute(self, inputs: MetricInputs) -> MetricOutput:
        found = within_prompt_correlation(inputs.oracle, inputs.scores)
        return MetricOutput(
            values=[
                MetricValue(
                    "oracle_correlation",
                    "correlation with oracle (within prompts)",
                    found.value,
                    stderr=found.stderr,
                    ci_low=found.ci_low,
                    ci_high=found.ci_high,
                    params={"prompts": found.prompts},
                    higher_is_better=True,
                )
            ]
        )


@hookimpl
def register_metrics(register):
    register(JudgeAudit)
    register(OracleCorrelation)
