"""The scoring checks of a loaded Hugging Face process reward model that are its own: whether
each step's marker is one token where the model reads it, and whether ``max_length`` cut
the context of a step (docs/prm-models.md, "Scoring checks").  Batch invariance and
determinism are judged as a reward model's are (:mod:`rmaudit.backends.hf.scoring_checks`), on
the step scores.  No torch here: the component tokenises and scores, this module judges.
"""

from __future__ import annotations

from collections.abc import Sequence

from rmaudit.backends.hf.input_checks import share_check
from rmaudit.backends.hf.steps import MarkerRead
from rmaudit.components.scoring_checks import ScoringCheck

#: The checks of a PRM, in the order they are shown.
PRM_CHECK_NAMES = ("batch invariance", "step markers", "truncation", "determinism")


def step_markers(
    reads: Sequence[MarkerRead], *, option: str, marker: str, example: str | None
) -> ScoringCheck:
    """Whether each step's marker (``option`` = ``marker``) came out of the tokenizer as its
    own token: a marker split into several tokens, or merged into one with the text beside
    it, is read at a token the model was not trained to score; ``example``: one such step,
    described."""
    split = sum(1 for read in reads if read == "split")
    merged = sum(1 for read in reads if read == "merged")
    wrong = split + merged
    figures = {
        "marker": marker,
        "steps": len(reads),
        "split": split,
        "merged": merged,
        "example": example,
    }
    return share_check(
        "step markers",
        wrong,
        len(reads),
        figures,
        passed=f"{option} {marker!r} is its own token at all {len(reads)} steps",
        failed=f"{option} {marker!r} is not its own token at {wrong} of {len(reads)} steps "
        f"(split into several tokens at {split}, merged with the text beside it at {merged}), "
        f"so their scores are read at another token; e.g. {example}",
        fix='set tokenize = "pieces" (the question, each step and each marker tokenised on '
        "their own, the ids joined)",
    )


def step_truncation(
    lengths: Sequence[int],
    cut: Sequence[int],
    *,
    steps: int,
    max_length: int | None,
    position_limit: int | None,
) -> ScoringCheck:
    """Solutions of ``lengths`` tokens, ``cut[i]`` of whose steps were read from a window
    that lost the start of the solution (the question first), out of ``steps``; the setting
    that reads every step with its whole solution where the model's position limit allows."""
    over = sum(1 for length in lengths if max_length is not None and length > max_length)
    solutions_cut = sum(1 for count in cut if count)
    longest = max(lengths, default=0)
    figures = {
        "max_length": max_length,
        "solutions over max_length": over,
        "solutions cut": solutions_cut,
        "steps read from a cut input": sum(cut),
        "steps": steps,
        "longest input": longest,
        "position limit": position_limit,
    }
    if position_limit is None or longest <= position_limit:
        fix = f"set max_length = {longest if position_limit is None else position_limit}"
    else:
        fix = (
            f"none reads every step with its whole solution: a solution runs to {longest} "
            f"tokens, over the model's limit of {position_limit}; score shorter solutions"
        )
    after = f", {over} lost tokens after their last step only" if over else ""
    return share_check(
        "truncation",
        solutions_cut,
        len(lengths),
        figures,
        passed=f"every step read with its whole solution before it (max_length {max_length})"
        + after,
        failed=f"max_length {max_length} cuts {solutions_cut} of {len(lengths)} solutions: "
        f"{sum(cut)} of {steps} steps are read without the start of their solution",
        fix=fix,
    )
