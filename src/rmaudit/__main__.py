"""The ``rmaudit`` command (pyproject's console script) and ``python -m rmaudit``.

Ctrl-C at any moment once rmaudit's code runs — while the command line itself is still
importing (click, ``importlib.metadata``, a command's module), while it exits — is one line
and exit code 130, as it is during a command (``rmaudit.cli.main``).  Only the interpreter's
own start-up, before the first line of rmaudit, is Python's.

numpy's BLAS (OpenBLAS) runs on one thread unless ``OPENBLAS_NUM_THREADS`` says otherwise
(docs/scaling.md, "Threads"): rmaudit's matrices are small, and OpenBLAS's threads wait for
work by spinning, so on two cores they cost more than they save (the main job's prompt
embedding took 8× the CPU time with two threads).  It must be set before numpy loads.
"""

import os
import sys

#: the line a Ctrl-C before the command line is ready prints
INTERRUPTED = "Interrupted (Ctrl-C)."


def blas_defaults() -> None:
    """One BLAS thread, unless the environment asks for more (read when numpy loads)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main() -> None:
    blas_defaults()
    try:
        from rmaudit.cli import main as command_line

        command_line()
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        sys.exit(130)
    except SystemExit:
        import signal

        # the command is done: a Ctrl-C while the interpreter shuts down is not a traceback
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise


if __name__ == "__main__":
    main()
