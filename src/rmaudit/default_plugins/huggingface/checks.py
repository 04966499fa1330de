"""The scoring checks of the Hugging Face reward models (docs/real-models.md, "Scoring
checks"): the sample scored the ways the checks compare — in the run's batches (scores the run
keeps), alone where its batch padded it, a few short items alone again, some in another
dtype, some through the model's own forward where rmaudit bypasses it — and its inputs
rendered, handed to :mod:`rmaudit.backends.hf.scoring_checks` and
:mod:`rmaudit.backends.hf.input_checks` to judge, with the causes and fixes
:mod:`.diagnosis` measures; and the batch invariance check alone, on the run's first scores,
for a run that skipped them."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rmaudit.backends.hf.batching import round_up
from rmaudit.components.scoring_checks import ScoringCheck, ScoringChecks
from rmaudit.default_plugins.huggingface import diagnosis
from rmaudit.default_plugins.huggingface.diagnosis import scores_alone
from rmaudit.default_plugins.huggingface.rendering import (
    PromptResponse,
    closing_ids,
    rendered_inputs,
)

if TYPE_CHECKING:
    from rmaudit.backends.hf.input_checks import RenderedInput, TemplateFix

#: a loaded Hugging Face RM (reward_model._HFRewardModel, which imports this module)
HFRewardModel = Any

#: Items scored twice alone for determinism: a nondeterministic model or kernel moves every
#: score, so a few items show it, and the shortest cost least.
DETERMINISM_ITEMS = 4
#: Items (at least; half the sample where that is more) scored in the other dtype for numerics
#: — float32 for a half-precision run, bfloat16 for a float32 one (what it would change):
#: every item of the smallest sample but its longest, C(15, 2) = 105 pairs, C(32, 2) = 496 on
#: a sample of 64.  Enough to be believed: a model that flips 5 % of pairs (the fail
#: threshold) flips about 5 of 105, where 6 pairs (the 4 items of earlier versions) showed
#: none of a 15 % flip rate; tests/hf/test_scoring_checks.py checks the float32 figure
#: against a bfloat16 run of the same model.
NUMERICS_ITEMS = 16
#: Padded tokens a batch of the checks computes, at most, per token of its rows: the run's
#: length-sorted batches pad little, a sample's spread of lengths would pad far more.
PADDED_PER_TOKEN = 1.5


@dataclass(frozen=True)
class Passes:
    """Which of the sample's items (by index) each pass scores: ``batches`` every item, as
    the run batches them (the scores the run keeps); ``padded`` the rows that read padding
    there, scored alone for batch invariance; ``repeated`` scored alone twice
    (determinism); ``compared`` scored alone in the other dtype (numerics), against their
    scores in the run's dtype alone where a pass has them, else in the run's batches (a row
    that reads no padding there scores as alone)."""

    batches: list[list[int]]
    padded: list[int]
    repeated: list[int]
    compared: list[int]

    @property
    def alone(self) -> list[int]:
        """Every item scored alone in the run's dtype (once: determinism repeats some)."""
        return sorted({*self.padded, *self.repeated})


def passes_over(sizes: Sequence[int], *, pad_multiple: int = 1, packed: bool = False) -> Passes:
    """The passes over a sample of items of ``sizes`` tokens (``pad_multiple``, ``packed``:
    the run's batching).  The longest item is a batch of
    its own: the run batches it with items of its own length, and it would pad any of the
    sample's.  A row as long as its batch's width (its longest row's, rounded up to
    ``pad_multiple``) reads no padding, so what batch invariance catches (a pooling that
    reads a pad token, a mask ignored, padding on the wrong side) cannot show on it: only
    the rows that read padding are scored alone (every row, packed: a pack moves them all).
    The longest item is left out of every extra pass (it costs the most alone);
    determinism takes the shortest items, numerics items spread evenly over the others'
    lengths (as long as the sample's on average)."""
    by_length = sorted(range(len(sizes)), key=lambda i: (sizes[i], i))
    rest = by_length[:-1] if len(by_length) > 2 else by_length
    batches = [by_length[-1:], *_neighbour_batches(by_length[:-1], sizes)] if sizes else []
    width = {
        i: round_up(max(sizes[j] for j in batch), pad_multiple) for batch in batches for i in batch
    }
    padded = sorted(i for i in rest if packed or sizes[i] < width[i]) or sorted(rest)
    repeated = sorted(rest[:DETERMINISM_ITEMS])
    count = min(max(NUMERICS_ITEMS, len(sizes) // 2), len(rest))
    picks = np.linspace(0, len(rest) - 1, count).round().astype(int)
    return Passes(batches, padded, repeated, sorted(rest[int(j)] for j in picks))


def _neighbour_batches(chosen: Sequence[int], sizes: Sequence[int]) -> list[list[int]]:
    """``chosen`` cut, longest first, into runs of neighbouring lengths each padding at most
    PADDED_PER_TOKEN times its tokens (the run's batch size still cuts each run)."""
    batches: list[list[int]] = []
    for i in sorted(chosen, key=lambda i: (-sizes[i], i)):
        current = batches[-1] if batches else []
        grown = [*current, i]
        if current and len(grown) * sizes[current[0]] <= PADDED_PER_TOKEN * sum(
            sizes[j] for j in grown
        ):
            current.append(i)
        else:
            batches.append([i])
    return batches


def _run_dtype(rm: HFRewardModel) -> str:
    return str(next(rm.scorers[0].model.parameters()).dtype).removeprefix("torch.")


def batch_invariance_of(
    rm: HFRewardModel, pairs: Sequence[PromptResponse], batched: Sequence[float]
) -> ScoringCheck:
    """The batch invariance check of ``pairs`` whose scores in the run's batches were
    ``batched``: each scored alone and judged as :func:`run_checks` judges its sample, its
    noise measured on the first few (a run whose checks were skipped measures its batch
    dependence so, after it)."""
    from rmaudit.backends.hf.scoring_checks import batch_invariance

    everything = list(range(len(pairs)))
    alone = scores_alone(rm, pairs, everything)
    repeated = everything[:DETERMINISM_ITEMS]
    noise = diagnosis.noise(rm, pairs, repeated, alone[repeated])
    limits = rm.scorers[0].engine.limits
    return batch_invariance(
        np.asarray(batched, dtype=float), alone, _run_dtype(rm), noise, limits.pad_multiple
    )


def run_checks(
    rm: HFRewardModel,
    sample: Sequence[PromptResponse],
    *,
    position_limit: int | None,
    tokenizer_limit: int | None,
) -> ScoringChecks:
    """Every check of ``rm`` (loaded) on ``sample``; the rendered input shown is the shortest
    item's; ``position_limit``: the most positions the model reads (its config's; None:
    unknown), ``tokenizer_limit``: its tokenizer's ``model_max_length``.

    The sample's scores in the run's batches are the run's own (``ScoringChecks.scores``: the
    run keeps them, so that pass costs only its batches' extra padding); the checks add the
    passes :func:`passes_over` lays out — the rows their batch padded alone, the shortest items
    alone again, some items in the other dtype — and, where a finding needs its cause told
    or its fix checked, the passes of :mod:`.diagnosis`."""
    from rmaudit.backends.hf import scoring_checks

    started = time.perf_counter()
    rendered = rendered_inputs(rm, sample)
    run_dtype = _run_dtype(rm)
    other_dtype = "bfloat16" if run_dtype == "float32" else "float32"
    limits = rm.scorers[0].engine.limits
    passes = passes_over(
        [len(item.ids) for item in rendered],
        pad_multiple=limits.pad_multiple,
        packed=limits.packed,
    )
    batched = np.empty(len(sample))
    for batch in passes.batches:
        batched[batch] = rm.score_counted([sample[i] for i in batch])
    alone = np.full(len(sample), np.nan)
    alone[passes.alone] = scores_alone(rm, sample, passes.alone)
    noise = diagnosis.noise(rm, sample, passes.repeated, alone[passes.repeated])
    with _in_dtype(rm, other_dtype):
        other = scores_alone(rm, sample, passes.compared)
    fixes = diagnosis.template_fixes(rm, sample, rendered)
    scorer = rm.scorers[0]
    own = rm.own_forward_scores([sample[i] for i in passes.repeated])
    checks = (
        scoring_checks.batch_invariance(
            batched[passes.padded], alone[passes.padded], run_dtype, noise, limits.pad_multiple
        ),
        scoring_checks.forward(
            scorer.path, None if own is None else np.array(own), alone[passes.repeated], run_dtype
        ),
        *_input_checks(
            rm,
            sample,
            rendered,
            fixes,
            passes.repeated,
            alone,
            batched,
            position_limit,
            tokenizer_limit,
        ),
        scoring_checks.numerics(
            np.where(np.isnan(alone), batched, alone)[passes.compared],
            other,
            run_dtype=run_dtype,
            other_dtype=other_dtype,
            attention=getattr(scorer.model.config, "_attn_implementation", None) or "default",
        ),
        scoring_checks.determinism(noise),
    )
    shortest = min(rendered, key=lambda item: len(item.full))
    return ScoringChecks(
        "",
        len(sample),
        checks,
        rendered_input=rm.tokenizer.decode(shortest.ids, skip_special_tokens=False),
        seconds=time.perf_counter() - started,
        scores=tuple(float(score) for score in batched),
        settings=rm.scoring_settings(),
    )


def _input_checks(
    rm: HFRewardModel,
    sample: Sequence[PromptResponse],
    rendered: Sequence[RenderedInput],
    fixes: dict[str, TemplateFix | None],
    repeated: list[int],
    alone: np.ndarray,
    batched: np.ndarray,
    position_limit: int | None,
    tokenizer_limit: int | None,
) -> tuple[ScoringCheck, ScoringCheck, ScoringCheck]:
    """The checks of the inputs as the model reads them: its chat template, its special
    tokens (a fix's effect measured on the ``repeated`` items), its truncation."""
    from rmaudit.backends.hf import input_checks, scoring_checks

    tokenizer = rm.tokenizer
    added = fixes.get("bos") or (fixes.get("closed") if _drops_eos(rm, rendered) else None)
    return (
        input_checks.template(
            rendered,
            source=rm.input_format,
            bos_id=tokenizer.bos_token_id,
            closing_ids=closing_ids(tokenizer),
            once=fixes.get("once"),
            closed=fixes.get("closed"),
        ),
        input_checks.special_tokens(
            rendered,
            bos_id=tokenizer.bos_token_id,
            eos_id=tokenizer.eos_token_id,
            moved=_moved(rm, sample, repeated, alone, added),
            spread=scoring_checks.spread(batched),
            fix=added,
        ),
        input_checks.truncation(
            rendered,
            max_length=rm.max_length,
            side=rm.options.truncation_side,
            position_limit=position_limit,
            tokenizer_limit=tokenizer_limit,
            tokenizer_side=tokenizer.init_kwargs.get("truncation_side", "right"),
        ),
    )


def _drops_eos(rm: HFRewardModel, rendered: Sequence[RenderedInput]) -> bool:
    eos = rm.tokenizer.eos_token_id
    return any(eos in item.added_back and eos not in item.closing for item in rendered)


def _moved(
    rm: HFRewardModel,
    sample: Sequence[PromptResponse],
    items: list[int],
    alone: np.ndarray,
    fix: TemplateFix | None,
) -> float | None:
    """How far ``items``' scores alone move under the ``fix``'s template (None: no fix)."""
    if fix is None or not items:
        return None
    with diagnosis.with_template(rm, fix.template):
        fixed = scores_alone(rm, sample, items)
    return float(np.max(np.abs(fixed - alone[items])))


@contextmanager
def _in_dtype(rm: HFRewardModel, dtype: str) -> Iterator[None]:
    """``rm`` scoring through copies of its models in ``dtype`` (its own are not touched)."""
    from rmaudit.backends.hf.runtime import DTYPES

    saved = rm.scorers
    rm.scorers = [scorer.in_dtype(DTYPES[dtype]) for scorer in saved]
    try:
        yield
    finally:
        rm.scorers = saved
