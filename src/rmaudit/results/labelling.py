"""What part of a run's benchmark the oracle labelled, read back (docs/budget.md): the label
design, how many responses it labelled, and the cheap judge that corrected the estimates."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from rmaudit.display.formatting import percent
from rmaudit.store import Store
from rmaudit.store.records import BenchmarkRow, RunRow


@dataclass(frozen=True)
class Labelling:
    """A budgeted benchmark's label design (its stored record) and coverage."""

    design: str
    budget: float | None
    labels_per_prompt: int | None
    #: the guide RMs by their labels
    guide: tuple[str, ...]
    description: str
    labelled: int
    responses: int
    #: labelled / responses (None: no responses)
    fraction: float | None
    #: "RM honest" or an oracle's name; None: no cheap judge
    cheap_judge: str | None

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "guide": list(self.guide)}


def labelling(store: Store, run: RunRow, benchmark: BenchmarkRow) -> Labelling | None:
    """None for a benchmark whose every response is labelled (or a run of pairs only)."""
    design = benchmark.design
    if design is None:
        return None
    labelled, responses = store.read.label_coverage(benchmark)
    return Labelling(
        design=design.design,
        budget=design.budget,
        labels_per_prompt=design.labels_per_prompt,
        guide=design.guide_labels,
        description=design.description,
        labelled=labelled,
        responses=responses,
        fraction=labelled / responses if responses else None,
        cheap_judge=_cheap_judge(run),
    )


def _cheap_judge(run: RunRow) -> str | None:
    """The recipe's ``[cheap_oracle]``: "RM LABEL", an oracle's name, or None."""
    cheap = run.recipe.get("cheap_oracle")
    if isinstance(cheap, dict) and "reward_model" in cheap:
        return f"RM {cheap['reward_model']}"
    if isinstance(cheap, dict):
        name = cheap.get("name")
        return None if name is None else str(name)
    return None


def labelling_line(found: Labelling) -> str:
    """ "labels: rm-guided design, 25% of …: 6,400 of 25,600 responses labelled (25.0%) …"."""
    cheap = f", corrected by the cheap judge {found.cheap_judge}" if found.cheap_judge else ""
    share = f" ({percent(found.fraction)})" if found.fraction is not None else ""
    return (
        f"labels: {found.description}: {found.labelled:,} of {found.responses:,} "
        f"responses labelled{share}{cheap}; every estimate is design-unbiased (to first "
        "order) and its ± includes the labelling noise (docs/budget.md)"
    )
