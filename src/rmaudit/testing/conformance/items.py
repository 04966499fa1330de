"""Conformance checks of the components that map items: oracles, reward models, reference
policies, shift perturbers and process reward models (the contracts are listed in
:mod:`rmaudit.testing.conformance`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from rmaudit.components import (
    VERDICTS,
    Component,
    Oracle,
    OracleLabel,
    PairShown,
    Prompt,
    ReferencePolicy,
    Response,
    RewardModel,
    ShiftPerturber,
)
from rmaudit.components.keys import prompt_id, response_id
from rmaudit.testing.samples import sample_prompts, sample_responses, sample_texts

from ._common import COMMON, Checks, ConformanceError, describe, instance, valid_or_refused


@dataclass(frozen=True)
class ItemSubject:
    """What the checks of a component that maps items share: the component, the items it is
    checked on, how one call runs (``run``: its outputs as comparable tuples, each checked
    valid), the items with one text emptied, and how close two runs' numbers must be."""

    component: Any
    items: list[Any]
    run: Callable[[Any, Sequence[Any]], list[tuple]]
    with_empty: Callable[[list[Any]], list[Any]]
    rtol: float = 0.0
    atol: float = 0.0

    def outputs(self, batch: Sequence[Any], component: Any = None) -> list[tuple]:
        out = self.run(self.component if component is None else component, batch)
        if len(out) != len(batch):
            raise ConformanceError(
                f"{describe(self.component)}: expected one output per input ({len(batch)}), "
                f"got {len(out)}"
            )
        return out

    def same(self, check: str, got: list[tuple]) -> None:
        """``got`` is the items' outputs in one batch, each within the tolerances."""
        for item_index, (a, b) in enumerate(zip(self.outputs(self.items), got, strict=True)):
            if not _close(a, b, self.rtol, self.atol):
                raise ConformanceError(
                    f"{describe(self.component)}: item {item_index} changed under {check}: "
                    f"expected {a!r}, got {b!r}"
                )


def _determinism(subject: ItemSubject) -> None:
    fresh = type(subject.component)(subject.component.options)
    subject.same(
        "determinism: a fresh instance with the same options",
        subject.outputs(subject.items, fresh),
    )


def _batch_size(subject: ItemSubject) -> None:
    alone = [subject.outputs([item])[0] for item in subject.items]
    subject.same("batch size: one item per call", alone)


def _batch_order(subject: ItemSubject) -> None:
    subject.same("batch order: the batch reversed", subject.outputs(subject.items[::-1])[::-1])


def _thread(subject: ItemSubject) -> None:
    with ThreadPoolExecutor(max_workers=1) as worker:  # where the local executor calls it
        try:
            in_thread = worker.submit(subject.outputs, subject.items).result()
        except ConformanceError:
            raise
        except Exception as error:
            raise ConformanceError(
                f"{describe(subject.component)}: failed when called from a worker thread, as "
                f"the local executor calls it: {type(error).__name__}: {error}"
            ) from None
    subject.same("thread: called from a worker thread", in_thread)


def _preferred_batch_items(subject: ItemSubject) -> None:
    preferred = subject.component.preferred_batch_items()
    if preferred is not None and not (isinstance(preferred, int) and preferred >= 1):
        raise ConformanceError(
            f"{describe(subject.component)}: preferred_batch_items() should be None or an int "
            f">= 1, got {preferred!r}"
        )


def _empty_text(subject: ItemSubject) -> None:
    batch = subject.with_empty(subject.items)
    valid_or_refused(
        describe(subject.component), "an empty text", lambda: subject.run(subject.component, batch)
    )


#: the checks of every component that maps items, by name
ITEM_CHECKS: Checks = {
    "determinism": _determinism,
    "batch_size": _batch_size,
    "batch_order": _batch_order,
    "thread": _thread,
    "preferred_batch_items": _preferred_batch_items,
    "empty_text": _empty_text,
}


def run_checks(component: Component, subject: Any, checks: Checks, only: str | None) -> None:
    """Every check of every kind on ``component``, then ``checks`` on ``subject``; ``only``:
    the name of the one check to run (:func:`~rmaudit.testing.conformance.check_names`)."""
    if only is not None and only not in {**COMMON, **checks}:
        raise ValueError(f"expected a check of {describe(component)}, got {only!r}")
    for name, check in COMMON.items():
        if only in (None, name):
            check(component)
    for name, check in checks.items():
        if only in (None, name):
            check(subject)


def check_oracle(
    oracle: Oracle | type[Oracle],
    pairs: Sequence[tuple[Prompt, Response]] | None = None,
    *,
    rtol: float = 1e-6,
    atol: float = 1e-9,
    only: str | None = None,
) -> None:
    """Determinism, batch-size invariance and empty-response handling of an oracle's ``label``."""

    def run(component: Oracle, batch: Sequence[tuple[Prompt, Response]]) -> list[tuple]:
        labels = component.label(batch)
        for item in labels:
            if not isinstance(item, OracleLabel) or not math.isfinite(item.score):
                raise ConformanceError(
                    f"{describe(component)}: label must return OracleLabels with "
                    f"finite scores, got {item!r}"
                )
        return [(item.score, *item.samples) for item in labels]

    chosen = list(pairs) if pairs is not None else _sample_pairs()
    subject = ItemSubject(instance(oracle), chosen, run, _with_empty_response, rtol, atol)
    run_checks(subject.component, subject, ITEM_CHECKS, only)


def check_reward_model(
    model: RewardModel | type[RewardModel],
    pairs: Sequence[tuple[Prompt, Response]] | None = None,
    *,
    rtol: float = 1e-6,
    atol: float = 1e-9,
    only: str | None = None,
) -> None:
    """Determinism, batch-size invariance and empty-response handling of an RM's ``score``
    (of a pairwise judge's ``judge_pairs``: its verdicts on the sample pairs in both orders)."""
    component = instance(model)
    chosen = list(pairs) if pairs is not None else _sample_pairs()
    subject = ItemSubject(component, chosen, _score, _with_empty_response, rtol, atol)
    if component.judges_pairs():
        shown = [
            PairShown(prompt, a, b)
            for (prompt, a), (_, b) in zip(chosen[::2], chosen[1::2], strict=False)
            if a.prompt_id == b.prompt_id
            for a, b in ((a, b), (b, a))
        ]
        subject = ItemSubject(component, shown, _judge, _with_empty_second, rtol, atol)
    run_checks(component, subject, ITEM_CHECKS, only)


def _score(component: RewardModel, batch: Sequence[tuple[Prompt, Response]]) -> list[tuple]:
    scores = [float(s) for s in component.score(batch)]
    if not all(math.isfinite(s) for s in scores):
        raise ConformanceError(
            f"{describe(component)}: score must return finite numbers, got {scores}"
        )
    return [(s,) for s in scores]


def _judge(component: RewardModel, batch: Sequence[PairShown]) -> list[tuple]:
    """A pairwise judge's verdicts, each of two consecutive responses of a prompt shown in
    both orders."""
    verdicts = component.judge_pairs(batch)
    for v in verdicts:
        if v.verdict not in VERDICTS or not (
            math.isnan(v.p_first) if v.verdict == "unparsed" else 0 <= v.p_first <= 1
        ):
            raise ConformanceError(
                f"{describe(component)}: judge_pairs must return verdicts in {VERDICTS} "
                f"with P(first) in [0, 1] (NaN when unparsed), got {v!r}"
            )
    return [(v.verdict, repr(v.p_first) if math.isnan(v.p_first) else v.p_first) for v in verdicts]


def _with_empty_second(items: list[PairShown]) -> list[PairShown]:
    first = items[0]
    return [PairShown(first.prompt, first.first, replace(first.second, text=""))]


def check_reference_policy(
    policy: ReferencePolicy | type[ReferencePolicy],
    requests: Sequence[tuple[Prompt, int]] | None = None,
    *,
    only: str | None = None,
) -> None:
    """Determinism, batch-size invariance and empty-prompt handling of a policy's ``generate``."""

    def run(component: ReferencePolicy, batch: Sequence[tuple[Prompt, int]]) -> list[tuple]:
        generations = component.generate(batch)
        for g in generations:
            if not isinstance(getattr(g, "text", None), str):
                raise ConformanceError(
                    f"{describe(component)}: generate must return Generations with text, got {g!r}"
                )
        return [(g.text, repr(sorted(g.meta.items()))) for g in generations]

    if requests is None:
        requests = [(p, i) for p in sample_prompts() for i in range(3)]
    subject = ItemSubject(instance(policy), list(requests), run, _with_empty_prompt)
    run_checks(subject.component, subject, ITEM_CHECKS, only)


def check_shift_perturber(
    perturber: ShiftPerturber | type[ShiftPerturber],
    texts: Sequence[str] | None = None,
    *,
    seed: int = 0,
    only: str | None = None,
) -> None:
    """Determinism under a seed, no hidden state across calls, and empty-text handling."""

    def run(component: ShiftPerturber, batch: Sequence[str]) -> list[tuple]:
        out = [component.perturb(text, seed=seed) for text in batch]
        if not all(isinstance(text, str) for text in out):
            raise ConformanceError(f"{describe(component)}: perturb must return str, got {out!r}")
        return [(text,) for text in out]

    chosen = list(texts) if texts is not None else sample_texts()
    subject = ItemSubject(instance(perturber), chosen, run, lambda items: [""])
    run_checks(subject.component, subject, ITEM_CHECKS, only)


def _close(a: tuple, b: tuple, rtol: float, atol: float) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, float) and isinstance(y, float):
            if not math.isclose(x, y, rel_tol=rtol, abs_tol=atol):
                return False
        elif x != y:
            return False
    return True


def _sample_pairs() -> list[tuple[Prompt, Response]]:
    prompts = sample_prompts()
    by_id = {p.id: p for p in prompts}
    return [(by_id[r.prompt_id], r) for r in sample_responses(prompts)]


def _with_empty_response(pairs: list[tuple[Prompt, Response]]) -> list[tuple[Prompt, Response]]:
    prompt, response = pairs[0]
    return [(prompt, Response(response_id("conformance-empty", prompt.id, 0), prompt.id, 0, ""))]


def _with_empty_prompt(requests: list[tuple[Prompt, int]]) -> list[tuple[Prompt, int]]:
    prompt, _ = requests[0]
    return [(Prompt(prompt_id(""), "", dict(prompt.meta)), 0)]
