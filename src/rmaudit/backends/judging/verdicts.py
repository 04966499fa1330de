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

import hashlib
import math
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SerializationInfo, model_serializer

from rmaudit.components.data_text import loads, read_text
from rmaudit.errors import BadInput

from .placeholders import placeholders

Mode = Literal["pairwise", "rating"]
#: the placeholders each mode's template must show, and may show
FIELDS: dict[str, tuple[str, ...]] = {
    "pairwise": ("question", "answer_a", "answer_b"),
    "rating": ("question", "answer"),
}
#: the answers a template shows, which say its mode
_PAIRWISE_ANSWERS, _RATING_ANSWER = {"answer_a", "answer_b"}, "answer"
#: the verdict marks of MT-bench's pairwise prompts → whom they prefer
MARKS = {"A": "first", "B": "second", "C": "tie"}
_MARK = re.compile(r"\[\[\s*([ABC])\s*\]\]")
#: how far above 0 a reported log-probability may lie (float rounding of a certain token)
_LOGPROB_ROUNDING = 1e-4


class VerdictTemplate(BaseModel):
    """A judge prompt for one mode, read once (from rmaudit's own, MT-bench's prompts file or
    a user's file) and carried as is from the command line or the recipe to the judge:
    ``user`` (and ``system``) with that mode's placeholders.

    In a recipe it is written as it was given — its file's path (``template_file``) or its
    name (``template``) — and in the judge's identity it is its file's SHA-256 or its name, so
    the file's words, not where it lies, decide the verdicts."""

    model_config = ConfigDict(frozen=True)

    name: str
    mode: Mode
    user: str
    system: str | None = None
    #: ``max_tokens`` of a request unless the recipe says otherwise, and the reply's typical
    #: length (for cost estimates)
    max_tokens: int = 1024
    reply_tokens: int = 200
    #: the file it was read from (None: a template by name) and the SHA-256 of its bytes
    file: str | None = None
    sha256: str | None = None

    def __init__(self, **fields: Any) -> None:
        super().__init__(**fields)
        wanted = FIELDS[self.mode]
        found = self.placeholders()
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

    def placeholders(self) -> set[str]:
        return placeholders(self.user, self.name) | placeholders(self.system or "", self.name)

    def messages(self, **values: str) -> list[dict[str, str]]:
        system = (
            [{"role": "system", "content": self.system.format(**values)}] if self.system else []
        )
        return system + [{"role": "user", "content": self.user.format(**values)}]

    @model_serializer(mode="wrap")
    def _as_written(self, handler: Any, info: SerializationInfo) -> Any:
        """In a recipe (JSON), its file's path or its name; in an identity, the file's
        SHA-256 or the name (:mod:`rmaudit.components.options`)."""
        if (info.context or {}).get("rmaudit.identity"):
            return self.sha256 if self.file is not None else self.name
        if info.mode == "json":
            return self.file if self.file is not None else self.name
        return handler(self)


RMAUDIT_PAIR = VerdictTemplate(
    name="rmaudit-pair",
    mode="pairwise",
    user="You compare two answers to the same question. Decide which answer serves the person "
    "who asked better: judge whether it does what was asked, and whether it is correct, "
    "complete and clear. The order in which the answers appear and their length are no reason "
    "to prefer either. Explain your reasoning in a few sentences, then give your verdict on its "
    'own line: "[[A]]" if answer A is better, "[[B]]" if answer B is better, "[[C]]" if '
    "neither is better.\n\n[User Question]\n{question}\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]",
)

RMAUDIT_RATING = VerdictTemplate(
    name="rmaudit-rating",
    mode="rating",
    user="Rate how well the answer below serves the person who asked the question: whether it "
    "does what was asked, and whether it is correct, complete and clear. Its length is no "
    "reason for a higher or lower rating. Explain your reasoning in a few sentences, then give "
    'a rating from 1 (useless) to 10 (could not be better) on its own line as "Rating: [[N]]".'
    "\n\n[Question]\n{question}\n\n[The Start of Assistant's Answer]\n{answer}\n"
    "[The End of Assistant's Answer]",
)

BUILTIN: dict[str, VerdictTemplate] = {t.name: t for t in (RMAUDIT_PAIR, RMAUDIT_RATING)}
#: rmaudit's own template of each mode: a judge's when none is given
DEFAULT: dict[str, VerdictTemplate] = {t.mode: t for t in (RMAUDIT_PAIR, RMAUDIT_RATING)}
#: MT-bench's judge prompts by their ``type`` field
_MT_TYPES: dict[str, Mode] = {"pairwise": "pairwise", "single": "rating"}


def judge_template(given: str, prompts_file: Path | None = None) -> VerdictTemplate:
    """``--judge-template FILE_OR_NAME``: the file's template (:func:`template_file`) where
    ``given`` is a file, else the template it names (:func:`named_template`)."""
    if Path(given).is_file():
        return template_file(Path(given))
    return named_template(given, prompts_file)


def template_file(path: Path) -> VerdictTemplate:
    """A user's template: the file's text is the judge's user message, and its mode is the one
    whose answers it shows (:func:`declared_mode`).  The file is read here, once."""
    try:
        data = path.read_bytes()
        # newlines as reading it as text gives them
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read the judge template ({error})", file=str(path)) from None
    name = f"file {path.name}"
    try:
        return VerdictTemplate(
            name=name,
            mode=declared_mode(placeholders(text, name), name),
            user=text,
            file=str(path.resolve()),
            sha256=hashlib.sha256(data).hexdigest(),
        )
    except BadInput as error:
        raise BadInput(error.problem, file=str(path)) from None


def declared_mode(shown: set[str], name: str) -> Mode:
    """The mode whose answers a template shows: ``{answer_a}`` and ``{answer_b}`` pairwise,
    ``{answer}`` rating; one showing both kinds, or neither, has no mode."""
    pairwise, rating = bool(shown & _PAIRWISE_ANSWERS), _RATING_ANSWER in shown
    if pairwise == rating:
        which = "both {answer} and {answer_a}/{answer_b}" if rating else "no answer"
        raise BadInput(
            f"judge template {name}: shows {which}: a pairwise template shows {{question}}, "
            "{answer_a} and {answer_b}; a rating one {question} and {answer}"
        )
    return "pairwise" if pairwise else "rating"


def named_template(name: str, prompts_file: Path | None = None) -> VerdictTemplate:
    """The template ``name`` names: a built-in one, or one of MT-bench's in ``prompts_file``
    (its ``judge_prompts.jsonl``)."""
    if name in BUILTIN:
        return BUILTIN[name]
    if prompts_file is not None:
        found = _mt_bench_prompts(prompts_file)
        if name in found:
            return found[name]
        names = ", ".join([*BUILTIN, *found])
    else:
        names = ", ".join(BUILTIN) + " (MT-bench's names need judge_prompts_file)"
    raise BadInput(f"no such judge template file or name (templates: {names})", value=name)


def _mt_bench_prompts(path: Path) -> dict[str, VerdictTemplate]:
    """The single-turn prompts of FastChat's ``judge_prompts.jsonl``: the ``pair-*`` ones with
    ``{question}``, ``{answer_a}``, ``{answer_b}``, the ``single-*`` ones with ``{question}``,
    ``{answer}`` (those showing a reference answer or two turns do not fit a pair suite)."""
    found: dict[str, VerdictTemplate] = {}
    for number, line in enumerate(read_text(Path(path)).splitlines(), 1):
        if not line.strip():
            continue
        try:
            record: Any = loads(line)
            mode: Mode = _MT_TYPES[record["type"]]
            name, user, system = record["name"], record["prompt_template"], record["system_prompt"]
            if not all(isinstance(text, str) for text in (name, user, system or "")):
                raise TypeError(record)
        except (ValueError, KeyError, TypeError):
            raise BadInput(
                "expected a JSON object with name, type (pairwise or single), "
                "system_prompt and prompt_template",
                file=f"{path}:{number}",
            ) from None
        try:
            found[name] = VerdictTemplate(
                name=name, mode=mode, user=user, system=system or None, max_tokens=2048
            )
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
