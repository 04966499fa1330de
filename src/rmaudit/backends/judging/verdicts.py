"""Judges as reward models (docs/judges.md): their templates, and reading a verdict or a rating
out of a reply — from its text, or from the log-probabilities of the verdict token.

Templates follow MT-bench's judge prompts (*Judging LLM-as-a-Judge with MT-Bench and Chatbot
Arena*, arXiv 2306.05685, App. A): a pairwise template shows ``{question}``, ``{answer_a}`` and
``{answer_b}`` and asks for ``[[A]]``, ``[[B]]`` or ``[[C]]`` (a tie); a rating template shows
``{question}`` and ``{answer}`` and asks for ``[[N]]`` on a 1–10 scale.  A template is rmaudit's
own (``rmaudit-pair``, ``rmaudit-rating``, written here), one of MT-bench's read by name from a
local copy of FastChat's ``judge_prompts.jsonl`` (``pair-v2``, ``single-v1``, …; its text is
never copied here), or a user's file whose text is the user message.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rmaudit.errors import BadInput

from .placeholders import placeholders

Mode = Literal["pairwise", "rating"]
#: the placeholders each mode's template must show, and may show
FIELDS: dict[str, tuple[str, ...]] = {
    "pairwise": ("question", "answer_a", "answer_b"),
    "rating": ("question", "answer"),
}
#: the verdict marks of MT-bench's pairwise prompts → whom they prefer
MARKS = {"A": "first", "B": "second", "C": "tie"}
_MARK = re.compile(r"\[\[\s*([ABC])\s*\]\]")
#: how far above 0 a reported log-probability may lie (float rounding of a certain token)
_LOGPROB_ROUNDING = 1e-4


@dataclass(frozen=True)
class VerdictTemplate:
    """A judge prompt for one mode: ``user`` (and ``system``) with that mode's placeholders."""

    name: str
    mode: Mode
    user: str
    system: str | None = None
    #: ``max_tokens`` of a request unless the recipe says otherwise, and the reply's typical
    #: length (for cost estimates)
    max_tokens: int = 1024
    reply_tokens: int = 200

    def __post_init__(self) -> None:
        wanted = FIELDS[self.mode]
        found = placeholders(self.user, self.name) | placeholders(self.system or "", self.name)
        missing = [f for f in wanted if f not in found]
        unknown = sorted(found - set(wanted))
        if missing or unknown:
            problem = (
                f"missing the placeholder {{{missing[0]}}}"
                if missing
                else f"unknown placeholder {{{unknown[0]}}}"
            )
            raise BadInput(
                f"{self.mode} judge template {self.name}: {problem} "
                f"(a {self.mode} template shows {', '.join('{' + f + '}' for f in wanted)})"
            )

    def messages(self, **values: str) -> list[dict[str, str]]:
        system = (
            [{"role": "system", "content": self.system.format(**values)}] if self.system else []
        )
        return system + [{"role": "user", "content": self.user.format(**values)}]


RMAUDIT_PAIR = VerdictTemplate(
    "rmaudit-pair",
    "pairwise",
    "You compare two answers to the same question. Decide which answer serves the person who "
    "asked better: judge whether it does what was asked, and whether it is correct, complete "
    "and clear. The order in which the answers appear and their length are no reason to "
    "prefer either. Explain your reasoning in a few sentences, then give your verdict on its "
    'own line: "[[A]]" if answer A is better, "[[B]]" if answer B is better, "[[C]]" if '
    "neither is better.\n\n[User Question]\n{question}\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]",
)

RMAUDIT_RATING = VerdictTemplate(
    "rmaudit-rating",
    "rating",
    "Rate how well the answer below serves the person who asked the question: whether it does "
    "what was asked, and whether it is correct, complete and clear. Its length is no reason "
    "for a higher or lower rating. Explain your reasoning in a few sentences, then give a "
    'rating from 1 (useless) to 10 (could not be better) on its own line as "Rating: [[N]]".'
    "\n\n[Question]\n{question}\n\n[The Start of Assistant's Answer]\n{answer}\n"
    "[The End of Assistant's Answer]",
)

BUILTIN: dict[str, VerdictTemplate] = {t.name: t for t in (RMAUDIT_PAIR, RMAUDIT_RATING)}
#: MT-bench's judge prompts by their ``type`` field
_MT_TYPES: dict[str, Mode] = {"pairwise": "pairwise", "single": "rating"}


def chosen_verdict_template(
    template: str | None, template_file: Path | None, mode: Mode, prompts_file: Path | None
) -> VerdictTemplate:
    """A judge's template from its options: ``template`` (a name) or ``template_file``, not
    both (see :func:`load_verdict_template`)."""
    if template is not None and template_file is not None:
        raise BadInput("give template or template_file, not both", field="template_file")
    return load_verdict_template(
        str(template_file) if template_file is not None else template, mode, prompts_file
    )


def load_verdict_template(
    template: str | None, mode: Mode, prompts_file: Path | None = None
) -> VerdictTemplate:
    """The template ``template`` names for ``mode``: None (rmaudit's own), a built-in name, a
    name in ``prompts_file`` (MT-bench's ``judge_prompts.jsonl``), or a file."""
    if template is None:
        return RMAUDIT_PAIR if mode == "pairwise" else RMAUDIT_RATING
    if template in BUILTIN:
        return _of_mode(BUILTIN[template], mode)
    if Path(template).is_file():
        try:
            text = Path(template).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise BadInput(f"cannot read the judge template ({error})", file=template) from None
        try:
            return VerdictTemplate(f"file {Path(template).name}", mode, text)
        except BadInput as error:
            raise BadInput(error.problem, file=template) from None
    if prompts_file is not None:
        found = _mt_bench_prompts(prompts_file)
        if template in found:
            return _of_mode(found[template], mode)
        names = ", ".join([*BUILTIN, *found])
    else:
        names = ", ".join(BUILTIN) + " (MT-bench's names need judge_prompts_file)"
    raise BadInput(
        f"no such judge template file or name (templates: {names})",
        field="template",
        value=template,
    )


def template_mode(template: str, prompts_file: Path | None = None) -> Mode:
    """Whether ``template`` (a name or a file, as :func:`load_verdict_template` takes it) is
    a pairwise or a rating template: a file by its placeholders."""
    modes: tuple[Mode, ...] = ("pairwise", "rating")
    for mode in modes:
        try:
            load_verdict_template(template, mode, prompts_file)
            return mode
        except BadInput as error:
            if "is a" not in error.problem and "missing the placeholder" not in error.problem:
                raise
    return load_verdict_template(template, "pairwise", prompts_file).mode


def _of_mode(template: VerdictTemplate, mode: Mode) -> VerdictTemplate:
    if template.mode != mode:
        raise BadInput(
            f"judge template {template.name} is a {template.mode} template; mode is {mode}",
            field="template",
            value=template.name,
        )
    return template


def _mt_bench_prompts(path: Path) -> dict[str, VerdictTemplate]:
    """The single-turn prompts of FastChat's ``judge_prompts.jsonl``: the ``pair-*`` ones with
    ``{question}``, ``{answer_a}``, ``{answer_b}``, the ``single-*`` ones with ``{question}``,
    ``{answer}`` (those showing a reference answer or two turns do not fit a pair suite)."""
    found: dict[str, VerdictTemplate] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read judge prompts ({error})", file=str(path)) from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record: Any = json.loads(line)
            mode: Mode = _MT_TYPES[record["type"]]
            name, user, system = record["name"], record["prompt_template"], record["system_prompt"]
        except (ValueError, KeyError, TypeError):
            raise BadInput(
                "expected a JSON object with name, type (pairwise or single), "
                "system_prompt and prompt_template",
                file=f"{path}:{number}",
            ) from None
        try:
            found[name] = VerdictTemplate(name, mode, user, system or None, 2048, 200)
        except BadInput:
            continue  # a reference or multi-turn prompt: not offered
    return found


# -- reading the reply -------------------------------------------------------------------------


def parse_verdict(reply: str | None) -> Literal["first", "second", "tie"] | None:
    """The verdict of a pairwise reply: its last ``[[A]]``, ``[[B]]`` or ``[[C]]`` (a judge
    that explains first concludes last); None when it has none."""
    marks = _MARK.findall(reply or "")
    return MARKS[marks[-1]] if marks else None  # type: ignore[return-value]


def verdict_token_probabilities(choice: dict[str, Any]) -> dict[str, float] | None:
    """P(first), P(second), P(tie) from a chat choice's ``logprobs``: the top alternatives at
    the token after the reply's last ``[[``, renormalised over A, B and C; None when the
    reply has no such token, its alternatives hold none of them, or their log-probabilities
    are not log-probabilities (above 0, not finite)."""
    top = _top_after_brackets(choice)
    if top is None:
        return None
    mass = {verdict: 0.0 for verdict in MARKS.values()}
    for token, logprob in top:
        verdict = MARKS.get(token.strip())
        if verdict is not None:
            mass[verdict] += math.exp(logprob)
    total = sum(mass.values())
    return {k: v / total for k, v in mass.items()} if total > 0 else None


def rating_token_expectation(choice: dict[str, Any], low: float, high: float) -> float | None:
    """The expected rating under the rating token's distribution: the top alternatives at the
    token after the reply's last ``[[`` that are integers in [low, high] written in ASCII
    digits (a ``²`` is no rating), renormalised; None when none is."""
    top = _top_after_brackets(choice)
    if top is None:
        return None
    weights: dict[int, float] = {}
    for token, logprob in top:
        text = token.strip()
        # ASCII digits only: "²".isdigit() holds, and int("²") fails
        if text.isascii() and text.isdigit() and low <= int(text) <= high:
            weights[int(text)] = weights.get(int(text), 0.0) + math.exp(logprob)
    total = sum(weights.values())
    return sum(r * w for r, w in weights.items()) / total if total > 0 else None


def _top_after_brackets(choice: dict[str, Any]) -> list[tuple[str, float]] | None:
    """The (token, logprob) alternatives of the token that follows the last ``[[`` of the
    reply, as an OpenAI-compatible ``logprobs.content`` lists them."""
    content = ((choice or {}).get("logprobs") or {}).get("content")
    if not isinstance(content, list):
        return None
    text, position = "", None
    for i, item in enumerate(content):
        if not isinstance(item, dict) or not isinstance(item.get("token"), str):
            return None
        if text.endswith("[["):
            position = i
        text += item["token"]
    if position is None:
        return None
    alternatives = content[position].get("top_logprobs") or [
        {"token": content[position]["token"], "logprob": content[position].get("logprob", 0.0)}
    ]
    if not isinstance(alternatives, list):
        return None
    read = [
        (str(a["token"]), float(a["logprob"]))
        for a in alternatives
        if isinstance(a, dict) and "token" in a and isinstance(a.get("logprob"), int | float)
    ]
    # a log-probability above 0 (beyond rounding) or not finite is no log-probability: the
    # endpoint's numbers are unusable, and the reply is read from its text
    if not all(math.isfinite(logprob) and logprob <= _LOGPROB_ROUNDING for _, logprob in read):
        return None
    return read
