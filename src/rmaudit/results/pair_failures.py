"""An RM's scores of a run's preference pairs, for the TUI's pair failures (no UI toolkit).

The margin of a pair is the RM's score of the chosen response minus its score of the
rejected one; the RM gets the pair right when the margin is positive (a tie is wrong, as
RewardBench counts it).  A pairwise judge's margin is its log-odds of P(chosen preferred), both
orders averaged, and it gets the pair right when its credit over both orders (1 chosen, ½ tie,
0 rejected) is above ½; its worst pairs are those it gets wrong in both orders, then by margin
(:attr:`ModelOnPair.worst_first`), which separates pairs whose probabilities were clipped.

In a shift sweep (RMs Under Distribution Shift, Sec. 4.2) each pair also has shifted copies at
every level p > 0 and target; a pair *flips* when the RM's verdict on a shifted copy differs
from its verdict on the unshifted pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rmaudit.benchmark.pairs.parsers import RM_BENCH_STYLES
from rmaudit.components import ShiftPerturber
from rmaudit.components.keys import pair_id, shifted_prompt_id, shifted_response_id
from rmaudit.components.vocabulary import shifts_prompt, shifts_responses
from rmaudit.results.judge_pairs import judge_pair_rows
from rmaudit.results.summary import RunSummary
from rmaudit.store import Store
from rmaudit.store.pair_records import StoredPair

RIGHT, WRONG, UNSCORED = "✓", "✗", "·"


@dataclass(frozen=True)
class ModelOnPair:
    """One pair of the run and one RM's scores of its two responses."""

    position: int  # the pair's place in the run's pair set
    pair_id: str
    subset: str
    prompt: str
    chosen: str
    rejected: str
    chosen_score: float
    rejected_score: float
    #: prompt, chosen and rejected ids and the subset as stored (what shifted copies derive from)
    ids: tuple[str, str, str, str | None]
    meta: dict
    #: a pairwise judge's credit over both orders (None: an RM's pair, which its margin
    #: decides; NaN: no verdict in either order)
    credit: float | None = None

    @property
    def styles(self) -> str:
        """RM-Bench's styles of the chosen and the rejected response, e.g. ``concise/markdown``
        (empty for other pairs)."""
        styles: list[Any] = [self.meta.get(f"{which}_style") for which in ("chosen", "rejected")]
        if not all(isinstance(s, int) and 0 <= s < len(RM_BENCH_STYLES) for s in styles):
            return ""
        return "/".join(RM_BENCH_STYLES[s].split()[-1] for s in styles)  # "markdown": detailed too

    @property
    def margin(self) -> float:
        return self.chosen_score - self.rejected_score

    @property
    def correct(self) -> bool:
        if self.credit is not None:
            return self.credit > 0.5
        return self.margin > 0

    @property
    def worst_first(self) -> tuple[float, float, int]:
        """The sort key of the pairs, worst first: a judge's credit over both orders (wrong in
        both orders first; no verdict at all with the ties), then the margin, then the
        position; an RM's margin alone decides."""
        if self.credit is None:
            credit = 0.0
        else:
            credit = 0.5 if math.isnan(self.credit) else self.credit
        return (credit, self.margin, self.position)


def model_on_pairs(store: Store, summary: RunSummary, rm_key: str) -> list[ModelOnPair]:
    """Every pair of the run that ``rm_key`` scored (or judged), in the pair set's order."""
    key = summary.run.pair_set_key
    if not key:
        return []
    scored = store.read.set_pairs(key, rm_key, texts=True)
    if scored:
        return [_on_pair(p, None) for p in scored]
    return [_on_pair(row.pair, row.credit) for row in judge_pair_rows(store, key, rm_key)]


def _on_pair(p: StoredPair, credit: float | None) -> ModelOnPair:
    return ModelOnPair(
        p.position,
        p.pair_id,
        p.subset or "",
        p.prompt,
        p.chosen,
        p.rejected,
        p.chosen_score,
        p.rejected_score,
        (p.prompt_id, p.chosen_id, p.rejected_id, p.subset),
        p.meta,
        credit,
    )


@dataclass(frozen=True)
class ShiftFlip:
    """One pair under one shift target: the RM's margin at every level p (p = 0: unshifted)."""

    pair: ModelOnPair
    target: str
    levels: tuple[float, ...]
    margins: tuple[float, ...]  # NaN where the RM scored no shifted copy
    pair_ids: tuple[str | None, ...]  # the (shifted) pair shown at each level

    @property
    def marks(self) -> str:
        """✓ (right), ✗ (wrong) or · (not scored) at each level."""
        return "".join(
            UNSCORED if math.isnan(m) else RIGHT if m > 0 else WRONG for m in self.margins
        )

    @property
    def first_flip(self) -> int | None:
        """Index of the first level whose verdict differs from the unshifted one."""
        base = self.marks[0]
        return next((i for i, v in enumerate(self.marks) if v != UNSCORED and v != base), None)


def shift_sweep(summary: RunSummary) -> dict | None:
    """The run's ``[pairs.shift]`` section as stored with the run, or None."""
    return (summary.run.recipe.get("pairs") or {}).get("shift")


def shift_flips(
    store: Store, summary: RunSummary, rm_key: str, on_pairs: list[ModelOnPair] | None = None
) -> list[ShiftFlip]:
    """Every (pair, target) of the run's shift sweep whose verdict flips at some level p,
    earliest flip first.

    The run's shifted pairs are found from what the recipe stored — the perturber's name and
    options, the levels, targets and seed — by recomputing their content keys, as the runner
    made them, so the copies of another sweep in the same DB are never mixed in.
    """
    sweep = shift_sweep(summary)
    if sweep is None:
        return []
    on_pairs = model_on_pairs(store, summary, rm_key) if on_pairs is None else on_pairs
    spec = {k: v for k, v in sweep["perturber"].items() if k != "name"}
    stored = store.items.components_named(ShiftPerturber.kind, sweep["perturber"]["name"])
    perturbers = {
        float(c.options["p"]): c.key
        for c in stored
        if all(c.options.get(k) == v for k, v in spec.items())
    }
    levels = sorted(float(p) for p in sweep["levels"] if p > 0 and float(p) in perturbers)
    shifted = store.read.shifted_pair_scores(summary.run.pair_set_key or "", rm_key)
    margins = {s.pair_id: s.chosen_score - s.rejected_score for s in shifted}
    seed, flips = int(sweep.get("seed", 0)), []
    for target in sweep["targets"]:
        for pair in on_pairs:
            ids = [_shifted_id(pair, target, perturbers[p], seed) for p in levels]
            flip = ShiftFlip(
                pair,
                target,
                (0.0, *levels),
                (pair.margin, *(margins.get(i, math.nan) for i in ids)),
                (pair.pair_id, *(i if i in margins else None for i in ids)),
            )
            if flip.first_flip is not None:
                flips.append(flip)
    return sorted(flips, key=lambda f: (f.first_flip, f.pair.position, f.target))


def _shifted_id(pair: ModelOnPair, target: str, perturber_key: str, seed: int) -> str:
    """The id the runner gives ``pair`` shifted on ``target`` by ``perturber_key``."""
    prompt, chosen, rejected, subset = pair.ids
    if shifts_prompt(target):
        prompt = shifted_prompt_id(perturber_key, seed, prompt)
    response_key = perturber_key if shifts_responses(target) else None
    return pair_id(
        prompt,
        shifted_response_id(response_key, seed, chosen, prompt),
        shifted_response_id(response_key, seed, rejected, prompt),
        subset,
    )
