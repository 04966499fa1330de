"""The ``verifiable`` oracle: checks each response's final answer against a reference answer.

Reference answers come from prompt metadata, e.g. a JSONL prompt file read by the built-in
``jsonl`` source::

    {"prompt": "What is 17 + 25?", "reference": "42"}
    {"prompt": "Which planet is largest? (A) Mars (B) Jupiter", "reference": "B"}
    {"prompt": "Solve x^2 = 4 for x > 0.", "reference": ["x = 2"], "category": "math"}

A list (MT-bench's ``reference`` holds one worked answer per turn) is indexed with
``reference_index``.  Scores are ``correct`` or ``wrong`` — 10 and 1 by default, the range of
a 1-10 judge — rather than 1 and 0, because RETA divides by each prompt's mean oracle score
(RETA paper Eq. 5), which must be positive: with 1/0 a prompt that every response gets wrong
has mean 0 and RETA is undefined for it.  Only the ratio matters for RETA's normalised form;
best-of-n values are read on the same 1-10 scale as a judge's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, model_validator

from rmaudit import hookimpl
from rmaudit.components import ComponentOptions, Oracle, OracleLabel, Prompt, Response
from rmaudit.errors import BadInput
from rmaudit_verifiable.answers import check, infer_kind


class VerifiableOptions(ComponentOptions):
    reference_field: str = Field(
        "reference", description="prompt metadata field with the reference answer"
    )
    reference_index: int = Field(0, ge=0, description="which element when the field holds a list")
    kind: Literal["auto", "numeric", "choice", "exact"] = Field(
        "auto",
        description="how to compare; auto: a letter → choice, a number → numeric, else exact",
    )
    abs_tol: float = Field(1e-6, ge=0, description="numeric: absolute tolerance")
    rel_tol: float = Field(1e-6, ge=0, description="numeric: relative tolerance")
    correct: float = Field(10.0, description="score of a correct answer")
    wrong: float = Field(1.0, description="score of a wrong or missing answer")

    @model_validator(mode="after")
    def _scores_ordered(self):
        if not (math.isfinite(self.correct) and math.isfinite(self.wrong)):
            raise ValueError(
                f"expected finite scores, got correct = {self.correct}, wrong = {self.wrong}"
            )
        if self.correct <= self.wrong:
            raise ValueError(
                f"expected correct > wrong, got correct = {self.correct}, wrong = {self.wrong}"
            )
        return self


class VerifiableAnswer(Oracle):
    """Checks the response's final answer (number with tolerance, choice letter, or normalised text)
    against the prompt's reference."""

    name = "verifiable"
    Options = VerifiableOptions

    def reference(self, prompt: Prompt) -> str:
        """The prompt's reference answer as text; BadInput if the metadata lacks one."""
        field = self.options.reference_field
        where = f"prompt {prompt.text[:60]!r}"
        value: Any = prompt.meta.get(field)
        if isinstance(value, list):
            if self.options.reference_index >= len(value):
                raise BadInput(
                    f"{where}: expected at least {self.options.reference_index + 1} "
                    f"reference answers in metadata field {field!r}, got {len(value)}",
                    field="reference_index",
                )
            value = value[self.options.reference_index]
        if (
            isinstance(value, bool)
            or not isinstance(value, (str, int, float))
            or not str(value).strip()
        ):
            raise BadInput(
                f"{where}: expected a reference answer (text or number) in prompt "
                f"metadata field {field!r}",
                field="reference_field",
                value=value,
            )
        return str(value)

    def label(self, batch: Sequence[tuple[Prompt, Response]]) -> list[OracleLabel]:
        labels = []
        for prompt, response in batch:
            reference = self.reference(prompt)
            kind = infer_kind(reference) if self.options.kind == "auto" else self.options.kind
            ok = check(
                response.text,
                reference,
                kind,
                abs_tol=self.options.abs_tol,
                rel_tol=self.options.rel_tol,
            )
            score = self.options.correct if ok else self.options.wrong
            labels.append(OracleLabel(score=score, samples=(score,)))
        return labels


@hookimpl
def register_oracles(register):
    register(VerifiableAnswer)
