"""The header line of a portable benchmark file (``benchmark/portable.py``), validated as a
recipe is: one pydantic model, each problem one line naming the file, the line, the field and
the value (``benchmark.per_prompt: Input should be greater than or equal to 1 (got -3)``).

Keys rmaudit does not read are left alone: another tool's exporter may add its own.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rmaudit.errors import BadInput
from rmaudit.metrics.budget import LABEL_DESIGNS
from rmaudit.recipe.validation import bad_input
from rmaudit.store.records import LabelDesignRecord


class ExportedComponent(BaseModel):
    """A component that made the benchmark's items, as the exporting DB recorded it."""

    model_config = ConfigDict(strict=True)

    kind: str
    name: str
    version: int | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    simulated: bool = False


class LabelDesignHeader(BaseModel):
    """A budgeted benchmark's label design (docs/budget.md); its other keys are the design's."""

    model_config = ConfigDict(extra="allow")

    design: str

    @field_validator("design")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in LABEL_DESIGNS:
            raise ValueError(f"expected design {' or '.join(map(repr, LABEL_DESIGNS))}")
        return value


class BenchmarkHeader(BaseModel):
    """``{"benchmark": {...}}`` of the header line."""

    model_config = ConfigDict(strict=True)

    title: str
    policy_key: str = Field(min_length=1)
    oracle_key: str = Field(min_length=1)
    id: str | None = Field(None, min_length=1)
    selection_key: str | None = Field(None, min_length=1)
    per_prompt: int | None = Field(None, ge=1, description="responses per prompt")
    design: LabelDesignHeader | None = None
    simulated: bool = False
    components: dict[str, ExportedComponent] = Field(default_factory=dict)


def check_header(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """``raw`` (the header's ``benchmark`` object) checked; returned as read (a design's
    numbers are finite)."""
    try:
        header = BenchmarkHeader.model_validate(raw)
    except ValidationError as error:
        raise bad_input(error, BenchmarkHeader, raw, file=where, field="benchmark") from None
    if header.design is not None:
        try:
            LabelDesignRecord.from_json(raw["design"])
        except (TypeError, ValueError) as error:
            raise BadInput(
                f"not a label design ({error})", file=where, field="benchmark.design"
            ) from None
        for key, value in raw["design"].items():
            if isinstance(value, float) and not math.isfinite(value):
                raise BadInput(
                    "expected a finite number",
                    file=where,
                    field=f"benchmark.design.{key}",
                    value=value,
                )
    return raw
