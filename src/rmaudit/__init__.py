"""rmaudit: audit reward models against an oracle — RETA, best-of-n and more.

Plugin authors import ``hookimpl`` from here::

    from rmaudit import hookimpl

    @hookimpl
    def register_metrics(register):
        register(MyMetric)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pluggy

    __version__: str
    hookimpl: pluggy.HookimplMarker

__all__ = ["__version__", "hookimpl"]


def __getattr__(name: str) -> Any:
    """``__version__`` and ``hookimpl``, made on first use: ``import rmaudit`` itself imports
    nothing (not ``importlib.metadata``, not pluggy), so the command line's own code runs at
    once and a Ctrl-C from there on is one line (``rmaudit.__main__``)."""
    value: Any
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("rmaudit")
        except PackageNotFoundError:  # running from a source tree without an install
            value = "0+unknown"
    elif name == "hookimpl":
        import pluggy

        value = pluggy.HookimplMarker("rmaudit")
    else:
        raise AttributeError(f"module 'rmaudit' has no attribute {name!r}")
    globals()[name] = value
    return value
