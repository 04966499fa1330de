"""RewardMATH's recorded models audited: ``rmaudit audit --suite rewardmath --recorded-judges``
and ``--suite rewardbench-math`` (targets: every results file from a fresh DB in at most 30 s,
a rerun in at most 3 s, on 2 cores; docs/rewardmath.md).

Each suite is audited once into a fresh SQLite file (on rmaudit's shared data folder: 23
results files × 483 problems × 10 solutions, and 13 × 447 × 2), then again ``--repeats``
times with nothing to do, each in a fresh interpreter, printing its tables at 100 columns;
the wall and CPU (user + system) times are printed with the load average, and each rerun's
tables are checked identical to the first run's.  Bytecode is cached as in ``bench_rerun.py``.

    python benchmarks/bench_rewardmath.py --data-dir ../shared/data   # reruns: median of 5
    python benchmarks/bench_rewardmath.py --smoke    # a made-up folder of three models
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from _smoke import parse_args  # noqa: E402
from bench_audit_rerun import SHARED_DATA, timed_rmaudit  # noqa: E402
from bench_recorded_judges import same  # noqa: E402
from bench_rerun import add_bytecode_option, interpreter_environment, report_reruns  # noqa: E402

SUITES = {"rewardmath": "RewardMATH/*_reward.json*", "rewardbench-math": "Rewardbench/*.json*"}


def made_up_folder(data: Path) -> Path:
    """Three classifiers' results on 20 made-up problems, in both suites' layouts."""
    rng = np.random.default_rng(0)
    names = ["human_to_GPT-4", *(f"model-{j}" for j in range(9))]
    for suite, count, stem in (
        ("RewardMATH", 10, "{}_reward"),
        ("Rewardbench", 2, "rewardbench_{}"),
    ):
        folder = data / "rewardmath" / "results" / suite
        folder.mkdir(parents=True)
        for model in ("a", "b", "c"):
            records = [
                {
                    "problem": f"Problem {i}?",
                    "solution_reference": names[:count],
                    "score": (rng.normal(0, 1, count) + np.eye(count)[0]).round(3).tolist(),
                }
                for i in range(20)
            ]
            path = folder / f"{stem.format(model)}.json.gz"
            path.write_bytes(gzip.compress(json.dumps(records).encode()))
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=SHARED_DATA)
    parser.add_argument("--repeats", type=int, default=5)
    add_bytecode_option(parser)
    args = parse_args(parser, {"repeats": 1})
    with tempfile.TemporaryDirectory() as folder:
        data = made_up_folder(Path(folder) / "data") if args.smoke else args.data_dir.resolve()
        env = {**interpreter_environment(args.bytecode, Path(folder)), "COLUMNS": "100"}
        for suite, files in SUITES.items():
            audit_suite(suite, data, Path(folder) / f"{suite}.db", env, args)
            models = len(list((data / "rewardmath" / "results").glob(files)))
            print(f"  ({models} results files; data {data})")


def audit_suite(
    suite: str, data: Path, db: Path, env: dict[str, str], args: argparse.Namespace
) -> None:
    """One suite from a fresh DB, then ``args.repeats`` reruns, each checked to print the same."""
    command = ["audit", "--suite", suite, "--recorded-judges", "--data-dir", str(data)]
    command += ["--db", str(db)]
    load = os.getloadavg()[0]
    wall, cpu, first = timed_rmaudit(command, env)
    print(
        f"{suite}, fresh DB: wall {wall:.1f} s, CPU {cpu:.1f} s; {os.cpu_count()} CPUs, "
        f"load {load:.2f}; bytecode {args.bytecode}"
    )
    report_reruns(f"{suite} rerun", lambda: same(first, timed_rmaudit(command, env)), args.repeats)


if __name__ == "__main__":
    main()
