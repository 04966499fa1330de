"""The scoring checks of the Hugging Face process reward models (docs/prm-models.md, "Scoring
checks"): the sample scored in the run's batches and each solution alone (batch invariance),
its markers' tokens (step markers), the steps read from a cut input (truncation) and the
shortest solutions alone again (determinism), judged by :mod:`rmaudit.backends.hf.scoring_checks`
and :mod:`rmaudit.backends.hf.prm_checks`."""

from __future__ import annotations

import time
from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

from rmaudit.backends.hf import steps
from rmaudit.backends.hf.scoring_checks import Noise
from rmaudit.components.process import Solution
from rmaudit.components.scoring_checks import ScoringCheck, ScoringChecks
from rmaudit.default_plugins.huggingface.checks import DETERMINISM_ITEMS
from rmaudit.default_plugins.huggingface.common import _max_length

#: a loaded Hugging Face PRM (process._HFProcessRewardModel, which imports this module)
HFProcessRewardModel = Any
#: what batch invariance and determinism compare, in their findings
STEP_SCORES = "step scores"


def _flat(scores: Sequence[Sequence[float]]) -> np.ndarray:
    return np.fromiter(chain.from_iterable(scores), dtype=float)


def _run_dtype(prm: HFProcessRewardModel) -> str:
    return str(next(prm.model.parameters()).dtype).removeprefix("torch.")


def batch_invariance_of(
    prm: HFProcessRewardModel, solutions: Sequence[Solution], batched: Sequence[Sequence[float]]
) -> ScoringCheck:
    """The batch invariance check of ``solutions`` whose step scores in the run's batches
    were ``batched``: each solution scored alone, every step's score compared."""
    from rmaudit.backends.hf import scoring_checks

    alone, _ = prm._step_scores(solutions, alone=True)
    repeated = list(range(min(DETERMINISM_ITEMS, len(solutions))))
    again, _ = prm._step_scores([solutions[i] for i in repeated], alone=True)
    noise = _noise(prm, _flat([alone[i] for i in repeated]), _flat(again))
    return scoring_checks.batch_invariance(
        _flat(batched), _flat(alone), _run_dtype(prm), noise, prm.scorer.engine.limits.pad_multiple
    )


def _noise(prm: HFProcessRewardModel, first: np.ndarray, again: np.ndarray) -> Noise:
    """Two passes of the same solutions alone: how far their step scores differ, and what to
    do about it."""
    difference = float(np.max(np.abs(first - again))) if len(first) else 0.0
    cause, fix = "", None
    if difference and prm.options.deterministic:
        cause = (
            "two passes alone differ with deterministic = true already set: nondeterministic "
            "kernels on this device, or randomness in the model's own code"
        )
        fix = "none in the recipe: fix the model's code, or score on another device"
    elif difference:
        cause = (
            "two passes alone differ: nondeterministic kernels, or randomness in the model's code"
        )
        fix = "set deterministic = true (--deterministic): deterministic kernels, each input alone"
    return Noise(len(first), difference, cause, fix, unit=STEP_SCORES)


def _markers(prm: HFProcessRewardModel, encoded: Sequence[steps.EncodedSolution]) -> ScoringCheck:
    from rmaudit.backends.hf.prm_checks import step_markers

    example = None
    reads: list[steps.MarkerRead] = []
    for solution in encoded:
        found = steps.marker_reads(solution, prm.accepted)
        for step, read in enumerate(found):
            if read != "whole" and example is None:
                first, last = solution.marker_tokens[step]
                tokens = prm.tokenizer.convert_ids_to_tokens(solution.ids[first : last + 1])
                example = f"step {step + 1} of a solution: {read}, read as tokens {tokens}"
        reads.extend(found)
    return step_markers(reads, option=prm.marker_option, marker=prm.layout.marker, example=example)


def run_checks(prm: HFProcessRewardModel, sample: Sequence[Solution]) -> ScoringChecks:
    """Every check of ``prm`` (loaded) on ``sample``; the input shown is the shortest
    solution's, as the model reads it.  The sample's step scores in the run's batches are
    the run's own: it keeps them and does not score those solutions again."""
    from rmaudit.backends.hf import scoring_checks
    from rmaudit.backends.hf.prm_checks import step_truncation

    started = time.perf_counter()
    encoded = prm.encode_many(sample)
    batched = prm.score_counted(sample)
    alone, _ = prm._step_scores(sample, alone=True)
    shortest = sorted(range(len(sample)), key=lambda i: (len(encoded[i].ids), i))
    repeated = shortest[:DETERMINISM_ITEMS]
    again, _ = prm._step_scores([sample[i] for i in repeated], alone=True)
    noise = _noise(prm, _flat([alone[i] for i in repeated]), _flat(again))
    checks = (
        scoring_checks.batch_invariance(
            _flat(batched),
            _flat(alone),
            _run_dtype(prm),
            noise,
            prm.scorer.engine.limits.pad_multiple,
        ),
        _markers(prm, encoded),
        step_truncation(
            [len(e.ids) for e in encoded],
            [len(e.past(prm.max_length)) for e in encoded],
            steps=sum(len(s.steps) for s in sample),
            max_length=prm.max_length,
            position_limit=_max_length(None, prm.tokenizer, prm.model.config),
        ),
        scoring_checks.determinism(noise),
    )
    shown = prm.tokenizer.decode(encoded[shortest[0]].ids, skip_special_tokens=False)
    return ScoringChecks(
        "",
        len(sample),
        checks,
        rendered_input=shown,
        seconds=time.perf_counter() - started,
        scores=tuple(tuple(scores) for scores in batched),
        settings=prm.scoring_settings(),
        unit="solutions",
    )
