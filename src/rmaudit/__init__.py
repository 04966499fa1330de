"""rmaudit: audit reward models against an oracle — RETA, best-of-n and more.

Plugin authors import ``hookimpl`` from here::

    from rmaudit import hookimpl

    @hookimpl
    def register_metrics(register):
        register(MyMetric)
"""

from importlib.metadata import PackageNotFoundError, version

import pluggy

try:
    __version__ = version("rmaudit")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0+unknown"

hookimpl = pluggy.HookimplMarker("rmaudit")

__all__ = ["__version__", "hookimpl"]
