"""What a recipe's LLM judges under audit will spend (``rmaudit plan``, docs/judges.md "Cost"):
the calls still to make against the DB — the plan's own stages counted as a run counts them
(``Runner.plan()``) — with their tokens and USD, the estimate ``--dry-run`` prints
(:func:`~rmaudit.run.costs.judge_calls`)."""

from __future__ import annotations

from collections.abc import Sequence

from rmaudit.backends.openai_api import Price
from rmaudit.components import Component, RewardModel
from rmaudit.recipe import Recipe
from rmaudit.store import Store

from .context import built
from .costs import JudgeCalls, judge_calls
from .runner import Runner


def api_judges(recipe: Recipe, components: dict[str, Component]) -> list[str]:
    """The labels of the recipe's reward models that are LLM judges paid per call."""
    return [
        spec.label
        for spec in recipe.reward_models
        if hasattr(built(components, spec, RewardModel), "estimate_calls")
    ]


def planned_judge_calls(
    recipe: Recipe,
    components: dict[str, Component],
    store: Store | None,
    *,
    price: Price | None = None,
    answers: Sequence[tuple[str, str]] = (),
) -> list[JudgeCalls]:
    """Each LLM judge's calls for the recipe against ``store`` (None: an empty DB), priced at
    ``price`` or the judge's own; a rating judge's from the texts of its pending responses
    where the plan knows them, else from texts like ``answers``."""
    if not api_judges(recipe, components):
        return []
    runner = Runner(recipe, store, components=components)
    counts = runner.plan()
    return judge_calls(
        recipe, components, counts, price=price, pending=runner.pending_texts(), answers=answers
    )


def plans_labels(recipe: Recipe) -> bool:
    """Whether the recipe builds and labels a benchmark here (what a label plan plans)."""
    return recipe.source is not None and recipe.oracle is not None and not recipe.imports_benchmark
