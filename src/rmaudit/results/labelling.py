"""What part of a run's benchmark the oracle labelled, read back (docs/budget.md): the label
design, how many responses it labelled, and the cheap judge that corrected the estimates."""

from __future__ import annotations

import json
from typing import Any

from rmaudit.display.formatting import percent
from rmaudit.store import Store


def labelling(
    store: Store, run: dict[str, Any], benchmark: dict[str, Any]
) -> dict[str, Any] | None:
    """None for a benchmark whose every response is labelled (or a run of pairs only)."""
    if not benchmark.get("design"):
        return None
    design = json.loads(benchmark["design"])
    labelled, responses = store.read.label_coverage(benchmark)
    recipe = json.loads(run.get("recipe_json") or "{}")
    cheap = recipe.get("cheap_oracle")
    if isinstance(cheap, dict) and "reward_model" in cheap:
        cheap = f"RM {cheap['reward_model']}"
    elif isinstance(cheap, dict):
        cheap = cheap.get("name")
    return {
        "design": design.get("design"),
        "budget": design.get("budget"),
        "labels_per_prompt": design.get("labels_per_prompt"),
        "guide": design.get("guide_labels", []),
        "description": design.get("text", f"{design.get('design')} design"),
        "labelled": labelled,
        "responses": responses,
        "fraction": labelled / responses if responses else None,
        "cheap_judge": cheap,
    }


def labelling_line(found: dict[str, Any]) -> str:
    """ "labels: rm-guided design, 25% of …: 6,400 of 25,600 responses labelled (25.0%) …"."""
    cheap = f", corrected by the cheap judge {found['cheap_judge']}" if found["cheap_judge"] else ""
    share = f" ({percent(found['fraction'])})" if found["fraction"] is not None else ""
    return (
        f"labels: {found['description']}: {found['labelled']:,} of {found['responses']:,} "
        f"responses labelled{share}{cheap}; every estimate is design-unbiased (to first "
        "order) and its ± includes the labelling noise (docs/budget.md)"
    )
