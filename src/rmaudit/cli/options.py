"""The options and arguments several commands share, declared once: the DB they store in or
read, the type of a number flag (finite, in its range), a choice that suggests the closest
name, and flags handed over as one record."""

from __future__ import annotations

import difflib
import functools
import math
from collections.abc import Callable
from typing import Any, TypeVar

import click

#: the DB of ``rmaudit run`` and of the commands that read it (``rmaudit audit`` keeps its own)
DEFAULT_DB = "rmaudit.db"

F = TypeVar("F", bound=Callable[..., Any])


class Choice(click.Choice):
    """``click.Choice`` whose refusal of a misspelt value names the closest choice first
    (``--suite llmbr``: did you mean 'llmbar'?), then the choices."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            choices = [str(choice) for choice in self.choices]
            close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}? " if close else ""
            self.fail(f"{value!r}: {hint}choose from {', '.join(choices)}", param, ctx)


def db_option(
    help: str = "SQLite file that stores everything.",
    *,
    default: str | None = DEFAULT_DB,
    name: str = "db_path",
) -> Callable[[F], F]:
    """``--db FILE``: the SQLite file a command stores in or reads (``default=None``: the
    command finds it otherwise, from its arguments)."""
    return click.option(
        "--db",
        name,
        default=default,
        show_default=default is not None,
        type=click.Path(dir_okay=False),
        help=help,
    )


def db_argument(*, optional: bool = True) -> Callable[[F], F]:
    """``[DB]``: the SQLite file a read-only command reads (default ``rmaudit.db``), or ``DB``."""
    if optional:
        return click.argument(
            "db_path", metavar="[DB]", default=DEFAULT_DB, type=click.Path(dir_okay=False)
        )
    return click.argument("db_path", metavar="DB", type=click.Path(dir_okay=False))


class FiniteFloat(click.FloatRange):
    """A number flag in its range and finite: click's ``FloatRange`` lets ``nan`` (which no
    comparison refuses) and ``inf`` (with no upper bound) through.  A refusal shows the value
    as it was written."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            number = super().convert(value, param, ctx)
        except click.BadParameter:
            number = math.nan
        if not math.isfinite(number):
            bounded = self.min is not None or self.max is not None
            within = f" in the range {self._describe_range()}" if bounded else ""
            self.fail(f"{value!r} is not a finite number{within}.", param, ctx)
        return number


def grouped(into: str, record: Callable[..., Any], *options: Callable[[F], F]) -> Callable[[F], F]:
    """Put under ``@click.command()``: adds ``options`` and calls the command with
    ``into=record(**their values)`` in their place, so a group of flags travels as one record."""
    probe: Any = lambda: None  # noqa: E731 (the options' names are read off it)
    names = [
        param.name for param in functools.reduce(lambda f, o: o(f), options, probe).__click_params__
    ]

    def add(command: F) -> F:
        @functools.wraps(command)
        def with_record(*args: Any, **kwargs: Any) -> Any:
            values = {name: kwargs.pop(name) for name in names}
            return command(*args, **{into: record(**values)}, **kwargs)

        return functools.reduce(lambda f, option: option(f), reversed(options), with_record)  # type: ignore[return-value]

    return add
