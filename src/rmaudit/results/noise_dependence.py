"""Metrics whose estimand moves with the labels' noise, flagged on a run under a label design
(docs/budget.md, "What a plan spends, and what it changes"): pairwise accuracy thresholds
labels — which of two responses the oracle prefers — so a noisier label (fewer judge samples
per label, as a budget plan often chooses) flips pairs and the metric measures another
quantity.  RETA and best-of-n are sums of labels: noise only widens their ±."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from rmaudit.metrics.budget.planning import NOISE_DEPENDENT
from rmaudit.results.labelling import Labelling
from rmaudit.store.records import RunRow


@dataclass(frozen=True)
class NoiseDependence:
    """The noise-dependent metrics of a run under a label design, and what that means."""

    metrics: list[str]
    #: judge samples per label; None when the recipe does not say
    samples_per_label: int | None
    text: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def noise_dependence(run: RunRow, labelling: Labelling | None) -> NoiseDependence | None:
    """For a run under a label design that computes a noise-dependent metric: which, at how
    many judge samples per label (None when the recipe does not say), and what that means."""
    recipe = run.recipe
    names = [m.get("name") for m in recipe.get("metrics") or [] if isinstance(m, dict)]
    metrics = [name for name in NOISE_DEPENDENT if name in names]
    if labelling is None or not metrics:
        return None
    oracle = recipe.get("oracle")
    samples = oracle.get("samples") if isinstance(oracle, dict) else None
    at = f"{samples} judge sample(s)" if isinstance(samples, int) else "its judge samples"
    text = (
        f"{', '.join(metrics)} here is agreement with labels of {at} each: label noise flips "
        "pairs, so its estimand moves with the samples per label (on helpful.toml's world, "
        "1 sample instead of 10 lowered it by 0.009–0.027 for 4 of 5 RMs); its estimate is "
        "design-unbiased for that estimand only, not comparable with runs at other samples "
        "per label (`rmaudit plan` measures the shift on a pilot)"
    )
    return NoiseDependence(metrics, samples if isinstance(samples, int) else None, text)
