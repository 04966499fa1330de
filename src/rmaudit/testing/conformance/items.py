"""Conformance checks of the components that map items: oracles, reward models, reference
policies and shift perturbers (the contracts are listed in :mod:`rmaudit.testing.conformance`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from rmaudit.components import (
    VERDICTS,
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
from rmaudit.errors import BadInput
from rmaudit.testing.samples import sample_prompts, sample_responses, sample_texts

from ._common import ConformanceError, describe, instance


def check_oracle(
    oracle: Oracle | type[Oracle],
    pairs: Sequence[tuple[Prompt, Response]] | None = None,
    *,
    rtol: float = 1e-6,
    atol: float = 1e-9,
) -> None:
    """Determinism, batch-size invariance and empty-response handling of an oracle's ``label``."""

    def run(component: Oracle, batch):
        labels = component.label(batch)
        for item in labels:
            if not isinstance(item, OracleLabel) or not math.isfinite(item.score):
                raise ConformanceError(
                    f"{describe(component)}: label must return OracleLabels with "
                    f"finite scores, got {item!r}"
                )
        return [(item.score, *item.samples) for item in labels]

    _check_item_component(
        oracle,
        pairs if pairs is not None else _sample_pairs(),
        run,
        _with_empty_response,
        rtol=rtol,
        atol=atol,
    )


def check_reward_model(
    model: RewardModel | type[RewardModel],
    pairs: Sequence[tuple[Prompt, Response]] | None = None,
    *,
    rtol: float = 1e-6,
    atol: float = 1e-9,
) -> None:
    """Determinism, batch-size invariance and empty-response handling of an RM's ``score``
    (of a pairwise judge's ``judge_pairs``: its verdicts on the sample pairs in both orders)."""
    if instance(model).judges_pairs():
        _check_pair_judge(model, pairs if pairs is not None else _sample_pairs(), rtol, atol)
        return

    def run(component: RewardModel, batch):
        scores = [float(s) for s in component.score(batch)]
        if not all(math.isfinite(s) for s in scores):
            raise ConformanceError(
                f"{describe(component)}: score must return finite numbers, got {scores}"
            )
        return [(s,) for s in scores]

    _check_item_component(
        model,
        pairs if pairs is not None else _sample_pairs(),
        run,
        _with_empty_response,
        rtol=rtol,
        atol=atol,
    )


def _check_pair_judge(model, pairs, rtol: float, atol: float) -> None:
    """A pairwise judge: each of two consecutive responses of a prompt shown in both orders."""
    shown = [
        PairShown(prompt, a, b)
        for (prompt, a), (_, b) in zip(pairs[::2], pairs[1::2], strict=False)
        if a.prompt_id == b.prompt_id
        for a, b in ((a, b), (b, a))
    ]

    def run(component: RewardModel, batch):
        verdicts = component.judge_pairs(batch)
        for v in verdicts:
            if v.verdict not in VERDICTS or not (
                math.isnan(v.p_first) if v.verdict == "unparsed" else 0 <= v.p_first <= 1
            ):
                raise ConformanceError(
                    f"{describe(component)}: judge_pairs must return verdicts in {VERDICTS} "
                    f"with P(first) in [0, 1] (NaN when unparsed), got {v!r}"
                )
        return [
            (v.verdict, repr(v.p_first) if math.isnan(v.p_first) else v.p_first) for v in verdicts
        ]

    def with_empty(items):
        first = items[0]
        return [PairShown(first.prompt, first.first, replace(first.second, text=""))]

    _check_item_component(model, shown, run, with_empty, rtol=rtol, atol=atol)


def check_reference_policy(
    policy: ReferencePolicy | type[ReferencePolicy],
    requests: Sequence[tuple[Prompt, int]] | None = None,
) -> None:
    """Determinism, batch-size invariance and empty-prompt handling of a policy's ``generate``."""

    def run(component: ReferencePolicy, batch):
        generations = component.generate(batch)
        for g in generations:
            if not isinstance(getattr(g, "text", None), str):
                raise ConformanceError(
                    f"{describe(component)}: generate must return Generations with text, got {g!r}"
                )
        return [(g.text, repr(sorted(g.meta.items()))) for g in generations]

    if requests is None:
        requests = [(p, i) for p in sample_prompts() for i in range(3)]
    _check_item_component(policy, requests, run, _with_empty_prompt, rtol=0.0, atol=0.0)


def check_shift_perturber(
    perturber: ShiftPerturber | type[ShiftPerturber],
    texts: Sequence[str] | None = None,
    *,
    seed: int = 0,
) -> None:
    """Determinism under a seed, no hidden state across calls, and empty-text handling."""

    def run(component: ShiftPerturber, batch):
        out = [component.perturb(text, seed=seed) for text in batch]
        if not all(isinstance(text, str) for text in out):
            raise ConformanceError(f"{describe(component)}: perturb must return str, got {out!r}")
        return [(text,) for text in out]

    texts = list(texts) if texts is not None else sample_texts()
    _check_item_component(perturber, texts, run, lambda items: [""], rtol=0.0, atol=0.0)


def _check_item_component(
    component, items: Sequence, run, with_empty, *, rtol: float, atol: float
) -> None:
    first = instance(component)
    label = describe(first)
    items = list(items)
    all_at_once = _run_batch(run, first, items, label)

    def compare(check: str, got: list) -> None:
        for item_index, (a, b) in enumerate(zip(all_at_once, got, strict=True)):
            if not _close(a, b, rtol, atol):
                raise ConformanceError(
                    f"{label}: item {item_index} changed under {check}: expected {a!r}, got {b!r}"
                )

    fresh = type(first)(first.options)
    compare(
        "determinism: a fresh instance with the same options", _run_batch(run, fresh, items, label)
    )
    compare(
        "batch size: one item per call",
        [_run_batch(run, first, [item], label)[0] for item in items],
    )
    compare("batch order: the batch reversed", _run_batch(run, first, items[::-1], label)[::-1])
    with ThreadPoolExecutor(max_workers=1) as worker:  # where the local executor calls it
        try:
            in_thread = worker.submit(_run_batch, run, first, items, label).result()
        except ConformanceError:
            raise
        except Exception as error:
            raise ConformanceError(
                f"{label}: failed when called from a worker thread, as the "
                f"local executor calls it: {type(error).__name__}: {error}"
            ) from None
    compare("thread: called from a worker thread", in_thread)
    preferred = first.preferred_batch_items()
    if preferred is not None and not (isinstance(preferred, int) and preferred >= 1):
        raise ConformanceError(
            f"{label}: preferred_batch_items() should be None or an int >= 1, got {preferred!r}"
        )
    try:
        run(first, with_empty(items))
    except BadInput:
        pass  # a clear, located refusal is fine
    except ConformanceError:
        raise
    except Exception as error:
        raise ConformanceError(
            f"{label}: an empty text should give a valid output or raise "
            f"rmaudit.errors.BadInput, got {type(error).__name__}: {error}"
        ) from None


def _run_batch(run, component, batch, label) -> list:
    out = run(component, batch)
    if len(out) != len(batch):
        raise ConformanceError(
            f"{label}: expected one output per input ({len(batch)}), got {len(out)}"
        )
    return out


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


def _with_empty_response(pairs):
    prompt, response = pairs[0]
    return [(prompt, Response(response_id("conformance-empty", prompt.id, 0), prompt.id, 0, ""))]


def _with_empty_prompt(requests):
    prompt, _ = requests[0]
    return [(Prompt(prompt_id(""), "", dict(prompt.meta)), 0)]
