"""The layering is enforced (pyproject.toml, [tool.importlinter]): metrics <- core <- plugins <-
tui <- cli, and no headless module imports textual, rich or click, even indirectly."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import rmaudit

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
#: The modules allowed a UI toolkit: the command line, the terminal UI and ``python -m rmaudit``.
PRESENTATION = {"cli", "tui", "__main__"}


def test_the_import_contracts_are_kept():
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
                               "sys.exit(lint_imports(no_cache=True, no_logo=True))"],
        cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_every_module_but_the_ui_is_held_headless():
    """A new module joins the headless contract (the layers contract is exhaustive: a module
    missing from it breaks that contract)."""
    modules = {info.name for info in pkgutil.iter_modules(rmaudit.__path__)}
    headless = next(c for c in CONFIG["contracts"] if c["type"] == "forbidden")
    assert {m.removeprefix("rmaudit.") for m in headless["source_modules"]} == modules - PRESENTATION
    assert {"textual", "rich", "click"} <= set(headless["forbidden_modules"])
