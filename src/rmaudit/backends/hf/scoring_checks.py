"""The scoring checks' findings on a loaded Hugging Face reward model's scores, from a sample of
a run's items scored the ways they compare (docs/real-models.md, "Scoring checks"); the checks
of its inputs (template, special tokens, truncation) are :mod:`.input_checks`.

Each check turns measured figures into pass / warn / fail, and a warn or fail names its
measured cause and the recipe option and ``rmaudit audit`` flag that fix it.  They answer
the incidents that moved public reward-model numbers: scores that depend on the batch
(reward-bench issue #137) and a precision or attention implementation that reorders scores
(#169).  No torch here: the component scores the sample, this module judges the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rmaudit.components.scoring_checks import ScoringCheck, Status

#: Unit roundoff of each dtype (2^-mantissa bits): a score's rounding step is this × its size.
ROUNDING = {"float32": 2.0**-23, "bfloat16": 2.0**-7, "float16": 2.0**-10, "float64": 2.0**-52}
#: Batch differences within this many rounding steps of the largest score are rounding (a
#: float32 score carries the rounding of many operations; a half-precision one is dominated
#: by the last few).
ROUNDING_STEPS = {"float32": 64, "float64": 64}
HALF_ROUNDING_STEPS = 4
#: Batch differences above this share of the scores' spread across items: scores move with
#: the batch as much as between items, fail.
FAIL_SPREAD = 0.10
#: Batch differences up to this many times the largest difference between two passes of the
#: same items alone are the model's own noise, not the batch: the largest of the sample's
#: padded rows' differences against the largest of the determinism items' (fewer of them).
NOISE_FACTOR = 4.0
#: Shares of item pairs whose order the run's dtype flips against float32: warn, fail.
WARN_FLIPS, FAIL_FLIPS = 0.01, 0.05


def spread(scores: np.ndarray) -> float:
    return float(np.std(scores, ddof=1)) if len(scores) > 1 else 0.0


def rounding_step(scores: np.ndarray, dtype: str) -> float:
    return ROUNDING.get(dtype, ROUNDING["float32"]) * max(1.0, float(np.max(np.abs(scores))))


def _rounding_steps(dtype: str) -> int:
    return ROUNDING_STEPS.get(dtype, HALF_ROUNDING_STEPS)


@dataclass(frozen=True)
class Noise:
    """Two passes of the same items alone, the same way: their largest difference, and (where
    they differ) its measured ``cause`` and the ``fix`` that was checked to remove it.
    ``unit`` names the scores compared, in the findings of both checks the passes feed
    (batch invariance, determinism): a reward model's items, a PRM's step scores."""

    items: int
    difference: float
    cause: str = ""
    fix: str | None = None
    unit: str = "items"


def batch_invariance(
    batched: np.ndarray, alone: np.ndarray, dtype: str, noise: Noise, pad_multiple: int = 1
) -> ScoringCheck:
    """Items scored inside the run's batches against alone (reward-bench #137), the gap's
    cause told apart: within the dtype's rounding (pass), within the model's own noise
    between two passes alone (its noise, not the batch), above a tenth of the scores' spread
    (the model reads padding or ignores the mask), else the batch's shape."""
    diff = float(np.max(np.abs(batched - alone))) if len(alone) else 0.0
    sd, step = spread(alone), rounding_step(alone, dtype)
    figures = {
        f"{noise.unit} compared": len(alone),
        "largest difference": diff,
        "score spread (SD)": sd,
        "rounding step": step,
        "difference in rounding steps": diff / step,
        "share of spread": diff / sd if sd else 0.0,
        "difference between two passes alone": noise.difference,
    }
    moved = f"scores move with the batch by up to {diff:.3g}"
    share = f", {diff / sd:.0%} of their spread across {noise.unit}" if sd else ""
    if diff <= _rounding_steps(dtype) * step:
        return ScoringCheck(
            "batch invariance",
            "pass",
            f"batched = alone to {diff:.2g} on {len(alone)} {noise.unit}, {diff / step:.2g} "
            f"{dtype} rounding steps ({step:.2g})",
            figures,
        )
    status: Status = "fail" if sd and diff > FAIL_SPREAD * sd else "warn"
    if noise.difference > 0 and diff <= NOISE_FACTOR * noise.difference:
        return ScoringCheck(
            "batch invariance",
            status,
            f"{moved}{share}, but two passes alone differ by up to {noise.difference:.3g}: "
            f"the model's own noise, not the batch ({noise.cause})",
            figures,
            noise.fix,
        )
    if status == "fail":
        unpadded = " and pad_to_multiple = 1" if pad_multiple > 1 else ""
        flags = " --pad-to-multiple 1" if pad_multiple > 1 else ""
        return ScoringCheck(
            "batch invariance",
            "fail",
            f"{moved}{share}, above the {noise.difference:.2g} between two passes alone: the "
            f"model reads padding, or ignores the mask",
            figures,
            f"set batch_size = 1{unpadded} (--batch-size 1{flags}): each input alone, unpadded",
        )
    return ScoringCheck(
        "batch invariance",
        "warn",
        f"{moved}, {diff / step:.0f} {dtype} rounding steps ({step:.2g}), above the "
        f"{noise.difference:.2g} between two passes alone: the batch's shape changes the "
        f"arithmetic",
        figures,
        "set deterministic = true (--deterministic): each input alone, deterministic kernels",
    )


def _order_flips(run: np.ndarray, reference: np.ndarray) -> tuple[int, int]:
    """(pairs of items whose order differs, pairs ordered in ``reference``)."""
    upper = np.triu_indices(len(run), 1)
    ordered = np.sign(reference[:, None] - reference[None, :])[upper]
    observed = np.sign(run[:, None] - run[None, :])[upper]
    counted = ordered != 0
    return int(np.sum(observed[counted] != ordered[counted])), int(np.sum(counted))


def numerics(
    run: np.ndarray,
    other: np.ndarray,
    *,
    run_dtype: str,
    other_dtype: str,
    attention: str,
) -> ScoringCheck:
    """The run's dtype against float32 — or, for a float32 run, what bfloat16 would change —
    on the same items: pairs whose order flips and the largest difference (reward-bench #169).
    A float32 run passes (its own scores are float32); its finding says whether bfloat16
    would reorder the model's scores."""
    reference, tested = (run, other) if run_dtype == "float32" else (other, run)
    flips, pairs = _order_flips(tested, reference)
    diff = float(np.max(np.abs(tested - reference))) if len(run) else 0.0
    share = flips / pairs if pairs else 0.0
    figures = {
        "run dtype": run_dtype,
        "compared with": other_dtype,
        "items compared": len(run),
        "pairs flipped": flips,
        "pairs compared": pairs,
        "share flipped": share,
        "largest difference": diff,
        "attention": attention,
    }
    status: Status = "fail" if share > FAIL_FLIPS else "warn" if share > WARN_FLIPS else "pass"
    if run_dtype == "float32":
        advice = {"fail": ": keep this model in float32", "warn": ": float32 is safer"}
        return ScoringCheck(
            "numerics",
            "pass",
            f"float32 ({attention} attention); {other_dtype} would flip {flips} of {pairs} "
            f"pairs ({share:.0%}; largest difference {diff:.3g}){advice.get(status, '')}",
            figures,
        )
    finding = (
        f"{run_dtype} ({attention} attention) against float32: {flips} of {pairs} pairs "
        f"flip order ({share:.0%}), largest difference {diff:.3g}"
    )
    fix = None if status == "pass" else 'set dtype = "float32" (--dtype float32)'
    return ScoringCheck("numerics", status, finding, figures, fix)


def determinism(noise: Noise) -> ScoringCheck:
    """The same items scored twice alone, the same way, give the same scores, bit for bit;
    where not, the measured cause and a fix checked to work."""
    figures = {f"{noise.unit} scored twice": noise.items, "largest difference": noise.difference}
    if noise.difference == 0.0:
        return ScoringCheck(
            "determinism",
            "pass",
            f"two passes of {noise.items} {noise.unit} identical",
            figures,
        )
    return ScoringCheck(
        "determinism",
        "warn",
        f"two passes of {noise.items} {noise.unit} differ by up to {noise.difference:.3g}: "
        f"{noise.cause}",
        {**figures, "cause": noise.cause},
        noise.fix,
    )


def forward(path: str, own: np.ndarray | None, pooled: np.ndarray, dtype: str) -> ScoringCheck:
    """Whether the scores come from the model's own forward; where rmaudit pools through its
    own path instead (``path``), that path's scores against the model's forward (``own``) on
    the same items alone."""
    if own is None:
        return ScoringCheck("forward", "pass", f"scores from {path}", {"path": path})
    diff = float(np.max(np.abs(own - pooled))) if len(own) else 0.0
    step = rounding_step(own, dtype)
    figures = {"path": path, "items compared": len(own), "largest difference": diff}
    if diff <= _rounding_steps(dtype) * step:
        return ScoringCheck(
            "forward",
            "pass",
            f"rmaudit bypasses the model's forward ({path}); the two agree to {diff:.2g} on "
            f"{len(own)} items",
            figures,
        )
    return ScoringCheck(
        "forward",
        "fail",
        f"rmaudit bypasses the model's forward ({path}), and differs from it by up to "
        f"{diff:.3g} on {len(own)} items",
        figures,
        "none in the recipe: rmaudit's path does not reproduce this model's forward "
        "(report it with the model's id)",
    )
