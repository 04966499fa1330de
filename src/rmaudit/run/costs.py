"""Dry-run cost estimates in the style of the RETA paper's Table 1.

Building a benchmark pays for prompt embeddings (|Q0| prompts, once, to sample by k-DPP) and
for oracle labels (k·N responses, times the requests per label); auditing an RM afterwards
costs nothing, unless the RM is an LLM judge over an API or a served reward model priced per
request.  Components that call priced APIs say what their part costs through
``Embedder.estimate_cost``, ``Oracle.estimate_cost``, a judge's ``estimate_calls`` and a served
RM's ``calls``; this module asks them, for the work a plan says is still to do —
the same estimate for ``--dry-run`` and ``rmaudit plan``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from rmaudit.backends.openai_api import CallEstimate, Price
from rmaudit.components import (
    Component,
    Embedder,
    Oracle,
    PairSource,
    Prompt,
    PromptSampler,
    PromptSource,
    RewardModel,
)
from rmaudit.components.keys import prompt_id
from rmaudit.recipe import Recipe

from .context import built


@dataclass(frozen=True)
class CostLine:
    stage: str
    component: str
    items: int
    usd: float | None  # None: the component is priced per token but the recipe gives no price
    tokens: float | None = None  # prompt + completion tokens, where the component says


def estimate_costs(
    recipe: Recipe,
    components: dict[str, Component],
    counts: list,
    pending_texts: Mapping[str, Sequence[tuple[str, str]]] | None = None,
) -> list[CostLine]:
    """The cost of the pending work of a plan (``Runner.plan()``'s counts), per priced
    component; a rating judge's from its ``pending_texts`` (``Runner.pending_texts()``)."""
    judged = judge_costs(recipe, components, counts, pending_texts) + served_costs(
        recipe, components, counts
    )
    if recipe.imports_benchmark or recipe.source is None or recipe.oracle is None:
        return judged  # an imported benchmark is already labelled (pairs need no oracle)
    pending = {count.stage: count.pending for count in counts}
    pool: dict[str, Prompt] = {}
    for text, meta in built(components, recipe.source, PromptSource).load():
        pool.setdefault(prompt_id(text), Prompt(prompt_id(text), text, meta))
    prompts = list(pool.values())
    lines = []
    sampler = built(components, recipe.sampler, PromptSampler)
    if sampler.needs_embeddings and pending.get("prompts", 0):
        embedder = built(components, recipe.embedder, Embedder)
        lines.append(
            _line(
                "prompt sampling (embeddings)",
                embedder,
                len(prompts),
                embedder.estimate_cost([p.text for p in prompts]),
            )
        )
    oracle = built(components, recipe.oracle, Oracle)
    labels = pending.get("oracle labels", 0)
    lines.append(
        _line("response labelling (oracle)", oracle, labels, oracle.estimate_cost(prompts, labels))
    )
    return [line for line in lines if line is not None] + judged


def _line(stage: str, component: Component, items: int, usd: float | None) -> CostLine | None:
    priced = hasattr(component.options, "price")
    return CostLine(stage, component.name, items, usd) if usd is not None or priced else None


@dataclass(frozen=True)
class JudgeCalls:
    """The calls an LLM judge under audit still has to make against a DB: one per pending
    showing (``verdicts: LABEL``) or response (``scores: LABEL``), each asking for ``samples``
    replies, and the ready call its check makes before the first; their tokens and USD
    (None: no price given)."""

    label: str
    component: str
    stage: str
    pending: int
    ready: int
    samples: int
    estimate: CallEstimate
    usd: float | None

    @property
    def calls(self) -> int:
        return self.pending + self.ready


def judge_calls(
    recipe: Recipe,
    components: dict[str, Component],
    counts: list,
    *,
    price: Price | None = None,
    pending: Mapping[str, Sequence[tuple[str, str]]] | None = None,
    answers: Sequence[tuple[str, str]] = (),
) -> list[JudgeCalls]:
    """Each LLM judge's pending calls in a plan's counts (``Runner.plan()``), their tokens
    (``estimate_calls``) from the texts it will be shown, and their USD at ``price`` (else the
    judge's own).  A pairwise judge is shown the recipe's pairs; a rating judge its stage's
    ``pending`` (question, answer) texts (``Runner.pending_texts()``), one call per distinct
    text, and where the run has not made them yet, texts like ``answers`` (e.g. a pilot's), else
    both answers of each pair."""
    remaining = {count.stage: count.pending for count in counts}
    pairs: list[tuple[str, str, str]] = []
    if recipe.pair_source is not None:
        source = built(components, recipe.pair_source, PairSource)
        loaded = [] if source.needs_benchmark else source.load_pairs(None).pairs
        pairs = [(p.prompt.text, p.chosen.text, p.rejected.text) for p in loaded]
    found = []
    for spec in recipe.reward_models:
        judge = built(components, spec, RewardModel)
        if not hasattr(judge, "estimate_calls"):
            continue
        stage = f"{'verdicts' if judge.judges_pairs() else 'scores'}: {spec.label}"
        calls = remaining.get(stage, 0)
        texts: Sequence[Sequence[str]] = pairs
        if not judge.judges_pairs():
            known = list((pending or {}).get(stage, ()))
            distinct = list(dict.fromkeys(known))  # the same text is asked once
            calls -= len(known) - len(distinct)
            texts = distinct or list(answers) or [(q, a) for q, *both in pairs for a in both]
        ready = getattr(judge, "ready_calls", 0) if calls else 0
        # the check's call shows a short fixed pair: priced as one more call, an upper bound
        estimate = judge.estimate_calls(texts, calls + ready)
        found.append(
            JudgeCalls(
                spec.label,
                judge.name,
                stage,
                calls,
                ready,
                judge.options.samples,
                estimate,
                estimate.usd(price or judge.options.price),
            )
        )
    return found


def judge_costs(
    recipe: Recipe,
    components: dict[str, Component],
    counts: list,
    pending: Mapping[str, Sequence[tuple[str, str]]] | None = None,
) -> list[CostLine]:
    """:func:`judge_calls` as the lines of a dry run's cost table."""
    return [
        CostLine(
            f"{calls.stage} (judge calls" + (", 1 a ready call)" if calls.ready else ")"),
            calls.component,
            calls.calls,
            calls.usd,
            calls.estimate.tokens,
        )
        for calls in judge_calls(recipe, components, counts, pending=pending)
    ]


@runtime_checkable
class PricedPerRequest(Protocol):
    """A component whose requests are priced one by one (a served reward model)."""

    ready_calls: int

    def calls(self, items: int) -> int: ...

    def check_calls(self, sample: int) -> int: ...


def served_costs(recipe: Recipe, components: dict[str, Component], counts: list) -> list[CostLine]:
    """Each served reward model priced per request (``price_per_call``): the requests its
    pending scores take, those of its scoring checks (on the sample of the stage's size, an
    upper bound: a rerun reuses stored checks) and its ready call, and their USD."""
    from .scoring_checks import sample_size

    counted = {count.stage: count for count in counts}
    lines = []
    for spec in recipe.reward_models:
        served = built(components, spec, RewardModel)
        price = getattr(served.options, "price_per_call", None)
        count = counted[f"scores: {spec.label}"]
        if not isinstance(served, PricedPerRequest) or price is None or not count.pending:
            continue
        calls = served.calls(count.pending) + served.check_calls(sample_size(count.total))
        calls += served.ready_calls
        lines.append(
            CostLine(
                f"{count.stage} (requests, with the scoring checks' and a ready call)",
                served.name,
                calls,
                calls * price,
            )
        )
    return lines
