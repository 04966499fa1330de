"""The Rich console every command prints through (a module of its own: it is all that the
light commands, such as ``rmaudit runs``, need of Rich's rendering)."""

from __future__ import annotations

import io
import os
from typing import IO, cast

from rich.console import Console

#: the width tables fit in output to a file or pipe without ``COLUMNS``
PIPE_WIDTH = 100


def console(stderr: bool = False) -> Console:
    """A console as wide as the terminal, or ``COLUMNS``; output to a file or pipe without
    ``COLUMNS`` fits its tables in :data:`PIPE_WIDTH` columns and never wraps a line of text
    (a line stays whole for grep).  Lines never end in spaces."""
    probe = Console(stderr=stderr)
    # stderr has the progress bars; a TrimmedLines is a text stream (io.TextIOBase), which
    # typeshed does not count as the IO[str] Console is annotated with
    stream = probe.file if stderr else cast(IO[str], TrimmedLines(probe.file))
    if probe.is_terminal or os.environ.get("COLUMNS", "").isdigit():
        return Console(file=stream, highlight=False)
    return Console(file=stream, highlight=False, width=PIPE_WIDTH, soft_wrap=True)


class TrimmedLines(io.TextIOBase):
    """A text stream that drops the spaces Rich leaves at the end of lines (left-justified
    titles, wrapped paragraphs)."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__()
        self.stream, self.partial = stream, ""

    def write(self, text: str) -> int:
        *lines, self.partial = (self.partial + text).split("\n")
        if lines:
            self.stream.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self.partial:
            self.stream.write(self.partial)
            self.partial = ""
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()
