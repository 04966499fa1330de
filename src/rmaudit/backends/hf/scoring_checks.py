"""The scoring checks of a loaded Hugging Face reward model, from its scores and inputs on a
sample of a run's items (docs/real-models.md, "Scoring checks").

Each check turns measured figures into pass / warn / fail, and a warn or fail names the recipe
option and value that fixes it.  They answer the incidents that moved public reward-model
numbers: scores that depend on the batch (reward-bench issue #137), a BOS token written twice
(#164), a missing EOS (PR #94), a length limit that cuts the judged text (#65, #35) and a
precision or attention implementation that reorders scores (#169).  No torch here: the
component scores the sample, this module judges the numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
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
#: Shares of item pairs whose order the run's dtype flips against float32: warn, fail.
WARN_FLIPS, FAIL_FLIPS = 0.01, 0.05
#: Share of sampled items whose response is cut at which truncation fails rather than warns.
FAIL_CUT = 0.10


@dataclass(frozen=True)
class RenderedInput:
    """One item as the model reads it: ``ids`` as scored (after truncation), ``full`` before,
    the response's tokens ``full[response_start:response_end]`` and what the template writes
    after them (``closing``: token ids)."""

    text: str | None  # the rendered conversation; None for a text pair
    ids: list[int]
    full: list[int]
    response_start: int
    response_end: int

    @property
    def closing(self) -> list[int]:
        return self.full[self.response_end :]

    def response_whole(self) -> bool:
        """Whether every token of the response is among the scored ones: a cut on the left
        or right keeps a window of ``full``; any other (a text pair's tokenizer truncation,
        its special tokens kept) keeps the response whole only with all that follows it."""
        kept, total = len(self.ids), len(self.full)
        if kept == total:
            return True
        if self.ids == self.full[total - kept :]:
            return self.response_start >= total - kept
        if self.ids == self.full[:kept]:
            return self.response_end <= kept
        tail = self.full[self.response_start :]
        return len(tail) <= kept and self.ids[kept - len(tail) :] == tail


def _spread(scores: np.ndarray) -> float:
    return float(np.std(scores, ddof=1)) if len(scores) > 1 else 0.0


def rounding_step(scores: np.ndarray, dtype: str) -> float:
    return ROUNDING.get(dtype, ROUNDING["float32"]) * max(1.0, float(np.max(np.abs(scores))))


def batch_invariance(batched: np.ndarray, alone: np.ndarray, dtype: str) -> ScoringCheck:
    """Items scored inside the run's batches against alone (reward-bench #137)."""
    diff = float(np.max(np.abs(batched - alone))) if len(alone) else 0.0
    spread, step = _spread(alone), rounding_step(alone, dtype)
    figures = {
        "items compared": len(alone),
        "largest difference": diff,
        "score spread (SD)": spread,
        "rounding step": step,
        "share of spread": diff / spread if spread else 0.0,
    }
    if spread and diff > FAIL_SPREAD * spread:
        return ScoringCheck(
            "batch invariance",
            "fail",
            f"scores move with the batch by up to {diff:.3g}, {diff / spread:.0%} of their "
            f"spread across items (the model reads padding, or ignores the mask)",
            figures,
            "set batch_size = 1 and pad_to_multiple = 1 (no padding: this model's scores "
            "change with it)",
        )
    if diff > ROUNDING_STEPS.get(dtype, HALF_ROUNDING_STEPS) * step:
        return ScoringCheck(
            "batch invariance",
            "warn",
            f"scores move with the batch by up to {diff:.3g} ({dtype} rounds at {step:.2g})",
            figures,
            "set deterministic = true (each input scored alone, in a batch of its own)",
        )
    return ScoringCheck(
        "batch invariance",
        "pass",
        f"batched = alone to {diff:.2g} on {len(alone)} items ({dtype} rounding step {step:.2g})",
        figures,
    )


def template(
    rendered: Sequence[RenderedInput],
    *,
    source: str,
    bos_id: int | None,
    closing_ids: set[int],
) -> ScoringCheck:
    """Which template rendered the inputs, BOS twice at the start (reward-bench #164), and
    an EOS or end-of-turn token after the response (PR #94)."""
    doubled = sum(
        1
        for item in rendered
        if bos_id is not None and len(item.full) > 1 and item.full[0] == item.full[1] == bos_id
    )
    unclosed = sum(1 for item in rendered if not closing_ids.intersection(item.closing))
    figures = {"template": source, "BOS twice": doubled, "no EOS after the response": unclosed}
    if doubled:
        return ScoringCheck(
            "template",
            "fail",
            f"{source}: BOS twice at the start of {doubled} of {len(rendered)} inputs",
            figures,
            "set fallback_chat_template = a template that writes {{ bos_token }} once, and "
            "remove the tokenizer's chat_template (rmaudit adds no special tokens itself)",
        )
    if unclosed:
        return ScoringCheck(
            "template",
            "warn",
            f"{source}: no EOS or end-of-turn token after the response in {unclosed} of "
            f"{len(rendered)} inputs",
            figures,
            "set fallback_chat_template = the training template, closing each turn with "
            "{{ eos_token }} (applies where the tokenizer has none)",
        )
    return ScoringCheck(
        "template",
        "pass",
        f"{source}; BOS at most once, an EOS or end-of-turn token after the response",
        figures,
    )


def truncation(
    rendered: Sequence[RenderedInput],
    *,
    max_length: int | None,
    side: str,
    position_limit: int | None,
) -> ScoringCheck:
    """How many items exceed ``max_length``, whether the cut reached the response (the
    judged text) or only the prompt (reward-bench #65, #35), and the setting that keeps every
    response whole where the model's position limit allows."""
    over = [item for item in rendered if len(item.ids) < len(item.full)]
    cut = [item for item in over if not item.response_whole()]
    longest = max((len(item.full) for item in rendered), default=0)
    figures = {
        "max_length": max_length,
        "truncation side": side,
        "inputs over max_length": len(over),
        "responses cut": len(cut),
        "longest input": longest,
        "position limit": position_limit,
    }
    if not cut:
        where = f", {len(over)} lost prompt tokens only" if over else ""
        return ScoringCheck(
            "truncation",
            "pass",
            f"every response whole (max_length {max_length}){where}",
            figures,
        )
    status: Status = "fail" if len(cut) >= FAIL_CUT * len(rendered) else "warn"
    return ScoringCheck(
        "truncation",
        status,
        f"max_length {max_length} cuts the response of {len(cut)} of {len(rendered)} inputs "
        f"(truncation side {side})",
        figures,
        _keep_responses(rendered, side, position_limit),
    )


def _keep_responses(rendered: Sequence[RenderedInput], side: str, limit: int | None) -> str:
    longest = max(len(item.full) for item in rendered)
    if limit is None or longest <= limit:
        return f"set max_length = {longest if limit is None else limit}"
    # from the left a cut keeps the response and what follows it
    needed = max(len(item.full) - item.response_start for item in rendered)
    if needed <= limit:
        return f'set truncation_side = "left" and max_length = {limit}'
    return (
        f"none keeps every response whole: a response runs to {needed} tokens, over the "
        f"model's limit of {limit}; score shorter responses"
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
    on the sample: pairs whose order flips and the largest difference (reward-bench #169)."""
    reference, tested = (run, other) if run_dtype == "float32" else (other, run)
    flips, pairs = _order_flips(tested, reference)
    diff = float(np.max(np.abs(tested - reference))) if len(run) else 0.0
    share = flips / pairs if pairs else 0.0
    figures = {
        "run dtype": run_dtype,
        "compared with": other_dtype,
        "pairs flipped": flips,
        "pairs compared": pairs,
        "largest difference": diff,
        "attention": attention,
    }
    if run_dtype == "float32":
        return ScoringCheck(
            "numerics",
            "pass",
            f"float32 ({attention} attention); {other_dtype} would flip {flips} of {pairs} "
            f"pairs (largest difference {diff:.3g})",
            figures,
        )
    status: Status = "fail" if share > FAIL_FLIPS else "warn" if share > WARN_FLIPS else "pass"
    finding = (
        f"{run_dtype} ({attention} attention) against float32: {flips} of {pairs} pairs "
        f"flip order, largest difference {diff:.3g}"
    )
    fix = None if status == "pass" else 'set dtype = "float32"'
    return ScoringCheck("numerics", status, finding, figures, fix)


def determinism(first: np.ndarray, second: np.ndarray) -> ScoringCheck:
    """The sample scored twice the same way gives the same scores, bit for bit."""
    diff = float(np.max(np.abs(first - second))) if len(first) else 0.0
    figures = {"items scored twice": len(first), "largest difference": diff}
    if diff == 0.0:
        return ScoringCheck(
            "determinism", "pass", f"two passes of {len(first)} items identical", figures
        )
    return ScoringCheck(
        "determinism",
        "warn",
        f"two passes of {len(first)} items differ by up to {diff:.3g}",
        figures,
        "set deterministic = true (deterministic kernels, each input alone)",
    )
