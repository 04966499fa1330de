"""The type checker passes on src/ (pyproject.toml, [tool.mypy]; its version pinned in
constraints.txt): None where a value is required, a wrong argument type, a missing attribute
are test failures, as ruff's findings are (tests/test_style.py)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: mypy's incremental cache, outside the checkout (one per checkout) and kept between test
#: runs: a rerun checks only the modules that changed (a minute cold, seconds warm)
CACHE = Path(tempfile.gettempdir()) / (
    "rmaudit-mypy-cache-" + hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
)


def test_mypy_passes_on_src():
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(CACHE), "--no-error-summary"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert not result.stdout.strip(), result.stdout
