"""Built-in file prompt sources: JSON Lines with a field mapping."""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from rmaudit import hookimpl
from rmaudit.components import ComponentOptions, PromptSource
from rmaudit.errors import BadInput
from rmaudit.options import DataFile


class JsonlOptions(ComponentOptions):
    path: DataFile
    text_field: str = Field("prompt", description="field holding the prompt text")
    meta_fields: list[str] | None = Field(None, description="fields kept as metadata (default: all others)")


class JsonlPrompts(PromptSource):
    """Prompts from a JSON Lines file, one object per line."""

    name = "jsonl"
    Options = JsonlOptions

    def load(self) -> list[tuple[str, dict[str, Any]]]:
        records = []
        path = self.options.path
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                where = f"{path}:{number}"
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    raise BadInput(f"invalid JSON ({error.msg})", file=where) from None
                if not isinstance(record, dict):
                    raise BadInput("expected a JSON object", file=where, value=record)
                text = record.get(self.options.text_field)
                if not isinstance(text, str) or not text.strip():
                    raise BadInput("expected a non-empty string", file=where,
                                   field=self.options.text_field, value=text if text is not None else ...)
                keep = self.options.meta_fields
                meta = {k: v for k, v in record.items()
                        if k != self.options.text_field and (keep is None or k in keep)}
                records.append((text, meta))
        if not records:
            raise BadInput("no prompts in file", file=str(path))
        return records


@hookimpl
def register_prompt_sources(register):
    register(JsonlPrompts)
