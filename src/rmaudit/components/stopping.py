"""A component call the run no longer needs, asked to stop.

When a run stops (Ctrl-C, SIGTERM, an error in the driver) while the local executor's worker
thread is inside a component's call, the executor asks that call to stop and waits for it to
end before the run does: a process must not exit under a running model, whose threads torch
would then tear down mid-operation ("terminate called without an active exception").  A long
call — a Hugging Face model's thousands of inputs per call on a GPU — checks
:func:`raise_if_stopped` between its batches and ends early with :class:`CallStopped`; its
outputs would not be stored anyway.  A call that never checks runs to its end, and the run
waits for it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class CallStopped(Exception):
    """Raised inside a component call that was asked to stop (:func:`raise_if_stopped`)."""


_current = threading.local()


@contextmanager
def stoppable(stop: threading.Event) -> Iterator[None]:
    """Run the block (a component call, in the thread that makes it) asking to stop once
    ``stop`` is set."""
    _current.stop = stop
    try:
        yield
    finally:
        del _current.stop


def raise_if_stopped() -> None:
    """Raise :class:`CallStopped` if the call running in this thread was asked to stop
    (a call outside :func:`stoppable` never is)."""
    stop = getattr(_current, "stop", None)
    if stop is not None and stop.is_set():
        raise CallStopped()
