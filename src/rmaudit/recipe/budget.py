"""A label budget: which of a benchmark's responses the oracle labels (docs/budget.md).

Written in the recipe's ``[oracle]`` table beside the oracle's own options, and taken out of it
before the oracle's options are validated::

    [oracle]
    name = "simulated-judge"
    samples = 1
    budget = 0.25            # a fraction of each prompt's responses; or labels_per_prompt = 64
    design = "rm-guided"     # or "uniform" (the default)
    guide = ["honest"]       # rm-guided: the RMs whose top picks get more labels
    design_seed = 0          # seeds the draw (permanent random numbers per response)

and a cheap judge beside the expensive one, in its own table: any oracle, or one of the
recipe's RMs by label::

    [cheap_oracle]
    reward_model = "honest"  # or name = "simulated-judge", noise = 3.0, ...

Nothing here means full labelling, exactly as before: every response labelled, every inclusion
probability 1, the benchmark's key unchanged.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from typing import Any

from rmaudit.display.formatting import percent
from rmaudit.errors import BadInput
from rmaudit.metrics.budget import DESIGNS

#: the keys a label budget adds to the ``[oracle]`` table (no oracle may have options so named)
BUDGET_KEYS = ("budget", "labels_per_prompt", "design", "guide", "design_seed")


@dataclass(frozen=True)
class LabelBudget:
    """How many of each prompt's N responses are labelled, and how they are drawn."""

    #: a fraction of each prompt's responses in (0, 1], or None with ``per_prompt``
    fraction: float | None
    #: a count of responses per prompt, or None with ``fraction``
    per_prompt: int | None
    design: str
    #: the labels of the RMs guiding an rm-guided design, in the recipe's order
    guide: tuple[str, ...]
    seed: int

    def expected_labels(self, n_responses: int) -> float:
        """Labels per prompt of N responses: the design's (expected) sample size."""
        if self.per_prompt is not None:
            return float(min(self.per_prompt, n_responses))
        return self.fraction * n_responses

    def identity(self, guide_keys: tuple[str, ...]) -> dict[str, Any]:
        """What the benchmark's key hashes: the draw, with the guides by their RM keys (so
        renaming an RM's label does not redraw, and changing its options does)."""
        return {
            "budget": self.fraction,
            "labels_per_prompt": self.per_prompt,
            "design": self.design,
            "guide": list(guide_keys),
            "design_seed": self.seed,
        }

    def describe(self) -> str:
        """ "rm-guided design, 25% of each prompt's responses (guided by honest)"."""
        size = (
            f"{percent(self.fraction)} of each prompt's responses"
            if self.fraction is not None
            else f"{self.per_prompt} responses per prompt"
        )
        guided = f" (guided by {', '.join(self.guide)})" if self.guide else ""
        return f"{self.design} design, {size}{guided}"


def split_budget(
    table: Any, *, file: str, rm_labels: tuple[str, ...], per_prompt: int | None
) -> tuple[Any, LabelBudget | None]:
    """The ``[oracle]`` table without the budget keys, and the budget (None: label all)."""
    if not isinstance(table, dict) or not any(key in table for key in BUDGET_KEYS):
        return table, None
    oracle = {key: value for key, value in table.items() if key not in BUDGET_KEYS}
    raw = {key: table[key] for key in BUDGET_KEYS if key in table}

    def bad(problem: str, key: str) -> BadInput:
        return BadInput(problem, file=file, field=f"oracle.{key}", value=raw[key])

    fraction = raw.get("budget")
    count = raw.get("labels_per_prompt")
    if fraction is not None and count is not None:
        raise bad("give budget (a fraction) or labels_per_prompt (a count), not both", "budget")
    if fraction is None and count is None:
        raise BadInput(
            "a label design needs budget = FRACTION or labels_per_prompt = COUNT",
            file=file,
            field="oracle.budget",
        )
    if fraction is not None:
        if isinstance(fraction, bool) or not isinstance(fraction, int | float):
            raise bad("expected a fraction in (0, 1]", "budget")
        if not math.isfinite(fraction) or not 0 < fraction <= 1:
            raise bad("expected a fraction in (0, 1] of each prompt's responses", "budget")
    if count is not None:
        if isinstance(count, bool) or not isinstance(count, int) or count < 2:
            raise bad(
                "expected a whole number of responses per prompt, at least 2", "labels_per_prompt"
            )
        if per_prompt is not None and count > per_prompt:
            raise bad(
                f"more than the {per_prompt} responses per prompt ([responses] per_prompt)",
                "labels_per_prompt",
            )
    design = raw.get("design", "uniform")
    if design not in DESIGNS:
        raise bad(f"expected one of {', '.join(DESIGNS)}{_hint(design, DESIGNS)}", "design")
    guide = raw.get("guide", [])
    if not isinstance(guide, list) or not all(isinstance(g, str) for g in guide):
        raise bad("expected a list of reward-model labels", "guide")
    if design == "rm-guided" and not guide:
        raise BadInput(
            "an rm-guided design names the RMs whose top picks get more labels: "
            'guide = ["LABEL", ...] (fixed, so that adding RMs later keeps the draw)',
            file=file,
            field="oracle.guide",
        )
    if design == "uniform" and guide:
        raise bad('a uniform design has no guides (design = "rm-guided" uses them)', "guide")
    for label in guide:
        if label not in rm_labels:
            raise BadInput(
                f"no reward model labelled {label!r}{_hint(label, rm_labels)}",
                file=file,
                field="oracle.guide",
                value=label,
            )
    seed = raw.get("design_seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise bad("expected a whole number ≥ 0", "design_seed")
    return oracle, LabelBudget(fraction, count, design, tuple(guide), seed)


def rm_labels(tables: list[Any]) -> tuple[str, ...]:
    """The RMs' labels as written (a table's label, else its name), before they are validated."""
    return tuple(
        str(t.get("label", t.get("name"))) if isinstance(t, dict) else str(t) for t in tables
    )


def cheap_judge(table: Any, *, file: str, rm_labels: list[str]) -> tuple[Any, str | None]:
    """The ``[cheap_oracle]`` table as (an oracle's table, None) or (None, an RM's label) for
    ``{reward_model = "LABEL"}``.  It corrects a label budget's estimates; with every response
    labelled it only labels them too, for ``rmaudit plan`` to measure how well it predicts the
    oracle."""
    if not (isinstance(table, dict) and "reward_model" in table):
        return table, None
    extra = sorted(set(table) - {"reward_model"})
    if extra:
        raise BadInput(
            "a reward model as the cheap judge takes no other keys",
            file=file,
            field=f"cheap_oracle.{extra[0]}",
        )
    label = table["reward_model"]
    if label not in rm_labels:
        raise BadInput(
            f"no reward model with this label{_hint(label, rm_labels)}",
            file=file,
            field="cheap_oracle.reward_model",
            value=label,
        )
    return None, label


def _hint(value: Any, known) -> str:
    """ " (did you mean honest?)" for the closest known name, or nothing."""
    close = difflib.get_close_matches(str(value), list(known), n=1)
    return f" (did you mean {close[0]}?)" if close else ""
