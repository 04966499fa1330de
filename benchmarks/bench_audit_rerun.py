"""An audit rerun with nothing to do: ``rmaudit audit length random --data-dir DATA``
(target: at most 3 s on 2 cores).

The audit is run once into a fresh SQLite file; then the same command is run again
``--repeats`` times, each in a fresh interpreter (as a user reruns an audit to print its
results again), and the median wall and CPU (user + system) times are printed with their
extremes and the load average.  Each rerun's printed output is checked identical.  Every
suite whose data lies under DATA runs (on rmaudit's shared data folder: RM-Bench, HH-RLHF with
its shift sweep, LLMBar and AlpacaEval best-of-16).  Bytecode is cached as in
``bench_rerun.py`` (``--bytecode none``: compiled in every interpreter).

    python benchmarks/bench_audit_rerun.py --data-dir ../shared/data   # median of 5
    python benchmarks/bench_audit_rerun.py --smoke    # a made-up LLMBar mirror, one repeat
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from _smoke import parse_args  # noqa: E402
from bench_rerun import (  # noqa: E402
    add_bytecode_option,
    cpu_seconds,
    interpreter_environment,
    report_reruns,
)

#: rmaudit's shared data folder beside a checkout (``--data-dir``'s default)
SHARED_DATA = ROOT.parent.parent / "shared" / "data"
LLMBAR_FOLDERS = (
    "Natural",
    "Adversarial/Neighbor",
    "Adversarial/GPTInst",
    "Adversarial/GPTOut",
    "Adversarial/Manual",
)


def made_up_mirror(folder: Path) -> Path:
    """A mirror with LLMBar's layout, a few pairs per subset (``--smoke``)."""
    for name in LLMBAR_FOLDERS:
        path = folder / "llmbar" / "LLMBar" / name / "dataset.json"
        path.parent.mkdir(parents=True)
        records = [
            {
                "input": f"{name} question {i}?",
                "output_1": "yes" + " indeed" * i,
                "output_2": f"a longer answer {i} " * (1 + i % 2),
                "label": 1 + i % 2,
            }
            for i in range(4)
        ]
        path.write_text(json.dumps(records), encoding="utf-8")
    return folder


def rmaudit_audit(data: Path, db: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """``rmaudit audit length random --data-dir DATA --db DB``: (wall s, CPU s, stdout)."""
    return timed_rmaudit(
        ["audit", "length", "random", "--data-dir", str(data), "--db", str(db)], env
    )


def timed_rmaudit(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """``rmaudit COMMAND`` in a fresh interpreter: (wall s, CPU s, stdout); a failure stops
    the benchmark with its stderr."""
    started, cpu = time.perf_counter(), cpu_seconds()
    result = subprocess.run(
        [sys.executable, "-m", "rmaudit", *command],
        capture_output=True,
        text=True,
        env=env,
    )
    if result.returncode:
        raise SystemExit(f"rmaudit {' '.join(command)} failed: {result.stderr.strip()[-2000:]}")
    return time.perf_counter() - started, cpu_seconds() - cpu, result.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=SHARED_DATA)
    parser.add_argument("--repeats", type=int, default=5)
    add_bytecode_option(parser)
    args = parse_args(parser, {"repeats": 1})
    with tempfile.TemporaryDirectory() as folder:
        data = made_up_mirror(Path(folder) / "data") if args.smoke else args.data_dir.resolve()
        db = Path(folder) / "audit.db"
        env = interpreter_environment(args.bytecode, Path(folder))
        first, _, _ = rmaudit_audit(data, db, env)
        print(
            f"first audit: {first:.1f} s; {os.cpu_count()} CPUs, load "
            f"{os.getloadavg()[0]:.2f}; bytecode {args.bytecode}; data {data}"
        )
        report_reruns("audit rerun", lambda: rmaudit_audit(data, db, env), args.repeats)


if __name__ == "__main__":
    main()
