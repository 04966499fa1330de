"""Every import path the docs show works, the 0.2 paths that did not move still do, and those
that moved are gone (docs/architecture.md, "Moved modules")."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
IMPORT = re.compile(r"^\s*from (rmaudit[\w.]*) import \(?([\w, ]+)", re.MULTILINE)
DOTTED = re.compile(r"`(rmaudit(?:\.\w+)+)`")
FILE_NAMES = {"rmaudit.db"}  # the default database file, not a module

#: the 0.2 import paths plugins were written against that did not move, and a name each gives
UNMOVED = {
    "rmaudit.recipe": ["load_recipe", "validate_options", "component_spec", "Recipe"],
    "rmaudit.plugins": ["load_plugins", "registered", "resolve", "pm"],
}


def documented_imports() -> list[tuple[str, str]]:
    found = set()
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        for module, names in IMPORT.findall(text):
            found.update((module, name.strip()) for name in names.split(",") if name.strip())
    return sorted(found)


def documented_dotted_names() -> list[str]:
    names = {name for page in DOCS for name in DOTTED.findall(page.read_text("utf-8"))}
    return sorted(names - FILE_NAMES)


@pytest.mark.parametrize(("module", "name"), documented_imports())
def test_every_import_in_the_docs_works(module, name):
    assert hasattr(importlib.import_module(module), name), f"from {module} import {name}"


@pytest.mark.parametrize("dotted", documented_dotted_names())
def test_every_dotted_name_in_the_docs_resolves(dotted):
    """`rmaudit.x.y` in the docs is a module, or a name reached from one (a class's method)."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:split]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[split:]:
            assert hasattr(found, attribute), dotted
            found = getattr(found, attribute)
        return
    raise AssertionError(f"{dotted}: no such module")


@pytest.mark.parametrize("module", sorted(UNMOVED))
def test_the_unmoved_paths_of_0_2_still_work(module):
    imported = importlib.import_module(module)
    for name in UNMOVED[module]:
        assert hasattr(imported, name), f"from {module} import {name}"


@pytest.mark.parametrize("module", ["rmaudit.hashing", "rmaudit.options", "rmaudit.panels"])
def test_the_moved_paths_of_0_2_are_gone(module):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(module)


def test_the_docs_show_imports_at_all():
    """The collectors above find what they should (so the tests cannot pass on nothing)."""
    imports = documented_imports()
    assert ("rmaudit.components", "RewardModel") in imports
    assert len(imports) >= 20 and len(documented_dotted_names()) >= 10
