"""The Rich console every command prints through (a module of its own: it is all that the
light commands, such as ``rmaudit runs``, need of Rich's rendering)."""

from __future__ import annotations

from rich.console import Console


def console(stderr: bool = False) -> Console:
    """A console; when output goes to a file or pipe, tables are not squeezed to 80 columns."""
    probe = Console(stderr=stderr)
    width = None if probe.is_terminal else 200
    return Console(stderr=stderr, highlight=False, width=width)
