"""A label plan as data (``rmaudit plan --json``, docs/budget.md "Planning"): every option with
what it spends and its total at the plan's prices, the prices and where each came from, the
recipe as it stands, the recommendation, where the saving comes from step by step, the floor,
and the measured shift of a metric whose estimand depends on label noise."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rmaudit.metrics.budget.planning import Option, loses
from rmaudit.run.costs import JudgeCalls
from rmaudit.run.label_plan import LabelNeeds

#: the version of the JSON's layout; a change that drops or renames a key bumps it
PLAN_JSON_VERSION = 2


def _finite(value: float | None) -> float | None:
    """JSON has no NaN or infinity: None (null) in their place."""
    return value if value is None or math.isfinite(value) else None


@dataclass(frozen=True)
class SavingStep:
    """One step from the recipe as it stands to the recommendation, with what it costs."""

    name: str
    option: Option


def saving_steps(planned: LabelNeeds, best: Option) -> list[SavingStep]:
    """The recipe's cost against the recommendation's, step by step: full labelling at the
    recipe's samples per label, at one sample, then the recommended design (empty when the
    recipe has no plan of its own)."""
    recipe = planned.recipe
    if recipe is None:
        return []
    full = {o.samples: o for o in planned.options if o.design == "full" and o.feasible}
    steps = [SavingStep("the recipe as it stands", recipe)]
    if recipe.samples in full and recipe.design != "full":
        steps.append(
            SavingStep(f"full labelling at {recipe.samples} samples", full[recipe.samples])
        )
    elif recipe.samples in full:
        at_target = full[recipe.samples]
        steps.append(
            SavingStep(f"the same at the target's {at_target.prompts:,} prompts", at_target)
        )
    if 1 in full and recipe.samples != 1:
        steps.append(SavingStep("full labelling, one sample (one judge sample per label)", full[1]))
    steps.append(SavingStep("recommended (the design, budget and cheap judge)", best))
    return steps


def option_json(planned: LabelNeeds, option: Option) -> dict[str, Any]:
    """One option: its settings, what it spends, its total and whether it loses."""
    cost = planned.cost(option)
    prices = planned.prices.prices if planned.prices else None
    return {
        "design": option.design,
        "budget": option.budget,
        "cheap_judge": option.cheap,
        "samples_per_label": option.samples,
        "prompts": option.prompts,
        "labels": option.labels,
        "oracle_calls": option.calls,
        "cheap_calls": option.cheap_calls,
        "generations": option.generations,
        "rm_scorings": option.scorings,
        "cost": cost,
        "usd": None if planned.usd_per_call is None else cost * planned.usd_per_call,
        "width_over_target": _finite(option.reaches),
        "feasible": option.feasible,
        "loses_to_full_labelling": prices is not None and loses(option, planned.options, prices),
    }


def plan_json(planned: LabelNeeds, recipe_path: str) -> dict[str, Any]:
    """The plan as a JSON-ready dict (every option, not only the table's)."""
    best = planned.best
    assert best is not None and planned.prices is not None  # a plan always recommends
    prices = planned.prices
    steps = saving_steps(planned, best)
    return {
        "version": PLAN_JSON_VERSION,
        "recipe": recipe_path,
        "pilot": {
            "benchmark": planned.pilot_id,
            "prompts": planned.pilot_prompts,
            "samples_per_label": planned.pilot_samples,
        },
        "prompt_pool": planned.pool,
        "targets": [
            {"metric": target.kind, "param": target.param, "name": target.name}
            for target in planned.targets
        ],
        "target_widths": [
            {"target": target, "rm": rm, "width": width}
            for (target, rm), width in sorted(planned.widths.items())
        ],
        "prices": {
            "oracle": prices.prices.oracle,
            "cheap": prices.prices.cheap,
            "generation": prices.prices.generation,
            "scoring": prices.prices.scoring,
            "sources": dict(prices.sources),
            "usd_per_oracle_call": planned.usd_per_call,
        },
        "as_it_stands": None if planned.recipe is None else option_json(planned, planned.recipe),
        "recommended": option_json(planned, best),
        "options": [
            option_json(planned, option) for option in sorted(planned.options, key=planned.cost)
        ],
        "savings": [
            {
                "step": step.name,
                "cost": planned.cost(step.option),
                "fewer_than_before": (
                    None
                    if i == 0
                    else planned.cost(steps[i - 1].option) / max(planned.cost(step.option), 1e-12)
                ),
            }
            for i, step in enumerate(steps)
        ],
        "floor_labels": _finite(planned.floor),
        "noise_shifts": [
            {
                "metric": shift.metric,
                "rm": shift.rm,
                "samples_per_label": shift.samples,
                "pilot_samples_per_label": shift.pilot_samples,
                "at_pilot": _finite(shift.at_pilot),
                "at_samples": _finite(shift.at_samples),
                "shift": _finite(shift.shift),
                "combined_stderr": _finite(shift.stderr),
            }
            for shift in planned.shifts
        ],
        "judge_calls": judge_calls_json(planned.judges),
    }


def judge_calls_json(judges: list[JudgeCalls] | tuple[JudgeCalls, ...]) -> list[dict[str, Any]]:
    """Each LLM judge's calls still to make: its label, stage, calls (``ready`` of them its
    ready call, the check before the first), replies, tokens and USD (null: no price)."""
    return [
        {
            "label": found.label,
            "component": found.component,
            "stage": found.stage,
            "calls": found.calls,
            "ready": found.ready,
            "replies": found.calls * found.samples,
            "prompt_tokens": round(found.estimate.prompt_tokens),
            "completion_tokens": round(found.estimate.completion_tokens),
            "usd": found.usd,
        }
        for found in judges
    ]
