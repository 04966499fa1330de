"""Recipe tables validated: a component table resolved through the plugin host and its options
checked against the component's model, the first problem as one ``BadInput`` line naming the
field and the value, unknown options with a "did you mean", and ``true``/``false``
refused where a field takes no bool (pydantic would read ``k = true`` as 1)."""

from __future__ import annotations

import difflib
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from rmaudit import plugins
from rmaudit.components import Component
from rmaudit.errors import BadInput


class StrictTable(BaseModel):
    """A recipe table whose unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


def validate_options(
    cls: type[Component],
    raw: dict[str, Any],
    *,
    field: str,
    file: str | None,
    base_dir: Path | None,
    slot_keys: tuple[str, ...] = (),
) -> BaseModel:
    """Validate ``raw`` against ``cls.Options``; the first problem becomes a BadInput
    (``slot_keys``: the keys the table holds beside the options, such as ``label``, which a
    misspelt key may have meant)."""
    refuse_bools(cls.Options, raw, file=file, field=field)
    try:
        return cls.Options.model_validate(
            raw, context={"base_dir": base_dir, "file": file, "resolve_component": component_spec}
        )
    except ValidationError as error:
        raise bad_input(error, cls.Options, raw, file=file, field=field, also=slot_keys) from None


@dataclass(frozen=True)
class ComponentSpec:
    """A validated component slot of a recipe: what to build, and where it was written."""

    kind: str
    cls: type[Component]
    options: BaseModel
    field: str
    label: str

    def build(self) -> Component:
        return self.cls(self.options)


def component_spec(
    kind: str,
    raw: Any,
    *,
    field: str,
    file: str | None,
    base_dir: Path | None,
    labelled: bool = False,
) -> ComponentSpec:
    """Resolve and validate one ``{name = ..., <options>}`` table of a recipe (``field`` is
    where it was written; empty for a table nested in options, located by its holder)."""
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict):
        raise BadInput(
            "expected a table with a 'name' key", file=file, field=field or None, value=raw
        )
    options = dict(raw)
    name = options.pop("name", None)
    if not isinstance(name, str) or not name:
        misspelt = difflib.get_close_matches("name", [str(key) for key in options], n=1)
        raise BadInput(
            "missing component name" + (f" ({misspelt[0]!r}?)" if misspelt else ""),
            file=file,
            field=within(field, "name"),
            value=name if name is not None else ...,
        )
    label = options.pop("label", None) if labelled else None
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise BadInput(
            "expected a non-empty string", file=file, field=within(field, "label"), value=label
        )
    found = plugins.resolve(kind, name, field=within(field, "name"), file=file)
    slot_keys = ("name", "label") if labelled else ("name",)
    parsed = validate_options(
        found.cls, options, field=field, file=file, base_dir=base_dir, slot_keys=slot_keys
    )
    return ComponentSpec(kind, found.cls, parsed, field, label or name)


def refuse_bools(model: type[BaseModel], raw: Any, *, file: str | None, field: str) -> None:
    """``true``/``false`` where a field takes no bool (pydantic reads ``k = true`` as 1), in
    ``raw`` and the sections and lists nested in it."""
    if not isinstance(raw, dict):
        return
    for name, value in raw.items():
        info = model.model_fields.get(name)
        if info is None:
            continue
        where = within(field, name)
        nested = _section_model(info.annotation)
        if nested is not None:
            refuse_bools(nested, value, file=file, field=where)
        elif not _admits_bool(info.annotation):
            for i, item in enumerate(value if isinstance(value, list) else [value]):
                if isinstance(item, bool):
                    raise BadInput(
                        "expected a number or text, not true/false",
                        file=file,
                        field=where + (f"[{i}]" if isinstance(value, list) else ""),
                        value=item,
                    )


def _admits_bool(annotation: Any) -> bool:
    if annotation is bool or annotation is Any:
        return True
    return any(_admits_bool(arg) for arg in typing.get_args(annotation))


def _section_model(annotation: Any) -> type[BaseModel] | None:
    """The model of a recipe section (``PromptsSection``, ``X | None``), else None."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def within(field: str, option: str) -> str:
    return f"{field}.{option}" if field else option


def bad_input(
    error: ValidationError,
    model: type[BaseModel],
    raw: dict[str, Any],
    *,
    file: str | None,
    field: str,
    also: tuple[str, ...] = (),
) -> BadInput:
    """The first of ``error``'s problems as one line (``also``: keys known beside the model's
    fields, for a misspelt key's "did you mean")."""
    errors = error.errors()
    # a misspelt key is the cause, a required key then "missing" only its symptom
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
    where = f"{field}{loc}" if field else loc.lstrip(".")
    nested = first.get("ctx", {}).get("error")
    if isinstance(
        nested, BadInput
    ):  # a nested component's table (rmaudit.components.options.Nested)
        return nested.located(file=file, field=where)
    problem = first["msg"]
    value = first.get("input", ...)
    if first["type"] == "extra_forbidden":
        return _unknown_key(first["loc"], model, value, file=file, where=where, also=also)
    if problem.startswith("Value error, "):
        problem = problem.removeprefix("Value error, ")
    if first["type"] == "missing":
        value = ...
    return BadInput(problem, file=file, field=where, value=value)


def _unknown_key(
    loc: tuple,
    model: type[BaseModel],
    value: Any,
    *,
    file: str | None,
    where: str,
    also: tuple[str, ...] = (),
) -> BadInput:
    """A key the model (or the section it lies in) does not know, with the closest known one
    (of its fields, and of ``also`` for a key of the top table)."""
    for part in loc[:-1]:  # the section the key was written in: its own known keys
        info = model.model_fields.get(part) if isinstance(part, str) else None
        section = _section_model(info.annotation) if info is not None else None
        if section is not None:
            model = section
    known = sorted(model.model_fields)
    close = difflib.get_close_matches(
        str(loc[-1]), known + list(also if len(loc) == 1 else ()), n=1
    )
    table = isinstance(value, dict) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)
    )
    problem = ("unknown table" if table else "unknown option") + (
        f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(known) or 'none'}"
    )
    return BadInput(problem, file=file, field=where, value=... if table else value)
