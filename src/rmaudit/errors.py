"""The kinds of failure the CLI distinguishes (docs/architecture.md, "Errors and exit
codes").

``BadInput`` is the user's to fix (recipe, data file, option, score values): the CLI
prints its one-line message and exits with 2.  ``WriterBusy`` (another process writes the
DB) and anything else that stops a run is a run failure: exit code 1.
"""

from __future__ import annotations

from typing import Any


class BadInput(ValueError):
    """Input that cannot be used, located as precisely as we can.

    The message reads ``FILE: FIELD: problem (got VALUE)``; every part that is known
    is included, so the user can find and fix the value without a traceback.
    """

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        field: str | None = None,
        value: Any = ...,
    ) -> None:
        self.problem = problem
        self.file = file
        self.field = field
        self.value = value
        super().__init__(self.one_line())

    def located(self, *, file: str | None = None, field: str | None = None) -> BadInput:
        """The same error with a file and/or an outer field path added."""
        inner = self.field
        joined: str | None
        if field and inner:
            joined = f"{field}.{inner}" if not inner.startswith("[") else f"{field}{inner}"
        else:
            joined = field or inner
        return BadInput(self.problem, file=file or self.file, field=joined, value=self.value)

    def one_line(self) -> str:
        parts = [p for p in (self.file, self.field) if p]
        text = self.problem
        if self.value is not ...:
            text += f" (got {self.value!r})"
        return ": ".join([*parts, text]).replace("\n", " ")


class MetricInputError(BadInput):
    """Metric inputs that violate a metric's contract (NaN scores, η outside (0, 1), ...).

    ``prompt_index`` says which prompt (position in the ``oracle``/``scores`` sequences)
    is at fault, when one is, so a caller holding prompt ids can name the prompt.
    """

    def __init__(
        self,
        problem: str,
        *,
        field: str | None = None,
        value: Any = ...,
        prompt_index: int | None = None,
    ) -> None:
        self.prompt_index = prompt_index
        super().__init__(problem, field=field, value=value)

    def located(self, *, file: str | None = None, field: str | None = None) -> BadInput:
        return BadInput.located(self, file=file, field=field)


class WriterBusy(RuntimeError):
    """Another process is writing the DB and this one chose not to wait (``store.lock``)."""

    def __init__(self, path: str, pid: int | None) -> None:
        self.pid = pid
        super().__init__(f"another rmaudit run is writing this DB (pid {pid or '?'}): {path}")
