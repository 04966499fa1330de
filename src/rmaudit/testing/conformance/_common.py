"""What every conformance check shares: the error it raises, how it names a component, the
checks of every kind (options, identity), and how a check expects a refusal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from rmaudit.components import Component
from rmaudit.errors import BadInput

C = TypeVar("C", bound=Component[Any])
#: a kind's checks by name, each a function of what the kind's checks share (its subject)
Checks = dict[str, Callable[[Any], None]]


class ConformanceError(AssertionError):
    """A component breaks a contract of rmaudit; the message names the component and the check."""


def instance(component: C | type[C]) -> C:
    return component() if isinstance(component, type) else component


def describe(component: Component) -> str:
    cls = type(component)
    return f"{component.kind} {component.name!r} ({cls.__module__}.{cls.__name__})"


def short(array: Any) -> str:
    return np.array2string(np.asarray(array), precision=6, threshold=8)


def check_options(component: Component) -> None:
    """Options that validate again as a run stores them (its recipe as JSON) and refuse an
    unknown name (a misspelt option is an error, not a default)."""
    from rmaudit.recipe.validation import validate_options

    label, cls = describe(component), type(component)
    dumped = component.options.model_dump(mode="json")

    def again(raw: dict[str, Any]) -> Any:
        return validate_options(cls, raw, field=cls.name, file=None, base_dir=None)

    try:
        validated = again(dumped)
    except BadInput as error:
        raise ConformanceError(
            f"{label}: its options do not validate again as they are: {error.one_line()}"
        ) from None
    if validated != component.options:
        raise ConformanceError(f"{label}: its options change when validated again: {validated!r}")
    try:
        again({**dumped, "conformance_unknown_option": 1})
    except BadInput:
        return
    raise ConformanceError(f"{label}: an unknown option must be an error, not ignored")


def check_identity(component: Component) -> None:
    """An identity that names the component's kind, and the same key from a fresh instance
    with the same options (what the store keys its outputs by)."""
    fresh = type(component)(component.options)
    if component.identity().get("kind") != component.kind or fresh.key != component.key:
        raise ConformanceError(
            f"{describe(component)}: identity() must name the kind {component.kind!r} and give "
            f"the same key for the same options, got {component.identity()!r}"
        )


#: the checks of every kind, whatever it does
COMMON: Checks = {"options": check_options, "identity": check_identity}


def valid_or_refused(label: str, what: str, call: Callable[[], Any]) -> Any:
    """``call()``'s output, or None where it raised ``BadInput`` (a clear, located refusal);
    any other error is a ConformanceError saying that ``what`` should give either."""
    try:
        return call()
    except BadInput:
        return None
    except ConformanceError:
        raise
    except Exception as error:
        raise ConformanceError(
            f"{label}: {what} should give a valid output or raise rmaudit.errors.BadInput, got "
            f"{type(error).__name__}: {error}"
        ) from None


def refused(label: str, what: str, call: Callable[[], Any], shown: Callable[[Any], str]) -> None:
    """``call()`` must raise ``BadInput``: an output (``shown`` says what it was) or another
    error is a ConformanceError saying that ``what`` should."""
    try:
        output = call()
    except BadInput:
        return
    except Exception as error:
        raise ConformanceError(
            f"{label}: {what} should raise rmaudit.errors.BadInput, got "
            f"{type(error).__name__}: {error}"
        ) from None
    raise ConformanceError(
        f"{label}: {what} should raise rmaudit.errors.BadInput, but it returned {shown(output)}"
    )
