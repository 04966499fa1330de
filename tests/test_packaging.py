"""A non-editable install carries every file the package reads: each data file under
src/rmaudit matches a ``[tool.setuptools.package-data]`` pattern (the README's main-audit
command installs rmaudit that way, and the simulated world reads its prompts from one)."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatchcase
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "rmaudit"


def test_every_data_file_is_package_data():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["rmaudit"]
    data_files = [
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc")
    ]
    assert data_files, "the simulated world's prompts are data files"
    # setuptools matches a pattern against the whole path below the package
    missing = [f for f in data_files if not any(fnmatchcase(f, p) for p in patterns)]
    assert not missing, f"not in package-data (a wheel would lack them): {missing}"
