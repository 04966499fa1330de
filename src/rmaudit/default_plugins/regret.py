"""The regret study of Rethinking RM Evaluation (arXiv 2410.05584) as plugins: the N×N
regret-correlation metric, synthetic proxy RMs built from a gold RM (Regressional Goodhart noise,
loopholes, flips) and a Bradley-Terry noisy annotator oracle.

The synthetic components read another component's score and perturb it with draws keyed on
the texts (like the simulated world), so a response gets the same score whatever batch it is
scored in, and reruns reuse stored scores.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.backends.simulated._random import Draws
from rmaudit.components import (
    ComponentOptions,
    CurveValue,
    Metric,
    MetricOutput,
    MetricValue,
    Oracle,
    OracleLabel,
    Prompt,
    Response,
    RewardModel,
    StudyInputs,
)
from rmaudit.components.options import NestedRewardModel
from rmaudit.components.vocabulary import NDR_CURVE_PREFIX, REGRET_SUMMARY
from rmaudit.errors import BadInput
from rmaudit.metrics.regret import (
    CORRELATIONS,
    ERROR_METRICS,
    MIN_RELIABILITY,
    REGRET_STUDY_DESIGNS,
    RegretStudy,
    ndr_curve,
    regret_correlation,
)
from rmaudit.metrics.regret.measured import interval_caveat

#: Label of the benchmark's oracle when it is the gold (``gold = "oracle"``).
ORACLE_LABEL = "[oracle]"


class RegretCorrelationOptions(ComponentOptions):
    metrics: list[Literal[tuple(ERROR_METRICS)]] = Field(  # type: ignore[valid-type]
        default_factory=lambda: list(ERROR_METRICS),
        description="error metrics to correlate with regret (Table 4 rows)",
    )
    gold: Literal["each", "oracle"] = Field(
        "each",
        description="'each': every RM in turn is the gold (N×N); 'oracle': the "
        "benchmark's oracle is the gold and every RM a proxy",
    )
    design: Literal[tuple(REGRET_STUDY_DESIGNS)] = Field(  # type: ignore[valid-type]
        "held-out-responses",
        description="what the error metrics are measured on: 'held-out-responses' (a random "
        "half of each prompt's responses; the regret on the other half), "
        "'held-out-prompts' (half of the prompts) or 'shared' (the same responses "
        "as the regret, which favours Bo5 by construction)",
    )
    n: int | None = Field(
        None,
        ge=2,
        description="best-of-n of the regret (default: every response the regret is measured on)",
    )
    min_reliability: float = Field(
        MIN_RELIABILITY,
        ge=0,
        lt=1,
        description="leave golds out of the means whose proxies' NDRs differ by less than "
        "their noise: reliability below this (0: average every gold, as the seed)",
    )
    bootstrap: int = Field(200, ge=2, description="bootstrap replicates over prompts")
    seed: int = Field(0, ge=0)
    n_bins: int = Field(10, ge=1, description="margin bins of the BT-calibration ECE")
    curves: bool = Field(
        True,
        description="store each proxy's NDR against n (x = n; the TUI "
        "and report also plot it against KL) for the "
        "first gold: the oracle, or the first RM",
    )


class RegretCorrelation(Metric[RegretCorrelationOptions, StudyInputs]):
    """Correlation of each RM error metric with best-of-n regret (NDR) across proxies: Rethinking RM
    Evaluation's N×N study."""

    name = "regret-correlation"
    scope = "run"
    Options = RegretCorrelationOptions
    bounds = (-1.0, 1.0)

    def check_pool_size(self, per_prompt: int) -> None:
        o = self.options
        if o.design == "held-out-responses":
            if per_prompt < 4:
                raise BadInput(
                    f"design 'held-out-responses' splits each prompt's responses "
                    f"into halves of at least 2, and there are {per_prompt}; use "
                    f"design = 'shared'",
                    field="design",
                    value=o.design,
                )
            regret_half = per_prompt - per_prompt // 2
            if o.n is not None and o.n > regret_half:
                raise BadInput(
                    f"n larger than the {regret_half} responses the regret is "
                    f"measured on (half of {per_prompt}, design "
                    f"'held-out-responses')",
                    field="n",
                    value=o.n,
                )
        elif o.n is not None and o.n > per_prompt:
            raise BadInput(
                f"n larger than the {per_prompt} responses per prompt", field="n", value=o.n
            )

    def compute(self, inputs: StudyInputs) -> MetricOutput:
        o = self.options
        # Prompts in id order: the bootstrap resamples prompts by position, and a canonical
        # order makes its draws (hence the CIs) independent of how the prompts were listed.
        order = sorted(range(len(inputs.prompt_ids)), key=inputs.prompt_ids.__getitem__)
        pools: dict[str, Any] = {
            label: [scores[q] for q in order] for label, scores in inputs.scores.items()
        }
        golds = None
        if o.gold == "oracle":
            if len(pools) < 3:
                raise BadInput(
                    f"expected at least 3 reward models to correlate across, got {len(pools)}",
                    field="gold",
                    value=o.gold,
                )
            pools = {ORACLE_LABEL: [inputs.oracle[q] for q in order], **pools}
            golds = [ORACLE_LABEL]
        study = regret_correlation(
            pools,
            metrics=o.metrics,
            n=o.n,
            golds=golds,
            design=o.design,
            min_reliability=o.min_reliability,
            n_bins=o.n_bins,
            bootstrap=o.bootstrap,
            seed=o.seed,
        )
        values = [*self._correlation_values(study, len(order)), self._summary_value(study)]
        curves = _ndr_curves(study, o.bootstrap, o.seed) if o.curves else []
        return MetricOutput(values=values, curves=curves)

    def _correlation_values(self, study: RegretStudy, prompts: int) -> list[MetricValue]:
        """Table 1 / Table 4's cells: each error metric's correlation statistics with NDR."""
        o = self.options
        values = []
        for metric in study.metrics:
            row_label = ERROR_METRICS[metric]
            if metric == "kendall" and study.kendall_equals_accuracy:
                row_label += " (= 2·accuracy − 1: no ties)"
            for statistic, statistic_label in CORRELATIONS.items():
                cell = study.correlation[(statistic, metric)]
                values.append(
                    MetricValue(
                        key=f"{statistic}/{metric}",
                        label=f"{row_label} · {statistic_label}",
                        value=cell.value,
                        stderr=cell.stderr,
                        ci_low=cell.ci_low,
                        ci_high=cell.ci_high,
                        params={
                            "statistic": statistic,
                            "error_metric": metric,
                            "n": study.n,
                            "gold": o.gold,
                            "design": study.design,
                            "approximate": interval_caveat(
                                o.gold, metric, statistic, study.design, prompts
                            ),
                            "averaged": list(study.averaged),
                            "per_gold": cell.per_gold,
                        },
                    )
                )
        return values

    def _summary_value(self, study: RegretStudy) -> MetricValue:
        """The study's mean NDR, with what the views need to redraw it (its matrices, golds)."""
        return MetricValue(
            key=REGRET_SUMMARY,
            label=f"mean NDR, best-of-{study.n} ({study.design})",
            value=float(np.nanmean(study.ndr)),
            params={
                "n": study.n,
                "gold": self.options.gold,
                "design": study.design,
                "kendall_equals_accuracy": study.kendall_equals_accuracy,
                "reliability": {
                    g: r if math.isfinite(r) else None for g, r in study.reliability.items()
                },
                "screened": list(study.screened),
                "skipped_prompts": study.skipped,
                "rms": list(study.rms),
                "golds": list(study.golds),
                "ndr": _matrix(study.ndr),
                "error": {m: _matrix(e) for m, e in study.error.items()},
            },
        )


def _curve_ns(n: int) -> list[int]:
    """Best-of-n sizes of the NDR curves: the powers of 2 from 2 below n, and n."""
    return [2**k for k in range(1, max(1, n.bit_length())) if 2**k < n] + [n]


def _ndr_curves(study, bootstrap: int, seed: int) -> list[CurveValue]:
    """Each proxy's NDR against n, with the first gold, on the responses the regret was
    measured on (Rethinking RM Evaluation's Fig. 9 x axis is the KL of best-of-n, a function of n:
    plotted from
    these).  Keys ``ndr_curve/<proxy label>``."""
    pools = study.regret_pools
    gold = study.golds[0]
    ranked = [q for q, pool in enumerate(pools[gold]) if np.ptp(pool) > 0]  # as the study
    ns = _curve_ns(study.n)
    curves = []
    for label in study.rms:
        if label == gold:
            continue
        curve = ndr_curve(
            [pools[gold][q] for q in ranked],
            [pools[label][q] for q in ranked],
            ns,
            bootstrap=bootstrap,
            seed=seed,
        )
        curves.append(
            CurveValue(
                key=f"{NDR_CURVE_PREFIX}{label}",
                label=f"NDR of best-of-n, gold = {gold}",
                x_label="n",
                x=np.asarray(curve.x, dtype=float),
                value=curve.value,
                stderr=curve.stderr,
                ci_low=curve.ci_low,
                ci_high=curve.ci_high,
                params={"gold": gold, "proxy": label},
            )
        )
    return curves


def _matrix(values: np.ndarray) -> list[list[float | None]]:
    """JSON-able rows; NaN (an RM against itself) becomes null."""
    return [[None if math.isnan(v) else float(v) for v in row] for row in values]


class SyntheticProxyOptions(ComponentOptions):
    gold: NestedRewardModel = Field(description="the gold reward model, as an RM table")
    sigma: float = Field(
        0.0,
        ge=0,
        description="sd of Gaussian noise added to the gold score "
        "(Regressional Goodhart), in its units",
    )
    loophole: Literal["none", "lottery", "length"] = Field(
        "none",
        description="'lottery': a hash-chosen fraction `loophole_rate` of responses "
        "gets `loophole_bonus`; 'length': `loophole_bonus` per doubling "
        "of the word count over 100 words",
    )
    loophole_rate: float = Field(0.05, ge=0, le=1)
    loophole_bonus: float = Field(2.0, description="size of the loophole, in gold units")
    flip: float = Field(
        0.0,
        ge=0,
        le=1,
        description="fraction of responses whose gold score is negated (label flipping analogue)",
    )
    seed: int = 0


class SyntheticProxy(RewardModel[SyntheticProxyOptions]):
    """A synthetic proxy of a gold RM: gold + Gaussian noise σ, optional loophole or flipped
    responses (Rethinking RM Evaluation)."""

    name = "synthetic-proxy"
    Options = SyntheticProxyOptions
    simulated = True  # a synthetic RM, never a real model: outputs say so

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.gold = self.options.gold.build()

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        o = self.options
        gold_scores = self.gold.score(batch)
        scores = []
        for (prompt, response), gold in zip(batch, gold_scores, strict=True):
            draws = Draws("synthetic-proxy", o.seed, prompt.text, response.text)
            # One fixed draw order per text, so changing one option moves only its own term.
            flipped, noise, lucky = draws.bernoulli(o.flip), draws.normal(), draws.uniform()
            value = (-gold if flipped else gold) + o.sigma * noise
            if o.loophole == "lottery" and lucky < o.loophole_rate:
                value += o.loophole_bonus
            elif o.loophole == "length":
                words = max(len(response.text.split()), 1)
                value += o.loophole_bonus * math.log2(words / 100)
            scores.append(value)
        return scores


class BradleyTerryAnnotatorOptions(ComponentOptions):
    gold: NestedRewardModel = Field(description="the annotator's true preferences, as an RM table")
    beta: float = Field(0.5, gt=0, description="BT temperature: P(i ≻ j) = σ((r_i − r_j)/β)")
    seed: int = 0


class BradleyTerryAnnotator(Oracle[BradleyTerryAnnotatorOptions]):
    """A noisy annotator whose pairwise preferences follow Bradley-Terry with temperature β
    (Rethinking RM Evaluation, Eq. 4)."""

    name = "bt-annotator"
    Options = BradleyTerryAnnotatorOptions
    simulated = True

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.gold = self.options.gold.build()

    def label(self, batch: Sequence[tuple[Prompt, Response]]) -> list[OracleLabel]:
        """Label = r + β·G with G a standard Gumbel draw keyed on the texts.

        The difference of two independent standard Gumbels is standard logistic, so
        P(label_i > label_j) = σ((r_i − r_j)/β): every pairwise comparison of these labels —
        and so any comparison sort of them — follows the Bradley-Terry model of Eq. 4 (a
        random-utility annotator whose comparisons are mutually consistent).
        """
        labels = []
        for (prompt, response), gold in zip(batch, self.gold.score(batch), strict=True):
            uniform = Draws("bt-annotator", self.options.seed, prompt.text, response.text).uniform()
            gumbel = -math.log(-math.log(min(max(uniform, 1e-300), 1.0 - 1e-16)))
            labels.append(OracleLabel(score=gold + self.options.beta * gumbel))
        return labels


@hookimpl
def register_metrics(register):
    register(RegretCorrelation)


@hookimpl
def register_reward_models(register):
    register(SyntheticProxy)


@hookimpl
def register_oracles(register):
    register(BradleyTerryAnnotator)
