"""The template options of a judge under audit (``llm-judge-rm``, ``hf-judge-rm``;
docs/judges.md): its mode, and the :class:`~.verdicts.VerdictTemplate` it is shown, held as
the record itself.

A recipe names the template (``template``) or gives its file (``template_file``), and the
options read it here, once; ``rmaudit audit`` reads ``--judge-template`` itself and hands the
record in, which the options keep as it is.  Either way the judge gets the same record, and
its identity holds the template's name or its file's SHA-256.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)

from rmaudit.components.options import DataFile, HashedDataFile
from rmaudit.errors import BadInput

from .verdicts import DEFAULT, VerdictTemplate, named_template, template_file

_DATA_FILE: TypeAdapter[Path] = TypeAdapter(DataFile)


def _by_name(value: Any, info: ValidationInfo) -> VerdictTemplate:
    if isinstance(value, VerdictTemplate) and value.file is None:
        return value
    if not isinstance(value, str):
        raise ValueError("expected a template name")
    return named_template(value, info.data.get("judge_prompts_file"))


def _from_file(value: Any, info: ValidationInfo) -> VerdictTemplate:
    if isinstance(value, VerdictTemplate) and value.file is not None:
        return value
    if not isinstance(value, str | Path):
        raise ValueError("expected a template file's path")
    path = _DATA_FILE.validate_python(value, context=info.context)
    try:
        return template_file(path)
    except BadInput as error:  # the recipe's file and field locate it; the path is the value
        raise BadInput(error.problem, value=str(path)) from None


#: a template by name, read when the options are validated (MT-bench's from
#: ``judge_prompts_file``, validated before it)
TemplateName = Annotated[
    VerdictTemplate, BeforeValidator(_by_name), WithJsonSchema({"type": "string"})
]
#: a template file, read when the options are validated
TemplateFile = Annotated[
    VerdictTemplate,
    BeforeValidator(_from_file),
    WithJsonSchema({"type": "string", "format": "path"}),
]


class VerdictTemplateOptions(BaseModel):
    """A judge's mode and template (at most one of ``template`` and ``template_file``, of the
    judge's mode; neither: rmaudit's own)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["pairwise", "rating"] = Field(
        "pairwise", description="judge pairs in both orders, or rate each response 1-10"
    )
    # declared before template: a template name is looked up in it
    judge_prompts_file: HashedDataFile | None = Field(
        None, description="MT-bench's judge_prompts.jsonl (FastChat), for template names"
    )
    template: TemplateName | None = Field(
        None,
        description="a built-in template (rmaudit-pair, rmaudit-rating) or an MT-bench prompt "
        "name (pair-v2, single-v1, ...) read from judge_prompts_file; default: rmaudit's own",
    )
    # the file's words, not where it lies, decide the verdicts
    template_file: TemplateFile | None = Field(
        None, description="a template file: its text is the judge's user message"
    )

    @model_validator(mode="after")
    def _one_template_of_the_mode(self) -> Self:
        if self.template is not None and self.template_file is not None:
            raise BadInput("give template or template_file, not both", field="template_file")
        given, field = (
            (self.template_file, "template_file")
            if self.template_file is not None
            else (self.template, "template")
        )
        if given is not None and given.mode != self.mode:
            raise BadInput(
                f"judge template {given.name} is a {given.mode} template; mode is {self.mode}",
                field=field,
                value=given.model_dump(mode="json"),
            )
        return self

    @property
    def verdict_template(self) -> VerdictTemplate:
        """The template the judge is shown."""
        return self.template_file or self.template or DEFAULT[self.mode]
