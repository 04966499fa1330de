"""What every conformance check shares: the error it raises and how it names a component."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from rmaudit.components import Component

C = TypeVar("C", bound=Component[Any])


class ConformanceError(AssertionError):
    """A component breaks a contract of rmaudit; the message names the component and the check."""


def instance(component: C | type[C]) -> C:
    return component() if isinstance(component, type) else component


def describe(component: Component) -> str:
    cls = type(component)
    return f"{component.kind} {component.name!r} ({cls.__module__}.{cls.__name__})"


def short(array: np.ndarray | None) -> str:
    return np.array2string(np.asarray(array), precision=6, threshold=8)
