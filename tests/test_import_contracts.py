"""The layering is enforced (pyproject.toml, [tool.importlinter]): the core's ordered sub-layers
(errors < metrics | display < store < components < plugins < recipe < benchmark | backends <
default_plugins | testing < run < results < suites < report | tui < cli), no import cycle inside
any package, and no headless module imports textual, rich or click, even indirectly; the layers
of docs/architecture.md are the contract's, line for line."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import rmaudit

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "importlinter"
]
#: The modules allowed a UI toolkit: the command line, the terminal UI, ``python -m rmaudit`` and
#: the shared display helpers (whose ``formatting`` module is headless, ``literal`` is Rich).
PRESENTATION = {"cli", "tui", "__main__", "display"}


def test_the_import_contracts_are_kept():
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(no_cache=True, no_logo=True))",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_the_documented_layers_are_the_contracts_line_for_line():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("## Layers\n\n```\n", 1)[1].split("```", 1)[0]
    documented = [line.split("  ", 1)[0].strip() for line in block.splitlines()]
    layers = next(c for c in CONFIG["contracts"] if c["type"] == "layers")["layers"]
    assert documented == layers


def test_every_module_but_the_ui_is_held_headless():
    """A new module joins the headless contract (the layers contract is exhaustive: a module
    missing from it breaks that contract)."""
    modules = {info.name for info in pkgutil.iter_modules(rmaudit.__path__)}
    headless = next(c for c in CONFIG["contracts"] if c["type"] == "forbidden")
    listed = {m.removeprefix("rmaudit.") for m in headless["source_modules"]}
    assert listed == (modules - PRESENTATION) | {"display.formatting"}
    assert {"textual", "rich", "click"} <= set(headless["forbidden_modules"])


def test_a_new_import_cycle_breaks_a_contract(tmp_path):
    """The cycle contract is live: two modules of one package importing each other (one of them
    inside a function, as the old circles did) break it."""
    package = tmp_path / "rmaudit"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "inner" / "__init__.py").write_text("")
    (package / "inner" / "a.py").write_text("from rmaudit.inner import b\n")
    (package / "inner" / "b.py").write_text("def later():\n    from rmaudit.inner import a\n")
    cycle = next(c for c in CONFIG["contracts"] if c["type"] == "acyclic_siblings")
    (tmp_path / ".importlinter").write_text(
        "[importlinter]\nroot_package = rmaudit\n\n[importlinter:contract:cycles]\n"
        f"name = {cycle['name']}\ntype = acyclic_siblings\nancestors = rmaudit\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(no_cache=True, no_logo=True))",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "BROKEN" in result.stdout
