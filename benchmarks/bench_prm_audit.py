"""A fresh PRMBench audit of the two baseline process reward models:
``rmaudit audit random step-length --suite prmbench --data-dir DATA`` into a new SQLite file
(target: under a minute on 2 cores), then its rerun with nothing to do.

Each audit runs in a fresh interpreter, as a user runs it, and its wall and CPU (user +
system) times are printed with the load average; the median of ``--repeats`` fresh audits,
each into a new file.  On rmaudit's shared data folder: PRMBench's 3,013 test solutions
(36,305 steps) — loaded, stored, scored by both baselines, every step metric with its ±, the
paired comparison and the verdict.  Bytecode is cached as in ``bench_rerun.py``.

    python benchmarks/bench_prm_audit.py --data-dir ../shared/data   # median of 3
    python benchmarks/bench_prm_audit.py --smoke    # a made-up PRMBench mirror, one repeat
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from _smoke import parse_args  # noqa: E402
from bench_audit_rerun import SHARED_DATA  # noqa: E402
from bench_rerun import add_bytecode_option, cpu_seconds, interpreter_environment  # noqa: E402

from rmaudit.suites import SUITES  # noqa: E402


def made_up_mirror(folder: Path) -> Path:
    """PRMBench's 17 file names under ``folder/prmbench``, three solutions each (``--smoke``)."""
    for file in SUITES["prmbench"].files:
        path = folder / file.mirror
        path.parent.mkdir(parents=True, exist_ok=True)
        classification = path.name.split("_4o_")[-1].split(".")[0]
        rows = [
            {
                "modified_question": f"what is {i} + {i}?",
                "question": f"what is {i} + {i}?",
                "modified_process": [f"{i} + {i}", f"= {2 * i}", "so the answer is"],
                "error_steps": [] if "multi" in path.name else [2],
                "classification": "multi_solutions" if "multi" in path.name else classification,
                "idx": f"toy_{i}",
            }
            for i in range(3)
        ]
        text = "".join(json.dumps(row) + "\n" for row in rows)
        path.write_bytes(gzip.compress(text.encode(), mtime=0))
    return folder


def audit(data: Path, db: Path, env: dict[str, str]) -> tuple[float, float]:
    """One ``rmaudit audit random step-length --suite prmbench``: (wall s, CPU s)."""
    command = ["audit", "random", "step-length", "--suite", "prmbench", "--data-dir", str(data)]
    started, cpu = time.perf_counter(), cpu_seconds()
    result = subprocess.run(
        [sys.executable, "-m", "rmaudit", *command, "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
        cwd=db.parent,
    )
    if result.returncode:
        raise SystemExit(f"rmaudit {' '.join(command)} failed: {result.stderr.strip()[-2000:]}")
    assert "PRMScore" in result.stdout and "paired over" in result.stdout
    return time.perf_counter() - started, cpu_seconds() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=SHARED_DATA)
    parser.add_argument("--repeats", type=int, default=3)
    add_bytecode_option(parser)
    args = parse_args(parser, {"repeats": 1})
    with tempfile.TemporaryDirectory() as folder:
        data = made_up_mirror(Path(folder) / "data") if args.smoke else args.data_dir.resolve()
        env = interpreter_environment(args.bytecode, Path(folder))
        audit(data, Path(folder) / "warm-up.db", env)  # compiles the bytecode cache once
        fresh = [audit(data, Path(folder) / f"audit-{i}.db", env) for i in range(args.repeats)]
        rerun = audit(data, Path(folder) / f"audit-{args.repeats - 1}.db", env)
    walls, cpus = [w for w, _ in fresh], [c for _, c in fresh]
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(
        f"fresh audit ({len(fresh)} runs): wall median {wall:.1f} s (min {min(walls):.1f}, "
        f"max {max(walls):.1f}); CPU median {cpu:.1f} s; {os.cpu_count()} CPUs, load "
        f"{os.getloadavg()[0]:.2f}; data {data}"
    )
    print(f"rerun, nothing to do: wall {rerun[0]:.1f} s, CPU {rerun[1]:.1f} s")


if __name__ == "__main__":
    main()
