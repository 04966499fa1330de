"""Does every stage of a run cost time linear in its work?  Each stage's time at k and 2k
prompts, and at N and 2N responses per prompt, and the exponent of time in work.

The workload is a simulated audit run into a fresh DB (no model or API cost to speak of, so
the store's share shows): k prompts drawn at random, N responses each, a judge with 3
samples, --rms simulated RMs, pairs from the benchmark's oracle rank bins (6 per prompt),
a shift sweep at p = 0.25 and 0.5 on the prompt, the responses and both, and per-RM, per-pair
and shift metrics.  Each stage is clocked in wall time and in this process's CPU time (on a
shared machine the CPU time is the steadier measure).  A stage's exponent is
log(t₂/t₁) / log(w₂/w₁) for its items w (new prompts, responses, labels, pairs, shifted
pairs, scores over all RMs; metrics: the scores they read); 1 is linear.  A stage whose work
does not change with the doubled size (pairs when N doubles) gets its time ratio instead.
After a tiny warm-up run, each configuration runs --repeat times; the best time counts.

    python benchmarks/bench_store.py [--k 100] [--n 256] [--rms 5] [--repeat 2]
    python benchmarks/bench_store.py --smoke     # tiny sizes: checks the script runs
"""

from __future__ import annotations

import argparse
import math
import platform
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # run from a checkout

from rmaudit.recipe import load_recipe  # noqa: E402
from rmaudit.run import Runner  # noqa: E402
from rmaudit.store import Store  # noqa: E402

STAGES = ("prompts", "responses", "oracle labels", "pairs", "shifted pairs", "scores", "metrics")

RECIPE = """
title = "store benchmark (simulated world)"
batch_size = {batch_size}

[prompts.source]
name = "simulated-helpful"

[prompts.sampler]
name = "random"
k = {k}

[responses]
per_prompt = {n}

[responses.policy]
name = "simulated-policy"

[oracle]
name = "simulated-judge"
samples = 3

[pairs.source]
name = "benchmark-pairs"
mode = "rank-bins"
bins = 4

[pairs.shift]
levels = [0, 0.25, 0.5]

[pairs.shift.perturber]
name = "word-perturb"

{rms}

[[metrics]]
name = "reta"

[[metrics]]
name = "best-of-n"
report = [4]

[[metrics]]
name = "pair-accuracy"

[[metrics]]
name = "shift-curves"
"""


def recipe_text(k: int, n: int, rms: int, batch_size: int) -> str:
    models = "\n".join(f'[[reward_models]]\nlabel = "rm{i}"\nname = "simulated-rm"\nseed = {i}\n'
                       for i in range(rms))
    return RECIPE.format(k=k, n=n, rms=models, batch_size=batch_size)


class StageClock:
    """A run's progress listener that clocks each stage: wall time and this process's CPU
    time (user + system; other work on a shared machine does not inflate it)."""

    def __init__(self) -> None:
        self.started: dict[str, tuple[float, float]] = {}
        self.took: dict[str, tuple[float, float]] = {}

    def start(self, stage: str, total: int, done: int) -> None:
        self.started[stage] = (time.perf_counter(), time.process_time())

    def advance(self, stage: str, amount: int) -> None:
        pass

    def finish(self, stage: str) -> None:
        wall, cpu = self.started.pop(stage)
        self.took[stage] = (time.perf_counter() - wall, time.process_time() - cpu)


def run_once(folder: Path, k: int, n: int, rms: int, batch_size: int) -> dict[str, tuple[float, float, int]]:
    """Stage → (wall seconds, CPU seconds, new items) of one run into a fresh DB."""
    recipe = folder / f"bench-{k}-{n}.toml"
    recipe.write_text(recipe_text(k, n, rms, batch_size), encoding="utf-8")
    db = folder / f"bench-{k}-{n}-{time.monotonic_ns()}.db"
    clock = StageClock()
    store = Store.open(db)
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        result = Runner(load_recipe(recipe), store, clock).run()
        clock.took["total"] = (time.perf_counter() - wall, time.process_time() - cpu)
    finally:
        store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    items = {"total": 0}
    for count in result.counts:
        stage = "scores" if count.stage.startswith("scores: ") else count.stage
        items[stage] = items.get(stage, 0) + count.pending
        items["total"] += count.pending
    items["metrics"] = items["scores"]  # the metrics read every score
    stages: dict[str, tuple[float, float, int]] = {}
    for stage, (wall, cpu) in clock.took.items():
        name = "scores" if stage.startswith("scores: ") else stage
        old = stages.get(name, (0.0, 0.0, items[name]))
        stages[name] = (old[0] + wall, old[1] + cpu, items[name])
    return stages


def best_of(repeat: int, folder: Path, k: int, n: int, rms: int,
            batch_size: int) -> dict[str, tuple[float, float, int]]:
    runs = [run_once(folder, k, n, rms, batch_size) for _ in range(repeat)]
    return {stage: (min(r[stage][0] for r in runs), min(r[stage][1] for r in runs),
                    runs[0][stage][2]) for stage in runs[0]}


def exponent(t1: float, w1: int, t2: float, w2: int) -> str:
    if t1 <= 0 or t2 <= 0:
        return "—"
    if w1 == w2:
        return f"×{t2 / t1:.2f}="
    return f"{math.log(t2 / t1) / math.log(w2 / w1):.2f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=100, help="prompts (doubled: at most 154)")
    parser.add_argument("--n", type=int, default=256, help="responses per prompt")
    parser.add_argument("--rms", type=int, default=5, help="simulated reward models")
    parser.add_argument("--batch-size", type=int, default=256, help="the recipe's batch_size")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--smoke", action="store_true", help="k = 4, N = 4, 2 RMs, one run each")
    args = parser.parse_args(argv)
    if args.smoke:
        args.k, args.n, args.rms, args.repeat = 4, 4, 2, 1
    print(f"{platform.machine()}, Python {platform.python_version()}, SQLite "
          f"{sqlite3.sqlite_version}; k = {args.k}, N = {args.n}, {args.rms} RMs, "
          f"batch_size = {args.batch_size}, best of {args.repeat}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        run_once(folder, 4, 4, 2, args.batch_size)  # warm-up: imports, plugin loading, caches
        base = best_of(args.repeat, folder, args.k, args.n, args.rms, args.batch_size)
        double_k = best_of(args.repeat, folder, 2 * args.k, args.n, args.rms, args.batch_size)
        double_n = best_of(args.repeat, folder, args.k, 2 * args.n, args.rms, args.batch_size)
    header = ("stage", "items", "CPU", "wall", "2k: items", "CPU", "wall", "exp. CPU",
              "exp. wall", "2N: items", "CPU", "wall", "exp. CPU", "exp. wall")
    rows = [header]
    for stage in (*STAGES, "total"):
        row = [stage, f"{base[stage][2]:,}", f"{base[stage][1]:.2f}", f"{base[stage][0]:.2f}"]
        for double in (double_k, double_n):
            row += [f"{double[stage][2]:,}", f"{double[stage][1]:.2f}", f"{double[stage][0]:.2f}",
                    exponent(base[stage][1], base[stage][2], double[stage][1], double[stage][2]),
                    exponent(base[stage][0], base[stage][2], double[stage][0], double[stage][2])]
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                        for i, (cell, w) in enumerate(zip(row, widths))))
    print("times in seconds; exponent: log(t2/t1) / log(items2/items1); ×r= : the work did not "
          "change, r is the time ratio")


if __name__ == "__main__":
    main()
