"""``rmaudit audit length random --suite rewardbench-2`` end to end on a synthetic RewardBench 2
file: RewardBench 2's schema and subset sizes (Factuality 475, Precise IF 160, Math 183, Safety
450, Focus 495 rows of 1 correct and 3 incorrect completions; Ties 51 questions of a ref row,
1 correct and 5-10 incorrect short answers, and a tied row, 3-8 correct and 5-10 incorrect),
random words of realistic lengths (a completion 40-500 words).  The real file is on the hub
only; nothing here reaches it.

The first run goes into a fresh SQLite file, then the same command is rerun ``--repeats``
times (nothing to do), each in a fresh interpreter; wall and CPU (user + system) times are
printed with the load average.

    python benchmarks/bench_rewardbench2.py            # RewardBench 2's size, median of 3 reruns
    python benchmarks/bench_rewardbench2.py --smoke    # a tenth of it, one rerun
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from _smoke import parse_args  # noqa: E402
from bench_rerun import cpu_seconds, interpreter_environment, report_reruns  # noqa: E402

SIZES = {"Factuality": 475, "Precise IF": 160, "Math": 183, "Safety": 450, "Focus": 495}
QUESTIONS = 51
DATA = Path("reward-bench-2") / "data" / "test-00000-of-00001.parquet"


def synthetic_file(folder: Path, share: float) -> tuple[int, int]:
    """The data file under ``folder`` (a --data-dir), ``share`` of RewardBench 2's rows;
    returns (rows, completions)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(0)
    words = ["the", "of", "and", "to", "in", "is", "that", "for", "as", "with"]
    words += [f"w{i}" for i in range(3000)]

    def text(low: int, high: int) -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(low, high)))

    rows = []

    def add(ident: str, subset: str, prompt: str, chosen: list[str], rejected: list[str]):
        n = len(chosen) + len(rejected)
        rows.append(
            {
                "id": ident,
                "prompt": prompt,
                "chosen": chosen,
                "rejected": rejected,
                "num_correct": len(chosen),
                "num_incorrect": len(rejected),
                "total_completions": n,
                "models": [f"model-{rng.randint(0, 8)}" for _ in range(n)],
                "subset": subset,
                "additional_metadata": {"category": None, "method": None},
            }
        )

    for subset, size in SIZES.items():
        for i in range(max(1, round(size * share))):
            add(str(i), subset, text(10, 80), [text(40, 500)], [text(40, 500) for _ in range(3)])
    for q in range(max(1, round(QUESTIONS * share))):
        short = lambda count: [text(1, 15) for _ in range(count)]  # noqa: E731
        add(f"ref:{q}", "Ties", text(5, 20), short(1), short(rng.randint(5, 10)))
        add(f"tied:{q}", "Ties", text(5, 20), short(rng.randint(3, 8)), short(rng.randint(5, 10)))
    path = folder / DATA
    path.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return len(rows), sum(r["total_completions"] for r in rows)


def audit(data: Path, db: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """The command, in a fresh interpreter: (wall s, CPU s, stdout)."""
    started, cpu = time.perf_counter(), cpu_seconds()
    command = ["audit", "length", "random", "--suite", "rewardbench-2"]
    result = subprocess.run(
        [sys.executable, "-m", "rmaudit", *command, "--data-dir", str(data), "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
    )
    if result.returncode:
        raise SystemExit(f"rmaudit {' '.join(command)} failed: {result.stderr.strip()[-2000:]}")
    return time.perf_counter() - started, cpu_seconds() - cpu, result.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="reruns with nothing to do")
    parser.add_argument("--share", type=float, default=1.0, help="of RewardBench 2's rows")
    args = parse_args(parser, {"repeats": 1, "share": 0.1})
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows, completions = synthetic_file(folder / "data", args.share)
        env = interpreter_environment("cached", folder)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(ROOT.parent / "src"), *filter(None, [env.get("PYTHONPATH")])]
        )
        db = folder / "rb2.db"
        wall, cpu, _ = audit(folder / "data", db, env)
        print(f"{rows:,} rows, {completions:,} completions")
        print(f"first run: wall {wall:.1f} s, CPU (user + sys) {cpu:.1f} s; load "
              f"{os.getloadavg()[0]:.2f}")  # fmt: skip
        report_reruns("rerun", lambda: audit(folder / "data", db, env), args.repeats)


if __name__ == "__main__":
    main()
