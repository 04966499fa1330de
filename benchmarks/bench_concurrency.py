"""Many processes, one DB (issue 13): wall time of two `rmaudit run` at once on one DB against
the same two one after the other, and how long a reader polling `rmaudit runs` waits meanwhile.

Writers take turns (``rmaudit.store.lock``), so two runs at once take about as long as the two
in sequence; what the figures show is that nothing fails, and that readers are not held up.

    python benchmarks/bench_concurrency.py            # k = 64 prompts × 16 responses, 3 RMs
    python benchmarks/bench_concurrency.py --smoke
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _smoke import parse_args

RECIPE = """
title = "concurrency {name}"
batch_size = 32
[prompts.source]
name = "simulated-helpful"
[prompts.sampler]
name = "random"
k = {k}
seed = {seed}
[responses]
per_prompt = 16
[responses.policy]
name = "simulated-policy"
[oracle]
name = "simulated-judge"
samples = 3
[[reward_models]]
label = "honest"
name = "simulated-rm"
seed = 1
[[reward_models]]
label = "length"
name = "simulated-rm"
bias = "length"
seed = 2
[[reward_models]]
label = "noisy"
name = "simulated-rm"
noise = 1.0
seed = 3
"""


def write_recipes(folder: Path, k: int) -> list[Path]:
    paths = []
    for name, seed in (("a", 0), ("b", 1)):
        path = folder / f"{name}.toml"
        path.write_text(RECIPE.format(name=name, k=k, seed=seed))
        paths.append(path)
    return paths


def rmaudit(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "rmaudit", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_all(recipes: list[Path], db: Path, at_once: bool) -> tuple[float, list[str]]:
    """Wall time of running ``recipes`` on ``db`` (all at once, or in turn), and their stderr
    tails of the runs that failed."""
    started, failures = time.perf_counter(), []
    processes = []
    for recipe in recipes:
        processes.append(rmaudit("run", str(recipe), "--db", str(db)))
        if not at_once:
            processes[-1].wait()
    for process in processes:
        _, err = process.communicate()
        if process.returncode:
            failures.append(err.strip().splitlines()[-1])
    return time.perf_counter() - started, failures


def poll_runs(db: Path, stop: threading.Event, latencies: list[float], errors: list[str]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "rmaudit", "runs", "--db", str(db)],
            capture_output=True,
            text=True,
        )
        latencies.append(time.perf_counter() - started)
        if (
            result.returncode
            and "does not exist" not in result.stderr
            and "not an rmaudit database" not in result.stderr
        ):
            errors.append(result.stderr.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=64, help="prompts per recipe")
    args = parse_args(parser, {"k": 4})
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        recipes = write_recipes(folder, args.k)
        sequential = math.nan
        if not args.smoke:  # the smoke run checks only that runs at once work
            sequential, failed = run_all(recipes, folder / "sequential.db", at_once=False)
            assert not failed, failed
        latencies: list[float] = []
        errors: list[str] = []
        stop = threading.Event()
        reader = threading.Thread(
            target=poll_runs, args=(folder / "together.db", stop, latencies, errors)
        )
        reader.start()
        together, failed = run_all(recipes + recipes, folder / "together.db", at_once=True)
        stop.set()
        reader.join()
        assert not failed and not errors, (failed, errors)
    print(f"{args.k} prompts × 16 responses × 3 RMs per recipe; 2 recipes")
    print(f"in sequence (2 runs):               {sequential:6.2f} s")
    print(
        f"at once (2 recipes × 2 runs each):  {together:6.2f} s  (4 processes, writers take turns)"
    )
    print(
        f"reader `rmaudit runs` meanwhile:    {len(latencies)} polls, median "
        f"{statistics.median(latencies):.2f} s, max {max(latencies):.2f} s, 0 failed"
    )


if __name__ == "__main__":
    main()
