"""The names results are stored under, in one place: the metrics that write them, the runner,
the CLI tables, the report and the TUI panels that read them import them from here.

These strings are in every database already written: changing one orphans stored results.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args


@dataclass(frozen=True)
class ResultKey:
    """A stored result's key as a record: its name and, for a value of one part of the data (a
    subset's accuracy, a section's score), that part — stored as ``name[part]``, e.g.
    ``accuracy[llmbar-natural]``.  Metrics make their keys with it and readers take a stored
    key apart with :meth:`read`, the one place its text is parsed."""

    name: str
    part: str | None = None

    def __str__(self) -> str:
        return self.name if self.part is None else f"{self.name}[{self.part}]"

    @classmethod
    def read(cls, key: str) -> ResultKey:
        """``accuracy[Chat]`` → ResultKey("accuracy", "Chat"); a key without a part is its name.

        >>> ResultKey.read("accuracy[llmbar-natural]"), ResultKey.read("reta@0.25").part
        (ResultKey(name='accuracy', part='llmbar-natural'), None)
        """
        name, bracket, rest = key.partition("[")
        if bracket and rest.endswith("]") and name:
            return cls(name, rest[:-1])
        return cls(key)


# -- RETA (RETA paper, arXiv 2504.14838)
# --------------------------------------------------------------------------

RETA_CURVE = "reta_curve"
RETA_PREFIX = "reta@"
#: the step metrics' curves over the step threshold (docs/prm.md): PRMBench's PRMScore,
#: ProcessBench's average F1
PRM_SCORE_CURVE = "prm_score_curve"
AVERAGE_F1_CURVE = "average_f1_curve"
THRESHOLD_CURVES = (PRM_SCORE_CURVE, AVERAGE_F1_CURVE)
#: the step-aggregation metric's AUROC under each aggregation: ``ResultKey(STEP_AUROC, how)``
STEP_AUROC = "auroc"


def reta_key(eta: float) -> str:
    """``reta@0.25``: RETA at one η."""
    return f"{RETA_PREFIX}{eta:g}"


# -- best-of-n (RETA paper, arXiv 2504.14838, Eq. 1)
# ---------------------------------------------------------------


def best_of_n_key(rank: int) -> str:
    """``bon`` for best-of-n, ``bon2`` for 2nd-best-of-n, ...; scalars are ``<key>@<n>``."""
    return "bon" if rank == 1 else f"bon{rank}"


def best_of_n_curve_key(rank: int) -> str:
    return f"{best_of_n_key(rank)}_curve"


def is_best_of_n_curve(key: str) -> bool:
    return re.fullmatch(r"bon\d*_curve", key) is not None


def best_of_n_curve_rank(key: str) -> int:
    """1 for ``bon_curve`` (best-of-n), 2 for ``bon2_curve`` (2nd-best-of-n), ..."""
    return int(key.removeprefix("bon").removesuffix("_curve") or 1)


def in_oracle_units(key: str) -> bool:
    """Whether a scalar is an oracle score (best-of-n ``bon@4``, ``bon2@16``; best-k-of-n
    ``best2of8``), so it reads on the oracle's scale."""
    return re.fullmatch(r"bon\d*@\d+|best\d+of\d+", key) is not None


# -- preference pairs and the shift sweep (RMs Under Distribution Shift, arXiv 2311.14743)
# ------------------------------------------

#: What a shift sweep perturbs: the prompt, the two responses, or both.
ShiftTarget = Literal["prompt", "response", "both"]
SHIFT_TARGETS: tuple[ShiftTarget, ...] = get_args(ShiftTarget)
#: What the shift sweep plots against p, per target (RMs Under Distribution Shift, arXiv 2311.14743,
#: Fig. 1-2): key → (label, higher is better).
SHIFT_QUANTITIES = {
    "accuracy": ("accuracy", True),
    "confidence": ("mean confidence", True),
    "ece": ("ECE", False),
    "auroc": ("AUROC", True),
    "fpr95": ("FPR@95", False),
}
SHIFT_CURVE_PREFIX = "shift_"
RELIABILITY_DIAGRAM = "reliability_diagram"
#: a pair metric's param: its ± is clustered by prompt, over this many prompts
CLUSTERED_PROMPTS = "clustered_prompts"

# -- how a value is shown (params a metric sets on a value)
# ------------------------------------------------------------------------

#: this value is its model's headline in place of the run's first number (a pairwise judge's
#: accuracy with both orders and a tie ½, beside the score accuracy its logits give): the
#: param's value names the convention, shown with the number
HEADLINE = "headline"
#: this value has no better direction (a position bias): the param's value says what its sign
#: means, shown in place of an ↑ or ↓
SIGNED = "signed"
#: a detail, shown on request (``--details``) rather than in the leaderboard
DETAIL = "detail"


def shifts_prompt(target: str) -> bool:
    return target in ("prompt", "both")


def shifts_responses(target: str) -> bool:
    return target in ("response", "both")


def shift_curve_key(quantity: str, target: str) -> str:
    """``shift_<quantity>_<target>``, e.g. ``shift_auroc_response``."""
    return f"{SHIFT_CURVE_PREFIX}{quantity}_{target}"


def shift_curve_target(key: str) -> str | None:
    """The target of a shift curve's key; None for any other key."""
    if not key.startswith(SHIFT_CURVE_PREFIX):
        return None
    target = key.rsplit("_", 1)[1]
    return target if target in SHIFT_TARGETS else None


# -- RewardBench 2 (arXiv 2506.01937)
# -----------------------------------------------------------------------------------

#: the ``rewardbench-2`` metric's final score (the mean of its subsets' scores)
RB2_SCORE = "rb2_score"


def rb2_subset_key(subset: str) -> str:
    """``rb2[Factuality]``: one subset's score."""
    return f"rb2[{subset}]"


def is_rb2_key(key: str) -> bool:
    return key == RB2_SCORE or (key.startswith("rb2[") and key.endswith("]"))


# -- the regret study (Rethinking RM Evaluation, arXiv 2410.05584)
# --------------------------------------------------------------

#: Prefix of each proxy's NDR-against-n curve: ``ndr_curve/<proxy label>``.
NDR_CURVE_PREFIX = "ndr_curve/"
#: The regret-correlation scalar whose params hold the study's matrices.
REGRET_SUMMARY = "ndr/mean"

#: the built-in baseline reward models (default_plugins/baselines.py): the bars a model must
#: beat, never the model a summary sends the user to look at
BASELINE_REWARD_MODELS = ("length", "random")
#: the baseline process reward models' names (docs/prm.md)
BASELINE_PROCESS_REWARD_MODELS = ("random", "step-length")

#: the ``failures`` stage of the prompts a metric skipped (undefined there), one row per
#: (metric, prompt): item = the prompt id, error = "<metric label>: <reason>"
SKIPPED_STAGE = "metrics: skipped prompts"
