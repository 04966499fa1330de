"""The ``rmaudit`` command (pyproject's console script) and ``python -m rmaudit``.

Ctrl-C at any moment once rmaudit's code runs — while the command line itself is still
importing (click, ``importlib.metadata``, a command's module), while it exits — is one line
and exit code 130, as it is during a command (``rmaudit.cli.main``).  Only the interpreter's
own start-up, before the first line of rmaudit, is Python's.
"""

import sys

#: the line a Ctrl-C before the command line is ready prints
INTERRUPTED = "Interrupted (Ctrl-C)."


def main() -> None:
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
