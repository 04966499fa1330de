"""Every script in benchmarks/ runs at smoke size, so none can rot unnoticed.

Each script takes ``--smoke`` (tiny sizes, one repeat; ``benchmarks/_smoke.py``); its figures
at that size mean nothing, only that it runs to the end and prints them.  A new script is
picked up by its file name.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from _support import HANG_S

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
#: scripts whose smoke run has a test of its own that checks its figures too
OWN_TEST = {
    "bench_gpu.py": "tests/hf/test_bench_gpu.py",
    "bench_store.py": "tests/test_bench_store.py",
    "gpu_all.py": "tests/hf/test_gpu_all.py",
    "gpu_report.py": "tests/hf/test_gpu_all.py",
    "llmbar_leaderboard.py": "tests/test_llmbar_leaderboard.py",
}
SCRIPTS = sorted(
    p for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_") and p.name not in OWN_TEST
)
#: modules of optional extras: a script that needs a missing one is skipped, not failed
OPTIONAL = {
    "torch",
    "transformers",
    "tokenizers",
    "ray",
    "textual",
    "openai",
    "matplotlib",
    "pyarrow",
    "datasets",
    "sentence_transformers",
}


def test_every_benchmark_script_is_found():
    assert {"bench_kdpp.py", "bench_tui.py", "check_parsers.py"} <= {p.name for p in SCRIPTS}
    for script, test in OWN_TEST.items():
        assert (BENCHMARKS / script).is_file() and (BENCHMARKS.parent / test).is_file()


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_runs_at_smoke_size(script, tmp_path):
    result = subprocess.run(
        [sys.executable, str(script), "--smoke"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", result.stderr)
    if result.returncode and missing and missing.group(1).split(".")[0] in OPTIONAL:
        pytest.skip(f"{script.name} needs {missing.group(1)} (an optional extra)")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip(), f"{script.name} printed no figures"
    assert not list(tmp_path.iterdir()), f"{script.name} left files in the working directory"
