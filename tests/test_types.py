"""The type checker passes on src/ (pyproject.toml, [tool.mypy]; its version pinned in
constraints.txt): None where a value is required, a wrong argument type, a missing attribute
are test failures, as ruff's findings are (tests/test_style.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_passes_on_src():
    # mypy's incremental cache is its default, the checkout's .mypy_cache (git ignores it):
    # the one `python -m mypy` run by hand keeps too, and it outlives the machine's /tmp, so a
    # rerun checks only the modules that changed (a minute cold, seconds warm)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert not result.stdout.strip(), result.stdout
