"""benchmarks/bench_store.py runs at its smoke size and reports every stage's exponents."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_store.py"
STAGES = (
    "prompts",
    "responses",
    "oracle labels",
    "pairs",
    "shifted pairs",
    "scores",
    "metrics",
    "total",
)
#: an exponent, or the time ratio when the doubled size did not change the stage's work
EXPONENT = re.compile(r"-?\d+\.\d\d|×\d+\.\d\d=|—")


def test_bench_store_runs_at_smoke_size(tmp_path):
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--smoke"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert not list(tmp_path.iterdir()), "bench_store.py left files in the working directory"
    rows = {
        cells[0]: cells
        for cells in (re.split(r"\s{2,}", line.strip()) for line in result.stdout.splitlines())
    }
    for stage in STAGES:
        cells = rows[stage]
        # stage, then for k: items, CPU, wall; for 2k and for 2N: items, CPU, wall, 2 exponents
        assert len(cells) == 14, cells
        assert all(EXPONENT.fullmatch(cells[i]) for i in (7, 8, 12, 13)), cells
        assert int(cells[4].replace(",", "")) >= int(cells[1].replace(",", "")), cells
