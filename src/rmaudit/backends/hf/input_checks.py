"""The scoring checks of a Hugging Face reward model's inputs, from a sample of a run's items
rendered as the model reads them (docs/real-models.md, "Scoring checks"): the chat template,
the special tokens it drops, and truncation.

They answer the incidents that moved public reward-model numbers: a BOS token written twice
(reward-bench issue #164), a missing EOS (PR #94) and a length limit that cuts the judged
text (#65, #35).  A template finding's fix is a template checked on the sample to remove it;
a truncation finding's uses the model's position limit (its config's), not the tokenizer's
``model_max_length``.  No torch here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rmaudit.components.scoring_checks import ScoringCheck, Status

#: Share of sampled items whose response is cut at which truncation fails rather than warns.
FAIL_CUT = 0.10
#: A special token the template drops fails where adding it moves scores by more than this
#: share of their spread across items; it warns below.
FAIL_SPREAD = 0.10


def share_check(
    name: str, wrong: int, of: int, figures: dict[str, Any], *, passed: str, failed: str, fix: str
) -> ScoringCheck:
    """A check on ``of`` inputs, ``wrong`` of which went wrong: a pass saying ``passed``
    where none did; else a fail where a FAIL_CUT share or more did (a warn below), saying
    ``failed``, with its ``fix``."""
    if not wrong:
        return ScoringCheck(name, "pass", passed, figures)
    status: Status = "fail" if wrong >= FAIL_CUT * of else "warn"
    return ScoringCheck(name, status, failed, figures, fix)


@dataclass(frozen=True)
class RenderedInput:
    """One item as the model reads it: ``ids`` as scored (after truncation), ``full`` before,
    the response's tokens ``full[response_start:response_end]``, what the template writes
    after them (``closing``: token ids), and the special tokens the tokenizer itself would
    add before and after a rendered conversation's tokens (``tokenizer(text)`` against
    ``tokenizer(text, add_special_tokens=False)``; none for a text pair, whose encoding
    includes them)."""

    text: str | None  # the rendered conversation; None for a text pair
    ids: list[int]
    full: list[int]
    response_start: int
    response_end: int
    added_front: tuple[int, ...] = ()
    added_back: tuple[int, ...] = ()

    @property
    def closing(self) -> list[int]:
        return self.full[self.response_end :]

    def closed(self, closing_ids: set[int]) -> bool:
        """Whether a token of ``closing_ids`` (an EOS or end-of-turn token) follows the
        response: the template check's finding and the check of its fix, alike."""
        return not closing_ids.isdisjoint(self.closing)

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


@dataclass(frozen=True)
class TemplateFix:
    """A chat template that removes a finding, checked on the sample: ``change`` says how it
    differs from the template in use, ``template`` is its text."""

    change: str
    template: str

    def advice(self) -> str:
        return (
            f"set chat_template = the template in use {self.change} (--chat-template; its "
            f"text is this check's 'fixed template' figure)"
        )


def _fixed(figures: dict, fix: TemplateFix | None, unchecked: str) -> str:
    """The fix line: a template checked on the sample to remove the finding, or, where no
    change of the template in use did, what is left to do, said to be unchecked."""
    if fix is None:
        return f"none checked to remove it: {unchecked}"
    figures["fixed template"] = fix.template
    return fix.advice()


def template(
    rendered: Sequence[RenderedInput],
    *,
    source: str,
    bos_id: int | None,
    closing_ids: set[int],
    once: TemplateFix | None = None,
    closed: TemplateFix | None = None,
) -> ScoringCheck:
    """Which template rendered the inputs, BOS twice at the start (reward-bench #164), and
    an EOS or end-of-turn token after the response (PR #94); ``once`` and ``closed``: a
    template checked to write BOS once, and to close every response (by
    :meth:`RenderedInput.closed` on the same ``closing_ids``)."""
    doubled = sum(
        1
        for item in rendered
        if bos_id is not None and len(item.full) > 1 and item.full[0] == item.full[1] == bos_id
    )
    unclosed = sum(1 for item in rendered if not item.closed(closing_ids))
    figures: dict = {
        "template": source,
        "BOS twice": doubled,
        "no EOS after the response": unclosed,
    }
    if doubled:
        return ScoringCheck(
            "template",
            "fail",
            f"{source}: BOS twice at the start of {doubled} of {len(rendered)} inputs",
            figures,
            _fixed(
                figures,
                once,
                "write a template that writes {{ bos_token }} once (--chat-template; rmaudit "
                "adds no special tokens itself)",
            ),
        )
    if unclosed:
        return ScoringCheck(
            "template",
            "warn",
            f"{source}: no EOS or end-of-turn token after the response in {unclosed} of "
            f"{len(rendered)} inputs",
            figures,
            _fixed(
                figures,
                closed,
                "write the template the model was trained with, closing each turn with "
                "{{ eos_token }} (--chat-template)",
            ),
        )
    return ScoringCheck(
        "template",
        "pass",
        f"{source}; BOS at most once, an EOS or end-of-turn token after the response",
        figures,
    )


def special_tokens(
    rendered: Sequence[RenderedInput],
    *,
    bos_id: int | None,
    eos_id: int | None,
    moved: float | None,
    spread: float,
    fix: TemplateFix | None,
) -> ScoringCheck:
    """A BOS (or EOS) the tokenizer adds to a text that the chat template does not write: the
    model reads none, though it was trained with one.  ``moved``: how far scores move with
    the tokens added (by ``fix``'s template), against their ``spread`` across items."""
    no_bos = sum(
        1
        for item in rendered
        if bos_id is not None and bos_id in item.added_front and item.full[:1] != [bos_id]
    )
    no_eos = sum(
        1
        for item in rendered
        if eos_id is not None and eos_id in item.added_back and eos_id not in item.closing
    )
    figures: dict = {
        "inputs without the tokenizer's BOS": no_bos,
        "inputs without the tokenizer's EOS": no_eos,
        "score change with them": moved,
        "share of spread": moved / spread if moved is not None and spread else None,
    }
    if not (no_bos or no_eos):
        pairs = all(item.text is None for item in rendered)
        return ScoringCheck(
            "special tokens",
            "pass",
            "text pairs: the tokenizer adds its special tokens itself"
            if pairs
            else "the template writes every special token the tokenizer adds to a text",
            figures,
        )
    dropped = " and ".join(
        f"the {name} the tokenizer adds ({count} of {len(rendered)} inputs lack it)"
        for name, count in (("BOS", no_bos), ("EOS", no_eos))
        if count
    )
    status: Status = (
        "fail" if moved is not None and spread and moved > FAIL_SPREAD * spread else "warn"
    )
    effect = (
        f"; with it, scores move by up to {moved:.3g} ({moved / spread:.0%} of their spread)"
        if moved is not None and spread
        else ""
    )
    return ScoringCheck(
        "special tokens",
        status,
        f"the chat template drops {dropped}{effect}",
        figures,
        _fixed(
            figures,
            fix,
            "write a template that writes the tokenizer's special tokens (--chat-template)",
        ),
    )


def truncation(
    rendered: Sequence[RenderedInput],
    *,
    max_length: int | None,
    side: str,
    position_limit: int | None,
    tokenizer_limit: int | None = None,
    tokenizer_side: str | None = None,
) -> ScoringCheck:
    """How many items exceed ``max_length``, whether the cut reached the response (the
    judged text) or only the prompt (reward-bench #65, #35), and the setting that keeps every
    response whole where the model's position limit (its config's) allows."""
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
        "tokenizer's model_max_length": tokenizer_limit,
        "tokenizer's truncation side": tokenizer_side,
    }
    where = f", {len(over)} lost prompt tokens only" if over else ""
    return share_check(
        "truncation",
        len(cut),
        len(rendered),
        figures,
        passed=f"every response whole (max_length {max_length}){where}",
        failed=f"max_length {max_length} cuts the response of {len(cut)} of {len(rendered)} "
        f"sampled inputs (truncation side {side})",
        fix=_keep_responses(rendered, side, position_limit) if cut else "",
    )


def _keep_responses(rendered: Sequence[RenderedInput], side: str, limit: int | None) -> str:
    longest = max(len(item.full) for item in rendered)
    if limit is None or longest <= limit:
        length = longest if limit is None else limit
        return f"set max_length = {length} (--max-length {length})"
    # from the left a cut keeps the response and what follows it
    needed = max(len(item.full) - item.response_start for item in rendered)
    if needed <= limit:
        if side == "left":
            return f"set max_length = {limit} (--max-length {limit})"
        return (
            f'set truncation_side = "left" and max_length = {limit} '
            f"(--truncation-side left --max-length {limit})"
        )
    return (
        f"none keeps every response whole: a response runs to {needed} tokens, over the "
        f"model's position limit of {limit}; score shorter responses"
    )
