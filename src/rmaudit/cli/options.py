"""The options and arguments several commands share, declared once: the DB they store in or read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

#: the DB of ``rmaudit run`` and of the commands that read it (``rmaudit audit`` keeps its own)
DEFAULT_DB = "rmaudit.db"

F = TypeVar("F", bound=Callable[..., Any])


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
