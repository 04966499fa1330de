"""Does every stage of a run cost time linear in its work?  Each stage's time at k and 2k
prompts, and at N and 2N responses per prompt, and the exponent of time in work.

The workload is a simulated audit run into a fresh DB (no model or API cost to speak of, so
the store's share shows): k prompts drawn at random, N responses each, a judge with 3
samples, --rms simulated RMs, pairs from the benchmark's oracle rank bins (6 per prompt),
a shift sweep at p = 0.25 and 0.5 on the prompt, the responses and both, and per-RM, per-pair
and shift metrics.  Each stage is clocked in this process's CPU time (on a shared machine
far steadier than wall time), in all and in the store's methods alone.  A stage's exponent
is log(t₂/t₁) / log(w₂/w₁) for its items w (new prompts, responses, labels, pairs, shifted
pairs, scores over all RMs; metrics: the scores they read); 1 is linear.  A stage whose work
does not change with the doubled size (pairs when N doubles) gets its time ratio instead.
Each run has an interpreter of its own (cold caches, as ``rmaudit run``) and a tiny warm-up
run first; the three sizes run --repeat times, interleaved, and the best time of each stage
counts.

Two things besides the code set the exponents.  Caches: data twice as big misses the CPU's
caches more often, so even a job linear by construction measures above 1 at these sizes;
the last row is such a job (a dict with as many keys as there are scores), timed alongside
for comparison.  And the simulated world caches its text analysis for 65,536 texts: the
default k = 90 keeps every text of the largest run within it (k = 100 at 2k would not, and
the simulated RMs' own cost would grow faster than their work).

    python benchmarks/bench_store.py [--k 90] [--n 256] [--rms 5] [--repeat 3]
    python benchmarks/bench_store.py --smoke     # tiny sizes: checks the script runs
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # run from a checkout

from _smoke import parse_args

from rmaudit.recipe import load_recipe
from rmaudit.run import Runner
from rmaudit.store import Store
from rmaudit.store.items import Items
from rmaudit.store.read import Reads
from rmaudit.store.runs import Runs

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
    models = "\n".join(
        f'[[reward_models]]\nlabel = "rm{i}"\nname = "simulated-rm"\nseed = {i}\n'
        for i in range(rms)
    )
    return RECIPE.format(k=k, n=n, rms=models, batch_size=batch_size)


class StageClock:
    """A run's progress listener that clocks each stage in this process's CPU time (user +
    system: other work on a shared machine inflates it far less than wall time), and the
    share of it spent in the store (every call of its query and write methods)."""

    def __init__(self) -> None:
        self.stage: str | None = None
        self.started = 0.0
        self.cpu: Counter[str] = Counter()
        self.store: Counter[str] = Counter()

    def start(self, stage: str, total: int, done: int) -> None:
        self.stage, self.started = stage, time.process_time()

    def advance(self, stage: str, amount: int) -> None:
        pass

    def finish(self, stage: str) -> None:
        self.cpu[stage] += time.process_time() - self.started
        self.stage = None

    @contextmanager
    def timing_the_store(self) -> Iterator[None]:
        """Wrap the store's methods; a call inside another one is counted once, by the outer."""
        depth = 0

        def timed(method: Callable) -> Callable:
            @functools.wraps(method)
            def call(*args: Any, **kwargs: Any) -> Any:
                nonlocal depth
                started, depth = time.process_time(), depth + 1
                try:
                    return method(*args, **kwargs)
                finally:
                    depth -= 1
                    if depth == 0 and self.stage is not None:
                        self.store[self.stage] += time.process_time() - started

            return call

        originals = [
            (cls, name, getattr(cls, name))
            for cls in (Store, Items, Runs, Reads)
            for name in vars(cls)
            if not name.startswith("_")
            and callable(getattr(cls, name))
            and name not in ("open", "open_readonly", "transaction", "grouped_writes")
        ]
        for cls, name, method in originals:
            setattr(cls, name, timed(method))
        try:
            yield
        finally:
            for cls, name, method in originals:
                setattr(cls, name, method)


#: stage → (CPU seconds, store CPU seconds, new items)
Times = dict[str, tuple[float, float, int]]


def run_once(folder: Path, k: int, n: int, rms: int, batch_size: int) -> Times:
    """One run into a fresh DB."""
    recipe = folder / f"bench-{k}-{n}.toml"
    recipe.write_text(recipe_text(k, n, rms, batch_size), encoding="utf-8")
    db = folder / f"bench-{k}-{n}.db"
    clock = StageClock()
    store = Store.open(db)
    try:
        with clock.timing_the_store():
            result = Runner(load_recipe(recipe), store, clock).run()
    finally:
        store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    times: dict[str, list[float]] = {}
    for count in result.counts:
        stage = "scores" if count.stage.startswith("scores: ") else count.stage
        cpu, store_cpu, items = times.setdefault(stage, [0.0, 0.0, 0])
        times[stage] = [
            cpu + clock.cpu[count.stage],
            store_cpu + clock.store[count.stage],
            items + count.pending,
        ]
    times["metrics"] = [clock.cpu["metrics"], clock.store["metrics"], times["scores"][2]]
    times["total"] = [sum(t[i] for t in times.values()) for i in range(3)]
    times["total"][2] -= times["metrics"][2]  # the metrics' items are the scores
    return {stage: tuple(t) for stage, t in times.items()}


def linear_reference(items: int) -> Times:
    """A job linear in ``items`` by construction — a dict of that many text keys filled and
    read back — timed like a stage: what the machine's memory makes of twice the data."""
    keys = [f"{i:020x}" for i in range(items)]
    started = time.process_time()
    table = {key: float(i) for i, key in enumerate(keys)}
    sum(table[key] for key in keys)
    return {"linear reference": (time.process_time() - started, 0.0, items)}


def measure(k: int, n: int, rms: int, batch_size: int) -> Times:
    """One run, and the linear reference, in a fresh interpreter: every run starts with cold
    caches (the simulated world's too), as ``rmaudit run`` does."""
    done = subprocess.run(
        [sys.executable, __file__, "--one", str(k), str(n), str(rms), str(batch_size)],
        capture_output=True,
        text=True,
        check=True,
    )
    return {stage: tuple(t) for stage, t in json.loads(done.stdout).items()}


def one(k: int, n: int, rms: int, batch_size: int) -> None:
    """``--one``: a tiny warm-up run (imports, plugin loading), then the measured one."""
    with tempfile.TemporaryDirectory() as tmp:
        run_once(Path(tmp), 4, 4, 2, batch_size)
        found = run_once(Path(tmp), k, n, rms, batch_size)
    print(json.dumps(found | linear_reference(found["scores"][2])))


def exponent(t1: float, w1: int, t2: float, w2: int) -> str:
    if t1 <= 0 or t2 <= 0:
        return "—"
    if w2 < 1.2 * w1:  # the doubled size did not change this stage's work (much)
        return f"×{t2 / t1:.2f}="
    return f"{math.log(t2 / t1) / math.log(w2 / w1):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=90, help="prompts (doubled: at most 154)")
    parser.add_argument("--n", type=int, default=256, help="responses per prompt")
    parser.add_argument("--rms", type=int, default=5, help="simulated reward models")
    parser.add_argument("--batch-size", type=int, default=256, help="the recipe's batch_size")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--one", nargs=4, type=int, metavar=("K", "N", "RMS", "BATCH_SIZE"), help=argparse.SUPPRESS
    )
    args = parse_args(parser, {"k": 4, "n": 4, "rms": 2, "repeat": 1})
    if args.one:
        return one(*args.one)
    print(
        f"{platform.machine()}, Python {platform.python_version()}, SQLite "
        f"{sqlite3.sqlite_version}; k = {args.k}, N = {args.n}, {args.rms} RMs, "
        f"batch_size = {args.batch_size}, best of {args.repeat}"
    )
    sizes = {"k, N": (args.k, args.n), "2k": (2 * args.k, args.n), "2N": (args.k, 2 * args.n)}
    runs: dict[str, list[Times]] = {size: [] for size in sizes}
    for _ in range(args.repeat):  # interleaved, so a busy spell of the machine hits all sizes
        for size, (k, n) in sizes.items():
            runs[size].append(measure(k, n, args.rms, args.batch_size))
    best = {
        size: {
            stage: (
                min(r[stage][0] for r in found),
                min(r[stage][1] for r in found),
                found[0][stage][2],
            )
            for stage in found[0]
        }
        for size, found in runs.items()
    }
    header = ["stage", "items", "CPU", "store"]
    for size in ("2k", "2N"):
        header += [f"{size}: items", "CPU", "store", "exp. CPU", "exp. store"]
    rows = [header]
    for stage in (*STAGES, "total", "linear reference"):
        cpu, store_cpu, items = best["k, N"][stage]
        row = [stage, f"{items:,}", f"{cpu:.3f}", f"{store_cpu:.3f}"]
        for size in ("2k", "2N"):
            cpu2, store2, items2 = best[size][stage]
            row += [
                f"{items2:,}",
                f"{cpu2:.3f}",
                f"{store2:.3f}",
                exponent(cpu, items, cpu2, items2),
                exponent(store_cpu, items, store2, items2),
            ]
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        print(
            "  ".join(
                cell.ljust(w) if i == 0 else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    print(
        "CPU seconds of the stage, and of it in the store; exponent: log(t2/t1) / "
        "log(items2/items1), 1 = linear; ×r= : the work did not change, r is the time ratio; "
        "linear reference: a dict of as many keys as scores, filled and read"
    )


if __name__ == "__main__":
    main()
