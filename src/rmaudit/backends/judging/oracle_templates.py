"""The oracle's templates (``llm-judge``): the RETA paper's (arXiv 2504.14838, App. B.5,
Fig. 8 and 9), MT-bench's, or a user's.

A template turns a (prompt, response) into chat messages for the oracle's judge.  Placeholders:

* single-turn: ``{question}`` (the prompt text), ``{answer}`` (the response text),
  ``{reference}`` (the prompt's reference answer, ``prompt.meta["reference"]``);
* multi-turn (two user turns, as MT-bench): ``{question_1}``, ``{question_2}``
  (``prompt.meta["turns"]``), ``{answer_1}``, ``{answer_2}`` (``response.meta["turns"]``),
  ``{reference_1}``, ``{reference_2}`` (``prompt.meta["reference"]``, one per turn).

Literal braces are written ``{{`` and ``}}`` (Python format strings).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmaudit.components import Prompt, Response
from rmaudit.errors import BadInput

from .placeholders import placeholders

SINGLE_TURN_FIELDS = ("question", "answer", "reference")
MULTI_TURN_FIELDS = (
    "question_1",
    "answer_1",
    "question_2",
    "answer_2",
    "reference_1",
    "reference_2",
)
_TURNS = 2


@dataclass(frozen=True)
class OracleTemplate:
    name: str
    user: str
    system: str | None = None
    #: Used instead when the prompt has a reference answer (MT-bench judges questions with a
    #: reference — math, reasoning, coding — with a template that shows it).
    with_reference: OracleTemplate | None = None
    #: Typical reply length, for cost estimates; None: as long as ``max_tokens`` allows.
    reply_tokens: int | None = None
    #: ``max_tokens`` of a judge request unless the recipe says otherwise.
    max_tokens: int = 1024

    def __post_init__(self) -> None:
        fields = placeholders(self.user, self.name) | placeholders(self.system or "", self.name)
        unknown = fields - set(SINGLE_TURN_FIELDS) - set(MULTI_TURN_FIELDS)
        if unknown:
            allowed = ", ".join(f"{{{name}}}" for name in (*SINGLE_TURN_FIELDS, *MULTI_TURN_FIELDS))
            raise BadInput(
                f"template {self.name}: unknown placeholder {{{sorted(unknown)[0]}}}; "
                f"allowed: {allowed}"
            )
        single, multi = fields & set(SINGLE_TURN_FIELDS), fields & set(MULTI_TURN_FIELDS)
        if single and multi:
            raise BadInput(
                f"template {self.name}: mixes single-turn placeholders "
                f"({', '.join(sorted(single))}) with multi-turn ones ({', '.join(sorted(multi))})"
            )
        if not fields & {"answer", "answer_1", "answer_2"}:
            raise BadInput(
                f"template {self.name}: has no {{answer}} placeholder, so the judge "
                f"would never see the response"
            )

    @property
    def fields(self) -> set[str]:
        return placeholders(self.user, self.name) | placeholders(self.system or "", self.name)

    @property
    def multi_turn(self) -> bool:
        return bool(self.fields & set(MULTI_TURN_FIELDS))

    def for_prompt(self, prompt: Prompt) -> OracleTemplate:
        return self.with_reference if self.with_reference and prompt.meta.get("reference") else self

    def messages(self, prompt: Prompt, response: Response) -> list[dict[str, str]]:
        """The judge's chat messages for one response; BadInput when the prompt or response lacks
        what the template shows (a reference answer, the turns of a multi-turn conversation)."""
        template = self.for_prompt(prompt)
        values = template._values(prompt, response)
        messages = (
            [{"role": "system", "content": template.system.format(**values)}]
            if template.system
            else []
        )
        return messages + [{"role": "user", "content": template.user.format(**values)}]

    def _values(self, prompt: Prompt, response: Response) -> dict[str, Any]:
        fields = self.fields
        # meta values are JSON of any shape, checked below
        reference: Any = prompt.meta.get("reference")
        needs_reference = bool(fields & {"reference", "reference_1", "reference_2"})
        turns: Any = prompt.meta.get("turns")
        multi_turn_prompt = isinstance(turns, list) and len(turns) > 1
        if not self.multi_turn:
            if multi_turn_prompt:
                raise BadInput(
                    f"template {self.name} judges one turn, but prompt {prompt.id} has "
                    f"{len(turns)} turns; use a multi-turn template (reta-multi, mt-bench-multi)"
                )
            if isinstance(reference, list) and len(reference) == 1:
                reference = reference[0]
            if needs_reference and not (isinstance(reference, str) and reference.strip()):
                raise BadInput(
                    f"template {self.name} shows a reference answer, but prompt "
                    f"{prompt.id} has none (prompt meta 'reference')"
                )
            return {
                "question": prompt.text.strip(),
                "answer": response.text,
                "reference": reference if needs_reference else "",
            }
        answers: Any = response.meta.get("turns")
        if not (multi_turn_prompt and len(turns) == _TURNS):
            raise BadInput(
                f"template {self.name} judges a two-turn conversation, but prompt "
                f"{prompt.id} has no two user turns (prompt meta 'turns')"
            )
        if not (isinstance(answers, list) and len(answers) == _TURNS):
            raise BadInput(
                f"template {self.name} judges a two-turn conversation, but response "
                f"{response.id} has no two answers (response meta 'turns')"
            )
        if needs_reference and not (isinstance(reference, list) and len(reference) == _TURNS):
            raise BadInput(
                f"template {self.name} shows reference answers, but prompt {prompt.id} "
                f"has no reference per turn (prompt meta 'reference')"
            )
        values = {
            "question_1": turns[0],
            "question_2": turns[1],
            "answer_1": answers[0],
            "answer_2": answers[1],
        }
        if needs_reference:
            values.update(reference_1=reference[0], reference_2=reference[1])
        else:
            values.update(reference_1="", reference_2="")
        return values


def load_oracle_template_file(path: Path) -> OracleTemplate:
    """A user's template: the file's text is the judge's (only) user message."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read the template ({error})", file=str(path)) from None
    try:
        return OracleTemplate(f"file {Path(path).name}", text)
    except BadInput as error:
        raise BadInput(error.problem, file=str(path)) from None


# -- the RETA paper's templates (RETA paper, arXiv 2504.14838, App. B.5), sent as one user message
# as printed ---

RETA_SINGLE = OracleTemplate(
    "reta-single",
    """\
[System]
We would like to request your feedback on the performance of the response provided by
an AI assistant to the user question. Your evaluation should consider correctness and
helpfulness. You will be given a reference answer and the assistant's answer. Begin
your evaluation by comparing the assistant's answer with the reference answer. Be as
objective as possible. Please output only one value on a line to represent the score
of the assistant's Answer on a scale of 1 to 10. No other explanation is needed.
Output with the following format: <score>, for example: 5.

<|The Start of Question|>
{question}
<|The End of Question|>

<|The Start of Reference Answer|>
{reference}
<|The End of Reference Answer|>

<|The Start of Assistant A's Answer|>
{answer}
<|The End of Assistant A's Answer|>
""",
    reply_tokens=2,
    max_tokens=16,
)

RETA_MULTI = OracleTemplate(
    "reta-multi",
    """\
[System]
Please act as an impartial judge and evaluate the quality of the response provided by
an AI assistant to the user question. Your evaluation should consider correctness and
helpfulness. You will be given a reference answer and the assistant's answer. Your
evaluation should moderately emphasize the assistant's answer to the second question.
Begin your evaluation by comparing the assistant's answer with the reference answer.
Be as objective as possible. Please output only one value on a line to represent the
score of the assistant's Answer on a scale of 1 to 10. No other explanation is
needed. Output with the following format: <score>, for example: 5.

<|The Start of Reference Answer|>
### User:
{question_1}

### Reference answer:
{reference_1}

### User:
{question_2}

### Reference answer:
{reference_2}
<|The End of Reference Answer|>

<|The Start of Assistant A's Conversation with User|>
### User:
{question_1}

### Assistant A:
{answer_1}

### User:
{question_2}

### Assistant A:
{answer_2}
<|The End of Assistant A's Conversation with User|>
""",
    reply_tokens=2,
    max_tokens=16,
)

# -- MT-bench's single-answer grading templates (Zheng et al. 2023; FastChat's
#    judge_prompts.jsonl: single-v1, single-math-v1 and their multi-turn versions) ------------

_MT_RATING = (
    "After providing your explanation, you must rate the response on a scale of 1 to 10 "
    'by strictly following this format: "[[rating]]", for example: "Rating: [[5]]".'
)

_MT_SINGLE_MATH = OracleTemplate(
    "mt-bench-single (with reference)",
    "[Instruction]\nPlease act as an impartial judge and evaluate the quality of the response "
    "provided by an AI assistant to the user question displayed below. Your evaluation should "
    "consider correctness and helpfulness. You will be given a reference answer and the "
    "assistant's answer. Begin your evaluation by comparing the assistant's answer with the "
    "reference answer. Identify and correct any mistakes. Be as objective as possible. "
    + _MT_RATING
    + "\n\n[Question]\n{question}\n\n[The Start of Reference Answer]\n{reference}\n"
    "[The End of Reference Answer]\n\n[The Start of Assistant's Answer]\n{answer}\n"
    "[The End of Assistant's Answer]",
    system="You are a helpful assistant.",
    reply_tokens=200,
    max_tokens=2048,
)

MT_BENCH_SINGLE = OracleTemplate(
    "mt-bench-single",
    "[Instruction]\nPlease act as an impartial judge and evaluate the quality of the response "
    "provided by an AI assistant to the user question displayed below. Your evaluation should "
    "consider factors such as the helpfulness, relevance, accuracy, depth, creativity, and level "
    "of detail of the response. Begin your evaluation by providing a short explanation. Be as "
    "objective as possible. " + _MT_RATING + "\n\n[Question]\n{question}\n\n"
    "[The Start of Assistant's Answer]\n{answer}\n[The End of Assistant's Answer]",
    system="You are a helpful assistant.",
    with_reference=_MT_SINGLE_MATH,
    reply_tokens=200,
    max_tokens=2048,
)

_MT_MULTI_MATH = OracleTemplate(
    "mt-bench-multi (with reference)",
    "<|The Start of Reference Answer|>\n\n### User:\n{question_1}\n\n### Reference answer:\n"
    "{reference_1}\n\n### User:\n{question_2}\n\n### Reference answer:\n{reference_2}\n\n"
    "<|The End of Reference Answer|>\n\n\n<|The Start of Assistant A's Conversation with User|>"
    "\n\n### User:\n{question_1}\n\n### Assistant A:\n{answer_1}\n\n### User:\n{question_2}\n\n"
    "### Assistant A:\n{answer_2}\n\n<|The End of Assistant A's Conversation with User|>",
    system="Please act as an impartial judge and evaluate the quality of the response provided by "
    "an AI assistant to the user question. Your evaluation should consider correctness and "
    "helpfulness. You will be given a reference answer and the assistant's answer. You evaluation "
    "should focus on the assistant's answer to the second question. Begin your evaluation by "
    "comparing the assistant's answer with the reference answer. Identify and correct any "
    "mistakes. Be as objective as possible. " + _MT_RATING + "\n\n",
    reply_tokens=200,
    max_tokens=2048,
)

MT_BENCH_MULTI = OracleTemplate(
    "mt-bench-multi",
    "<|The Start of Assistant A's Conversation with User|>\n\n### User:\n{question_1}\n\n"
    "### Assistant A:\n{answer_1}\n\n### User:\n{question_2}\n\n### Assistant A:\n{answer_2}\n\n"
    "<|The End of Assistant A's Conversation with User|>",
    system="Please act as an impartial judge and evaluate the quality of the response provided by "
    "an AI assistant to the user question displayed below. Your evaluation should consider "
    "factors such as the helpfulness, relevance, accuracy, depth, creativity, and level of detail "
    "of the response. You evaluation should focus on the assistant's answer to the second user "
    "question. Begin your evaluation by providing a short explanation. Be as objective as "
    "possible. " + _MT_RATING + "\n\n",
    with_reference=_MT_MULTI_MATH,
    reply_tokens=200,
    max_tokens=2048,
)

ORACLE_TEMPLATES: dict[str, OracleTemplate] = {
    t.name: t for t in (RETA_SINGLE, RETA_MULTI, MT_BENCH_SINGLE, MT_BENCH_MULTI)
}
