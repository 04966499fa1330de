"""The ray executor on this machine: scoring throughput with 1 and 2 workers, and its overhead.

1. Scoring: a CPU-bound tiny RM (the honest simulated RM plus a fixed amount of hashing per
   response, about --work-ms of CPU each: a stand-in for a small model's forward pass) scores
   a benchmark of --prompts × --per-prompt responses built beforehand.  The same stage runs
   in-process (``local``) and on Ray pools of 1 and 2 one-CPU workers; the time is the
   runner's stage time, so it includes starting the pool, shipping batches, and the driver's
   SQLite writes.
2. Overhead: the whole small test recipe (8 prompts × 16 responses, a judge, two RMs; every
   stage cheap) under ``local`` and ``ray`` with 2 workers on an already started Ray, plus
   the one-off cost of starting Ray.

    python benchmarks/bench_ray.py [--prompts 16] [--per-prompt 128] [--work-ms 2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # run from a checkout
sys.path.insert(0, str(ROOT / "tests"))  # the small test recipe

import ray
from _smoke import parse_args
from _support import SMALL_RECIPE

from rmaudit.recipe import load_recipe
from rmaudit.run import Runner
from rmaudit.store import Store
from rmaudit.testing import registered_plugin

# A plugin module that lives only in this process: Ray ships its class to the workers by value.
BURN_RM = '''
import hashlib

from pydantic import Field

from rmaudit import hookimpl
from rmaudit.components import ComponentOptions, RewardModel
from rmaudit.backends.simulated import SimulatedRewardModel


class BurnOptions(ComponentOptions):
    rounds: int = Field(ge=0, description="sha256 rounds per response: the CPU work")


class BurnRM(RewardModel):
    """The honest simulated RM plus a fixed CPU cost per response (a tiny model's forward pass)."""

    name = "burn-rm"
    Options = BurnOptions

    def __init__(self, options=None):
        super().__init__(options)
        self.model = SimulatedRewardModel(seed=1)

    def score(self, batch):
        scores = []
        for prompt, response in batch:
            digest = response.text.encode()
            for _ in range(self.options.rounds):
                digest = hashlib.sha256(digest).digest()
            scores.append(self.model.score(prompt.text, response.text) + digest[0] * 1e-12)
        return scores


@hookimpl
def register_reward_models(register):
    register(BurnRM)
'''

BENCHMARK = """
title = "ray scoring benchmark"
batch_size = 64

[prompts.source]
name = "simulated-helpful"

[prompts.sampler]
name = "random"
k = {prompts}

[responses]
per_prompt = {per_prompt}

[responses.policy]
name = "simulated-policy"

[oracle]
name = "simulated-judge"
samples = 1

[[reward_models]]
label = "{label}"
name = "{rm}"
{rm_options}

[[metrics]]
name = "pairwise-accuracy"
{executor}
"""


def ray_table(workers: int) -> str:
    return f'\n[executor]\nname = "ray"\nnum_workers = {workers}\nnum_cpus = 1\n'


def run(folder: Path, name: str, text: str, db: Path) -> dict[str, float]:
    recipe = folder / f"{name}.toml"
    recipe.write_text(textwrap.dedent(text), encoding="utf-8")
    store = Store.open(db)
    try:
        return Runner(load_recipe(recipe), store).run().timings
    finally:
        store.close()


def rounds_for(work_ms: float) -> int:
    """sha256 rounds of a 32-byte digest that take about ``work_ms`` here."""
    import hashlib

    digest, n = b"x" * 32, 200_000
    start = time.perf_counter()
    for _ in range(n):
        digest = hashlib.sha256(digest).digest()
    return max(1, round(n * work_ms / 1000 / (time.perf_counter() - start)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--per-prompt", type=int, default=128)
    parser.add_argument("--work-ms", type=float, default=2.0, help="CPU per response (ms)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="ray pool sizes")
    args = parse_args(
        parser, {"prompts": 2, "per_prompt": 8, "work_ms": 0.1, "repeat": 1, "workers": [1]}
    )
    responses = args.prompts * args.per_prompt
    rounds = rounds_for(args.work_ms)
    print(
        f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), Python "
        f"{platform.python_version()}, Ray {ray.__version__}; {responses} responses, "
        f"{args.work_ms} ms CPU each ({rounds} sha256 rounds), batches of 64"
    )

    start = time.perf_counter()
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, configure_logging=False)
    ray_start = time.perf_counter() - start

    with (
        tempfile.TemporaryDirectory() as tmp,
        registered_plugin(_module("bench_ray_burn", BURN_RM)),
    ):
        folder = Path(tmp)
        built = folder / "built.db"  # the benchmark, built once; each run scores a fresh copy
        run(
            folder,
            "build",
            BENCHMARK.format(
                prompts=args.prompts,
                per_prompt=args.per_prompt,
                label="honest",
                rm="simulated-rm",
                rm_options="",
                executor="",
            ),
            built,
        )
        print(
            f"\n| executor | workers | scoring stage (median of {args.repeat}) | responses/s "
            "| speed-up |"
        )
        print("|---|---|---|---|---|")
        baseline = None
        for label, executor in (("local", ""), *(("ray", ray_table(n)) for n in args.workers)):
            times = []
            for i in range(args.repeat):
                db = folder / f"score-{i}.db"
                shutil.copy(built, db)
                timings = run(
                    folder,
                    "score",
                    BENCHMARK.format(
                        prompts=args.prompts,
                        per_prompt=args.per_prompt,
                        label="burn",
                        rm="burn-rm",
                        rm_options=f"rounds = {rounds}",
                        executor=executor,
                    ),
                    db,
                )
                times.append(timings["scores: burn"])
            median = statistics.median(times)
            baseline = baseline or median
            workers = "—" if not executor else executor.split("num_workers = ")[1].split()[0]
            print(
                f"| {label} | {workers} | {median:.2f} s | {responses / median:,.0f} | "
                f"{baseline / median:.2f}× |"
            )

        print(f"\nstarting a local Ray (ray.init): {ray_start:.2f} s, once per run that starts it")
        print(f"\n| small recipe (8 × 16, judge, 2 RMs) | total (median of {args.repeat}) |")
        print("|---|---|")
        most = max(args.workers)
        for label, executor in (
            ("local", ""),
            (f"ray, {most} workers, Ray already started", ray_table(most)),
        ):
            times = []
            for i in range(args.repeat):
                text = SMALL_RECIPE.replace("{extra_rms}", "") + executor
                times.append(
                    run(folder, "small", text, folder / f"small-{label[:3]}-{i}.db")["total"]
                )
            print(f"| {label} | {statistics.median(times):.2f} s |")
    ray.shutdown()


def _module(name: str, source: str) -> ModuleType:
    module = ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


if __name__ == "__main__":
    main()
