"""Shared fixtures: a CLI runner that returns exit code and output, and small recipes."""

from __future__ import annotations

import gc
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

# One BLAS/OpenMP thread: the tests' matrices are tiny, and a BLAS that spreads each product
# over every core spends more waking threads than multiplying (k-DPP draws ran 10× slower on
# 2 cores).  The variables reach libraries loaded later (scipy's BLAS, torch) and every
# subprocess (CLI runs, Ray workers); threadpoolctl reaches numpy's BLAS, which the rmaudit
# pytest plugin loaded before this file.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
threadpool_limits(1)
# Output width is each test's own choice (monkeypatch.setenv("COLUMNS", ...)): a width the
# caller's environment brings (pytest-xdist's workers get COLUMNS=80) would wrap the lines
# that tests look for.
os.environ.pop("COLUMNS", None)

from _schedule import by_module_scheduler, longest_first  # noqa: E402
from _support import SMALL_RECIPE  # noqa: E402

from rmaudit.cli import main  # noqa: E402


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    longest_first(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    # What collection imported (torch, transformers, every test module) lives to the end:
    # frozen, no full collection walks it again; and a collection every 10,000 allocations
    # instead of 700.  In tests/hf, tests/tui and tests/ray (gc.callbacks), a worker's time in
    # the collector fell from about 11 s of 160 to 5-6 s; tests that need a collection call it.
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # pytest-xdist's; absent under -p no:xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    # -n alone: xdist's default is "load"; an explicit --dist other than it is kept
    return by_module_scheduler(config, log) if config.getvalue("dist") == "load" else None


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
