"""Every script in benchmarks/ runs at smoke size, so none can rot unnoticed.

Each script takes ``--smoke`` (tiny sizes, one repeat; ``benchmarks/_smoke.py``); its figures
at that size mean nothing, only that it runs to the end and prints them.  A new script is
picked up by its file name.  A script runs inside the test's process, as ``python SCRIPT
--smoke`` would run it (its own ``sys.argv``, ``sys.path`` and working directory), so that
the interpreter and the modules every script imports (numpy, scipy, torch, rmaudit) are
started once per test worker rather than once per script; what a script changes of the
process (``sys.path``, its modules, the environment, torch's thread count) is put back after
it.  The scripts of ``OWN_PROCESS`` still run in a fresh interpreter.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from _support import HANG_S, in_this_process

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
#: scripts whose smoke run has a test of its own that checks its figures too
OWN_TEST = {
    "bench_gpu.py": "tests/hf/test_bench_gpu.py",
    "bench_store.py": "tests/test_bench_store.py",
    "gpu_all.py": "tests/hf/test_gpu_all.py",
    "gpu_report.py": "tests/hf/test_gpu_all.py",
    "llmbar_leaderboard.py": "tests/test_llmbar_leaderboard.py",
}
#: scripts that change their process in ways a test worker must not inherit
OWN_PROCESS = {
    # ray.init and ray.shutdown of its own: the ray tests' Ray (tests/ray/conftest.py) lives
    # in the worker for the whole session
    "bench_ray.py",
    # a ProcessPoolExecutor forks the process it runs in: from a test worker, its threads too
    "budget_coverage.py",
    "coverage.py",
    "ece_intervals_tried.py",
    "pair_intervals.py",
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


def _in_a_fresh_interpreter(script: Path) -> tuple[int, str, str]:
    """``python SCRIPT --smoke`` in the working directory: exit code, stdout, stderr."""
    result = subprocess.run(
        [sys.executable, str(script), "--smoke"],
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    return result.returncode, result.stdout, result.stderr


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_runs_at_smoke_size(script, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    if script.name in OWN_PROCESS:
        code, out, err = _in_a_fresh_interpreter(script)
    else:
        code, out, err = in_this_process(script, monkeypatch, capsys)
    missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", err)
    if code and missing and missing.group(1).split(".")[0] in OPTIONAL:
        pytest.skip(f"{script.name} needs {missing.group(1)} (an optional extra)")
    assert code == 0, err[-3000:]
    assert out.strip(), f"{script.name} printed no figures"
    assert not list(tmp_path.iterdir()), f"{script.name} left files in the working directory"
