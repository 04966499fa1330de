"""The fields of a solution's row, checked: a data file's (PRMBench, ProcessBench) and a
step-scores file's.  A field that is missing or of the wrong kind is one ``BadInput`` naming
the file and line, the field and the value: an empty steps list, a step that is not a string,
step scores whose count differs from the steps, a score that is not a finite number."""

from __future__ import annotations

import math
from typing import Any

from rmaudit.errors import BadInput


def _shown(value: Any) -> Any:
    return value[:60] if isinstance(value, str) else value


def field_of(record: dict[str, Any], name: str, where: str) -> Any:
    if name not in record:
        raise BadInput("missing field", file=where, field=name)
    return record[name]


def text(record: dict[str, Any], name: str, where: str) -> str:
    value = field_of(record, name, where)
    if not isinstance(value, str):
        raise BadInput("expected a string", file=where, field=name, value=_shown(value))
    return value


def steps(record: dict[str, Any], name: str, where: str) -> tuple[str, ...]:
    """A non-empty list of strings, kept exactly as written."""
    value = field_of(record, name, where)
    if not isinstance(value, list):
        raise BadInput("expected a list of step strings", file=where, field=name, value=value)
    if not value:
        raise BadInput("an empty steps list: a solution needs a step", file=where, field=name)
    for i, step in enumerate(value):
        if not isinstance(step, str):
            raise BadInput("expected a string", file=where, field=f"{name}[{i}]", value=step)
    return tuple(value)


def whole(record: dict[str, Any], name: str, where: str, minimum: int) -> int:
    value = field_of(record, name, where)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise BadInput(f"expected a whole number ≥ {minimum}", file=where, field=name, value=value)
    return value


def whole_list(record: dict[str, Any], name: str, where: str, minimum: int) -> list[int]:
    value = field_of(record, name, where)
    if not isinstance(value, list):
        raise BadInput("expected a list of whole numbers", file=where, field=name, value=value)
    return [whole({f"{name}[{i}]": v}, f"{name}[{i}]", where, minimum) for i, v in enumerate(value)]


def flag(record: dict[str, Any], name: str, where: str) -> bool:
    value = field_of(record, name, where)
    if not isinstance(value, bool):
        raise BadInput("expected true or false", file=where, field=name, value=value)
    return value


def step_scores(record: dict[str, Any], name: str, where: str, count: int) -> tuple[float, ...]:
    """One finite number per step (``count`` of them)."""
    value = field_of(record, name, where)
    if not isinstance(value, list):
        raise BadInput("expected a list of numbers", file=where, field=name, value=_shown(value))
    if len(value) != count:
        raise BadInput(
            f"{len(value)} step scores for {count} steps: one score per step",
            file=where,
            field=name,
            value=len(value),
        )
    for i, score in enumerate(value):
        if (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            raise BadInput(
                "expected a finite number", file=where, field=f"{name}[{i}]", value=score
            )
    return tuple(float(score) for score in value)
