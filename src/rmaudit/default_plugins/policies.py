"""Built-in generic reference policies: responses written elsewhere, read from a file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from rmaudit import hookimpl
from rmaudit.benchmark.tabular import read_rows
from rmaudit.components import ComponentOptions, Generation, Prompt, ReferencePolicy
from rmaudit.components.options import HashedDataFile
from rmaudit.errors import BadInput


class ResponsesFileOptions(ComponentOptions):
    path: HashedDataFile  # its content, not its location, decides whether stored responses hold
    prompt_field: str = Field("prompt", description="field holding the prompt text")
    response_field: str = Field("response", description="field holding the response text")
    sample_field: str | None = Field(
        None,
        description="field holding the sample index (default: a prompt's responses in file order)",
    )


class ResponsesFile(ReferencePolicy[ResponsesFileOptions]):
    """Responses generated elsewhere, read from a JSONL, CSV or Parquet file by prompt text."""

    name = "responses-file"
    Options = ResponsesFileOptions

    def __init__(self, options: ResponsesFileOptions | None = None) -> None:
        super().__init__(options)
        self.table = self._read()

    def _read(self) -> dict[tuple[str, int], Generation]:
        o = self.options
        table: dict[tuple[str, int], Generation] = {}
        counts: dict[str, int] = {}
        for where, row in read_rows(Path(o.path)):
            prompt, text = _text(row, o.prompt_field, where), _text(row, o.response_field, where)
            if o.sample_field is None:
                index = counts[prompt] = counts.get(prompt, -1) + 1
            else:
                raw: Any = row.get(o.sample_field)  # any JSON value; int() decides
                try:
                    index = int(raw)
                except (TypeError, ValueError):
                    raise BadInput(
                        "expected a sample index (an integer)",
                        file=where,
                        field=o.sample_field,
                        value=raw if raw is not None else ...,
                    ) from None
            if (prompt, index) in table:
                raise BadInput(
                    f"a second response with sample index {index} for this prompt",
                    file=where,
                    field=o.sample_field or o.prompt_field,
                    value=prompt[:60],
                )
            meta = {
                k: v
                for k, v in row.items()
                if k not in (o.prompt_field, o.response_field, o.sample_field)
            }
            table[(prompt, index)] = Generation(text, meta)
        return table

    def generate(self, batch: Sequence[tuple[Prompt, int]]) -> list[Generation]:
        missing = [(p, i) for p, i in batch if (p.text, i) not in self.table]
        if missing:
            prompt, index = missing[0]
            raise BadInput(
                f"no response with sample index {index} for prompt {prompt.id} "
                f"(the recipe asks for responses.per_prompt per prompt)",
                file=str(self.options.path),
                field=self.options.prompt_field,
                value=prompt.text[:60],
            )
        return [self.table[(p.text, i)] for p, i in batch]


@hookimpl
def register_reference_policies(register):
    register(ResponsesFile)


def _text(row: dict[str, Any], field: str, where: str) -> str:
    """The string under ``field`` of a record; BadInput when it is missing or not a string."""
    value = row.get(field)
    if not isinstance(value, str):
        raise BadInput(
            "expected a string", file=where, field=field, value=value if value is not None else ...
        )
    return value
