"""Shared fixtures: a CLI runner that returns exit code and output, and small recipes."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from _support import SMALL_RECIPE
from rmaudit.cli import main


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def rmaudit(capsys):
    """Run the rmaudit CLI in-process: rmaudit("run", "x.toml") -> CliResult."""

    def invoke(*args: str) -> CliResult:
        capsys.readouterr()
        try:
            main(list(args))
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 1
        else:  # main always exits
            code = -1
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return invoke


@pytest.fixture
def write_recipe(tmp_path):
    """Write a recipe (default: the small simulated one) and return its path."""

    def write(text: str | None = None, name: str = "recipe.toml", extra_rms: str = "") -> Path:
        path = tmp_path / name
        body = SMALL_RECIPE.replace("{extra_rms}", extra_rms) if text is None else text
        path.write_text(textwrap.dedent(body), encoding="utf-8")
        return path

    return write
