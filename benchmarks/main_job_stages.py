"""Where the main job's CPU goes, stage by stage, beside each stage's floor (issue 50).

A fresh ``rmaudit run recipes/helpful.toml`` runs in an interpreter of its own, its CPU time
charged to the stage each thread is in (``_stage_meter.py``): interpreter start, imports (every
module the job imports, imported first, in the order the job imports them), the plan, prompt
sampling, response generation, oracle labels, RM scores, metrics, the store's writes and
reads (inside whichever stage made them), the summary.  Beside each stage, its floor: the
same work done directly in the same interpreter, after the run —

* imports: a bare interpreter importing numpy;
* sampling: the embedder and the k-DPP sampler called on the pool;
* generation, labels, scores: the policy's, oracle's and RMs' own batch calls on every item,
  256 at a time (the simulated world's text-analysis cache emptied before the labels, as at
  the start of the run);
* metrics: every metric's ``compute`` on the stored arrays;
* writes: every row of the run's DB inserted again into an empty copy of its schema, in one
  transaction;
* summary: the three queries that read what it prints (results, curves, per-prompt values).

A stage's figure is the CPU time of the Python threads in it; what threads Python did not start
spent (OpenBLAS's: the line under the stages) is the process's total less the rest.  Floors
are the process's CPU time, threads of every kind.

Then an idle rerun of the same recipe on that DB, metered the same way: its CPU by step, and
the statements it sends and the rows they read, by step and table.  The interpreter is set up
as the ``rmaudit`` command sets it up (its BLAS threads, where the version sets them).

    python benchmarks/main_job_stages.py                      # this checkout
    python benchmarks/main_job_stages.py --source OLD/src     # another version's sources
    python benchmarks/main_job_stages.py --smoke              # a small copy of the recipe
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
sys.path.insert(0, str(ROOT))

from _smoke import parse_args  # noqa: E402
from bench_rerun import interpreter_environment, small_copy  # noqa: E402

STAGES = [
    "interpreter start",
    "imports",
    "open and migrate",
    "plan",
    "sampling",
    "generation",
    "labels",
    "scores",
    "metrics",
    "writes",
    "reads",
    "summary",
    "other",
    "other (worker threads)",
    "native threads (BLAS)",
]
FLOORS = {
    "imports": "a bare interpreter importing numpy (start included)",
    "sampling": "embedder and sampler called on the pool",
    "generation": "the policy's batch calls",
    "labels": "the oracle's batch calls, from an empty text cache",
    "scores": "the RMs' batch calls",
    "metrics": "every metric's compute on the arrays",
    "writes": "every row inserted again, one transaction",
    "summary": "the three queries of what it prints",
}


def child(mode: str, recipe: str, db: str, modules: str | None, env: dict[str, str]) -> dict:
    command = [sys.executable, str(ROOT / "_stage_child.py"), mode, recipe, db, modules or ""]
    out = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{mode} child failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def numpy_floor(env: dict[str, str]) -> float:
    child_process = subprocess.Popen([sys.executable, "-c", "import numpy"], env=env)
    _, _, usage = os.wait4(child_process.pid, 0)
    return usage.ru_utime + usage.ru_stime


def native(run: dict) -> dict:
    """The run's CPU by stage, with what no Python thread's meter saw: the time of threads
    Python did not start (OpenBLAS's), the process's total less every metered stage."""
    cpu = dict(run["cpu"])
    cpu["native threads (BLAS)"] = max(0.0, run["total"] - sum(cpu.values()))
    return {**run, "cpu": cpu}


def fresh_table(runs: list[dict], floors: list[dict], numpy_cpu: list[float]) -> list[str]:
    lines = ["| stage | CPU (median) | floor | the floor is |", "|---|---|---|---|"]

    def med(values: list[float]) -> float:
        return statistics.median(values) if values else 0.0

    for stage in STAGES:
        cpu = med([r["cpu"].get(stage, 0.0) for r in runs])
        if stage == "imports":
            floor = f"{med(numpy_cpu):.2f} s"
        elif stage in FLOORS:
            floor = f"{med([f[stage] for f in floors]):.2f} s"
        else:
            floor = ""
        lines.append(f"| {stage} | {cpu:.2f} s | {floor} | {FLOORS.get(stage, '')} |")
    total = med([r["total"] for r in runs])
    lines.append(f"| **total (process CPU)** | **{total:.2f} s** | | |")
    return lines


def rerun_table(runs: list[dict]) -> list[str]:
    last = runs[-1]
    lines = [
        "| step | CPU (median) | statements | rows read | rows written | tables read (rows) |",
        "|---|---|---|---|---|---|",
    ]
    for stage in STAGES:
        cpu = statistics.median([r["cpu"].get(stage, 0.0) for r in runs])
        counted = [s for s in last["sql"] if s["stage"] == stage]
        if cpu < 0.005 and not counted:
            continue
        statements = sum(s["statements"] for s in counted)
        read = sum(s["rows"] for s in counted if s["kind"] == "reads")
        written = sum(s["rows"] for s in counted if s["kind"] == "writes")
        tables: dict[str, int] = {}
        for s in counted:
            if s["kind"] == "reads":
                tables[s["table"]] = tables.get(s["table"], 0) + s["rows"]
        shown = ", ".join(f"{t} ({n:,})" for t, n in sorted(tables.items(), key=lambda x: -x[1]))
        lines.append(
            f"| {stage} | {cpu:.3f} s | {statements:,} | {read:,} | {written:,} | {shown} |"
        )
    total = statistics.median([r["total"] for r in runs])
    lines.append(f"| **total (process CPU)** | **{total:.3f} s** | | | | |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=REPO / "src", help="src/ to measure")
    parser.add_argument("--repeats", type=int, default=3)
    args = parse_args(parser, {"repeats": 1})
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {**interpreter_environment("cached", folder), "PYTHONPATH": str(args.source)}
        recipe_path = small_copy(REPO / "recipes" / "helpful.toml", folder)
        recipe = str(recipe_path) if args.smoke else "recipes/helpful.toml"
        modules, rerun_modules = folder / "modules.json", folder / "rerun-modules.json"
        if args.smoke:  # no import phase: the imports are charged to the stages that make them
            modules.write_text("[]")
            rerun_modules.write_text("[]")
        else:
            discover = str(folder / "discover.db")
            child("modules", str(recipe_path), discover, str(modules), env)
            child("modules", str(recipe_path), discover, str(rerun_modules), env)
        fresh, floors, reruns, numpy_cpu = [], [], [], []
        for repeat in range(args.repeats):
            db = folder / f"run{repeat}.db"
            measured = native(child("fresh", recipe, str(db), str(modules), env))
            fresh.append(measured)
            floors.append(measured["floors"])
            reruns.append(native(child("rerun", recipe, str(db), str(rerun_modules), env)))
            numpy_cpu.append(numpy_floor(env))
        load = os.getloadavg()[0]
    print(f"source {args.source}; {os.cpu_count()} CPUs, load {load:.1f} at the end")
    print("\nfresh run\n\n" + "\n".join(fresh_table(fresh, floors, numpy_cpu)))
    print("\nidle rerun\n\n" + "\n".join(rerun_table(reruns)))


if __name__ == "__main__":
    main()
