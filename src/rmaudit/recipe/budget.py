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
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from rmaudit.display.formatting import percent
from rmaudit.errors import BadInput
from rmaudit.metrics.budget import LABEL_DESIGNS, uniform_sample_size
from rmaudit.store.records import LabelDesignRecord


class LabelBudget(BaseModel):
    """How many of each prompt's N responses are labelled, and how they are drawn: the budget
    keys of the recipe's ``[oracle]`` table, validated once (:meth:`from_oracle_table`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: a fraction of each prompt's responses in (0, 1], or None with ``labels_per_prompt``
    budget: int | float | None = None
    #: a count of responses per prompt, or None with ``budget``
    labels_per_prompt: int | None = None
    design: Literal["uniform", "rm-guided"] = "uniform"
    #: the labels of the RMs guiding an rm-guided design, in the recipe's order
    guide: tuple[str, ...] = ()
    #: seeds the draw (permanent random numbers per response)
    design_seed: int = 0

    @model_validator(mode="before")
    @classmethod
    def _checked(cls, raw: Any, info: Any) -> Any:
        """Every check of the budget keys, each a one-line ``BadInput`` naming the recipe file,
        the field and the value (``info.context``: file, rm_labels, per_prompt)."""
        _check_budget_keys(raw, **(info.context or {}))
        return raw

    @classmethod
    def from_oracle_table(
        cls, table: Any, *, file: str, rm_labels: tuple[str, ...], per_prompt: int | None
    ) -> tuple[Any, LabelBudget | None]:
        """The ``[oracle]`` table without the budget keys, and the budget (None: label all)."""
        if not isinstance(table, dict) or not any(key in table for key in cls.model_fields):
            return table, None
        oracle = {key: value for key, value in table.items() if key not in cls.model_fields}
        raw = {key: value for key, value in table.items() if key in cls.model_fields}
        context = {"file": file, "rm_labels": rm_labels, "per_prompt": per_prompt}
        try:
            return oracle, cls.model_validate(raw, context=context)
        except ValidationError as error:
            found = error.errors()[0].get("ctx", {}).get("error")
            if isinstance(found, BadInput):
                raise found from None
            raise  # every check above raises a BadInput; anything else is a bug

    def expected_labels(self, n_responses: int) -> float:
        """Labels per prompt of N responses: the design's (expected) sample size."""
        if self.labels_per_prompt is not None:
            return float(min(self.labels_per_prompt, n_responses))
        assert self.budget is not None  # the validator requires one of the two
        return self.budget * n_responses

    def uniform_labels(self, n_responses: int) -> int:
        """Labels a uniform design draws from a prompt of N responses."""
        if self.labels_per_prompt is not None:
            return min(self.labels_per_prompt, n_responses)
        assert self.budget is not None  # the validator requires one of the two
        return min(uniform_sample_size(self.budget, n_responses), n_responses)

    def record(self, guide_keys: tuple[str, ...]) -> LabelDesignRecord:
        """The design as the benchmark stores it: the draw, with the guides by their RM keys
        (so renaming an RM's label does not redraw, and changing its options does)."""
        return LabelDesignRecord(
            design=self.design,
            budget=self.budget,
            labels_per_prompt=self.labels_per_prompt,
            guide=guide_keys,
            design_seed=self.design_seed,
            guide_labels=self.guide,
            text=self.describe(),
        )

    def describe(self) -> str:
        """ "rm-guided design, 25% of each prompt's responses (guided by honest)"."""
        size = (
            f"{self.labels_per_prompt} responses per prompt"
            if self.labels_per_prompt is not None
            else f"{percent(self.budget or 0.0)} of each prompt's responses"
        )
        guided = f" (guided by {', '.join(self.guide)})" if self.guide else ""
        return f"{self.design} design, {size}{guided}"


def _check_budget_keys(
    raw: dict[str, Any], *, file: str, rm_labels: tuple[str, ...], per_prompt: int | None
) -> None:
    def bad(problem: str, key: str) -> BadInput:
        return BadInput(problem, file=file, field=f"oracle.{key}", value=raw[key])

    _check_size(raw, bad, file=file, per_prompt=per_prompt)
    design = raw.get("design", "uniform")
    if design not in LABEL_DESIGNS:
        raise bad(
            f"expected one of {', '.join(LABEL_DESIGNS)}{_hint(design, LABEL_DESIGNS)}", "design"
        )
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
        _check_rm_label(label, rm_labels, file=file, field="oracle.guide")
    seed = raw.get("design_seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise bad("expected a whole number ≥ 0", "design_seed")


def _check_size(raw: dict[str, Any], bad: Any, *, file: str, per_prompt: int | None) -> None:
    """``budget`` (a fraction) or ``labels_per_prompt`` (a count), exactly one, in range."""
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
    _check_rm_label(label, rm_labels, file=file, field="cheap_oracle.reward_model")
    return None, label


def _check_rm_label(label: Any, rm_labels: Sequence[str], *, file: str, field: str) -> None:
    """``BadInput`` naming ``field`` when ``label`` is none of the recipe's RM labels."""
    if label not in rm_labels:
        raise BadInput(
            f"no reward model labelled {label!r}{_hint(label, rm_labels)}",
            file=file,
            field=field,
            value=label,
        )


def _hint(value: Any, known: Any) -> str:
    """ " (did you mean honest?)" for the closest known name, or nothing."""
    close = difflib.get_close_matches(str(value), list(known), n=1)
    return f" (did you mean {close[0]}?)" if close else ""
