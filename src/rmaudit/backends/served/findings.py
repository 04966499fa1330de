"""The findings of a served reward model's scoring checks that have no Hugging Face
counterpart (docs/real-models.md, "Scoring checks"): the chat template the server applies
against a checkpoint's, and truncation seen from outside — scores that do not move when text
is added to the longest inputs, token counts that do not grow.  Batch invariance and
determinism are the Hugging Face models' own findings (:mod:`rmaudit.backends.hf.scoring_checks`),
on scores the server returned.  No torch here: the component sends the requests, this module
judges the numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rmaudit.backends.hf.scoring_checks import FAIL_SPREAD, Noise, rounding_step, spread
from rmaudit.components.scoring_checks import ScoringCheck, Status

#: differences within this many of the dtype's rounding steps are rounding (the same bound
#: batch invariance forgives a half-precision model)
ROUNDING_STEPS = 4


@dataclass(frozen=True)
class TemplateScores:
    """The same items scored alone with the template in use and with the other one (the
    server's chat template, rmaudit's rendering of a checkpoint's), and the tokens the server
    reports reading each way (None where it reports none)."""

    in_use: str
    other: str
    own: np.ndarray
    others: np.ndarray
    own_tokens: tuple[int | None, ...]
    other_tokens: tuple[int | None, ...]


def template_compared(
    compared: TemplateScores, spread_of: np.ndarray, dtype: str, noise: Noise
) -> ScoringCheck:
    """Whether the server's chat template gives a checkpoint's template's scores: equal to the
    dtype's rounding (or the server's own noise) passes; above a tenth of the scores' spread
    across items fails; between, warns."""
    diff = float(np.max(np.abs(compared.own - compared.others))) if len(compared.own) else 0.0
    sd = spread(spread_of)
    tolerance = max(ROUNDING_STEPS * rounding_step(compared.own, dtype), noise.difference)
    tokens = _token_gap(compared.own_tokens, compared.other_tokens)
    figures = {
        "template in use": compared.in_use,
        "compared with": compared.other,
        "items compared": len(compared.own),
        "largest difference": diff,
        "score spread (SD)": sd,
        "tokens read, in use - other": tokens,
    }
    read = f" (the server reads {tokens:+d} tokens)" if tokens else ""
    if diff <= tolerance:
        return ScoringCheck(
            "template",
            "pass",
            f"{compared.in_use} and {compared.other} give the same scores, to {diff:.2g}, on "
            f"{len(compared.own)} items{read}",
            figures,
        )
    status: Status = "fail" if sd and diff > FAIL_SPREAD * sd else "warn"
    share = f", {diff / sd:.0%} of their spread across items" if sd else ""
    return ScoringCheck(
        "template",
        status,
        f"{compared.in_use} and {compared.other} give other scores: up to {diff:.3g}{share}"
        f"{read}: the conversation the model reads is not the checkpoint's",
        figures,
        "give the server the checkpoint's chat template (vllm serve --chat-template FILE), "
        "or set template = 'rmaudit' (--rm-template rmaudit): rmaudit writes the "
        "conversation with the checkpoint's",
    )


def _token_gap(own: Sequence[int | None], other: Sequence[int | None]) -> int | None:
    """The largest difference in tokens read, where the server reports both."""
    gaps = [a - b for a, b in zip(own, other, strict=True) if a is not None and b is not None]
    return max(gaps, key=abs) if gaps else None


def template_unchecked(source: str) -> ScoringCheck:
    """The server applies its own chat template, and no checkpoint was given to compare."""
    return ScoringCheck(
        "template",
        "warn",
        f"{source}, not compared with the checkpoint's: nothing says it writes the "
        "conversation as the checkpoint was trained on",
        {"template in use": source},
        "set tokenizer = the checkpoint (--rm-tokenizer ID): the check compares the server's "
        "template with its own",
    )


def template_by_rmaudit(source: str, server: str) -> ScoringCheck:
    """rmaudit writes the conversation; the server takes texts, so it applies no template."""
    return ScoringCheck(
        "template",
        "pass",
        f"{source}; {server} takes texts and applies no template of its own",
        {"template in use": source},
    )


@dataclass(frozen=True)
class Probe:
    """The longest items scored alone as they are and with a sentence added at the end of
    the response (``appended``) and before the prompt (``prepended``), and the tokens the
    server reports for each (None where it reports none)."""

    alone: np.ndarray
    appended: np.ndarray
    prepended: np.ndarray
    tokens: tuple[int | None, ...]
    appended_tokens: tuple[int | None, ...]


def truncation(probe: Probe, noise: Noise) -> ScoringCheck:
    """Truncation seen from outside the server: a score that does not move (beyond the
    server's own noise) when a sentence is added to an input's end means the server cut the
    end (fail: the response is not read whole); one that does not move when it is put before
    the prompt, or a token count that does not grow with the sentence while the end is read,
    means it keeps the input's last tokens (warn: left truncation, which loses the prompt's
    start, and a very long response's)."""
    tolerance = noise.difference
    end = np.abs(probe.appended - probe.alone) <= tolerance
    capped = np.array(
        [
            before is not None and after is not None and after <= before
            for before, after in zip(probe.tokens, probe.appended_tokens, strict=True)
        ],
        dtype=bool,
    )
    start = ~end & ((np.abs(probe.prepended - probe.alone) <= tolerance) | capped)
    known = [t for t in probe.tokens if t is not None]
    figures = {
        "items probed": len(probe.alone),
        "end not read": int(end.sum()),
        "start not read": int(start.sum()),
        "largest tokens read": max(known) if known else None,
    }
    read = f" ({max(known)} tokens as the server counts them)" if known else ""
    items = f"{len(probe.alone)} longest items{read}"
    if end.any():
        return ScoringCheck(
            "truncation",
            "fail",
            f"the server does not read a sentence added to the end of {int(end.sum())} of "
            f"the {items}: it cuts long inputs, their responses' ends unread",
            figures,
            "raise the server's length limit (vLLM: --max-model-len; OpenRLHF: "
            "--data.max_len) so it reads whole inputs",
        )
    if start.any():
        return ScoringCheck(
            "truncation",
            "warn",
            f"the server does not read all of {int(start.sum())} of the {items}: it keeps "
            "their last tokens (left truncation): a prompt's start unread, and a very long "
            "response's",
            figures,
            "raise the server's length limit (vLLM: --max-model-len) and truncate_prompt_tokens "
            "(--rm-truncate) with it, or score shorter items",
        )
    return ScoringCheck(
        "truncation",
        "pass",
        f"a sentence added to either end of the {items} moves their scores: the server "
        "reads them whole",
        figures,
    )
