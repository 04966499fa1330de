"""A rerun with nothing to do (issue 31, item 6; target: at most 3 s on 2 cores).

The recipe (``recipes/helpful.toml`` by default) is run once into a fresh SQLite file; then
``rmaudit run RECIPE --db DB`` is run again ``--repeats`` times, each in a fresh interpreter
(as a user runs it), and the median wall and CPU (user + system) times are printed with their
extremes and the load average.  One more fresh interpreter times the phases of the same
rerun, in the order ``rmaudit run`` takes them: imports, recipe and components, the plan
(``Runner.preflight`` on the DB opened read-only), the run itself (with the run's own stage
timings) and the summary.

Python's modules are compiled once and their bytecode cached, as an installed rmaudit has it
(pip compiles it when installing), also where ``PYTHONDONTWRITEBYTECODE`` is set: the cache
lives in the benchmark's temporary folder.  ``--bytecode none`` compiles every module from
source in every interpreter instead (≈ 0.2 s more a run).

With ``--before SRC`` (an earlier commit's ``src/``, e.g. of ``git worktree add /tmp/before
COMMIT``) each version runs the recipe into its own DB, then their reruns alternate, one of
each in turn, so both meet the same load; each is checked to print what the other prints
(its DB's path aside), and the tables whose content differs between the two DBs are named
(``tests/reference/_db_dump``: every value but timestamps, timings and metric digests).

    python benchmarks/bench_rerun.py                # helpful.toml, median of 5
    python benchmarks/bench_rerun.py --before /tmp/before/src --repeats 7
    python benchmarks/bench_rerun.py --smoke        # a small copy of it, one repeat
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT), str(ROOT.parent / "tests" / "reference")]

from _db_dump import dump  # noqa: E402
from _smoke import parse_args  # noqa: E402

#: run in a fresh interpreter: the phases of ``rmaudit run RECIPE --db DB`` (cli/run.py)
PHASES = """
import io, json, sys, time
started = time.perf_counter()
from rmaudit.cli import run as _command  # the command's module, as the CLI loads it
from rmaudit.cli.render import run_attached
from rmaudit.cli.summary import print_summary
from rmaudit.recipe import load_recipe
from rmaudit.run import Runner, build_components
from rmaudit.store import Store
from rich.console import Console
phases = {"imports": time.perf_counter() - started}
def lap(name, since):
    phases[name] = time.perf_counter() - since
    return time.perf_counter()
t = time.perf_counter()
recipe = load_recipe(sys.argv[1])
components = build_components(recipe)
t = lap("recipe and components", t)
stored = Store.open_readonly(sys.argv[2])
runner = Runner(recipe, stored, components=components)
runner.preflight()
stored.close()
t = lap("plan (preflight)", t)
store = Store.open(sys.argv[2])
quiet = Console(file=io.StringIO())
result = run_attached(runner, store, quiet)
t = lap("run", t)
print_summary(quiet, store, result.run_id, sys.argv[2])
store.close()
lap("summary", t)
phases["total"] = time.perf_counter() - started
print(json.dumps({"phases": phases, "stages": result.timings}))
"""


def small_copy(recipe: Path, folder: Path) -> Path:
    """The recipe with 10 prompts of 64 responses: the same stages, in seconds."""
    text = (
        recipe.read_text()
        .replace("k = 100", "k = 10")
        .replace("per_prompt = 256", "per_prompt = 64")
    )
    copy = folder / recipe.name
    copy.write_text(text)
    return copy


def cpu_seconds() -> float:
    """User + system CPU time of the finished child processes so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def interpreter_environment(bytecode: str, folder: Path) -> dict[str, str]:
    """The environment of every interpreter the benchmark starts: with a bytecode cache in
    ``folder`` (``bytecode = "cached"``), or compiling every module each time (``"none"``)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if bytecode == "cached":
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def rmaudit_run(recipe: Path, db: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """``rmaudit run RECIPE --db DB`` as a user runs it: (wall s, CPU s, what it printed)."""
    started, cpu = time.perf_counter(), cpu_seconds()
    result = subprocess.run(
        [sys.executable, "-m", "rmaudit", "run", str(recipe), "--db", str(db)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return time.perf_counter() - started, cpu_seconds() - cpu, result.stdout


def phases(recipe: Path, db: Path, env: dict[str, str]) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", PHASES, str(recipe), str(db)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def spread(values: list[float]) -> str:
    """'median 1.23 s (min 1.10 s, max 1.40 s)'."""
    return (
        f"median {statistics.median(values):.2f} s "
        f"(min {min(values):.2f} s, max {max(values):.2f} s)"
    )


def add_bytecode_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bytecode",
        choices=("cached", "none"),
        default="cached",
        help="cached: modules compiled once, as installed (default); none: compiled every run",
    )


def report_reruns(label: str, rerun: Callable[[], tuple[float, float, str]], repeats: int) -> None:
    """Time ``repeats`` idle reruns (each gives wall s, CPU s, its output), check they all
    printed the same, and print the wall and CPU figures."""
    walls, cpus, outputs = [], [], set()
    for _ in range(repeats):
        wall, cpu, out = rerun()
        walls.append(wall)
        cpus.append(cpu)
        outputs.add(out)
    assert len(outputs) == 1, f"the {label}s printed different results"
    print(f"{label}, nothing to do ({len(walls)} runs): wall {spread(walls)}")
    print(f"  CPU (user + sys) {spread(cpus)}; load {os.getloadavg()[0]:.2f}")


def print_phases(recipe: Path, db: Path, env: dict[str, str]) -> None:
    timed = phases(recipe, db, env)
    for name, seconds in timed["phases"].items():
        print(f"  {name:<24} {seconds:6.2f} s")
    stages = ", ".join(f"{k} {v:.2f} s" for k, v in timed["stages"].items())
    print(f"  run's stages: {stages}")


def side_by_side(recipe: Path, folder: Path, base: dict[str, str], before: Path, repeats: int):
    """The earlier commit's reruns and this checkout's, alternating; then each one's figures
    and phases, the paired ratio, and the tables whose content differs between their DBs."""
    versions = {"before": before.resolve(), "after": ROOT.parent / "src"}
    envs = {name: {**base, "PYTHONPATH": str(src)} for name, src in versions.items()}
    dbs = {name: folder / name / "rerun.db" for name in versions}
    for name in versions:
        dbs[name].parent.mkdir()
        first, _, _ = rmaudit_run(recipe, dbs[name], envs[name])
        print(f"{name}: first run {first:.1f} s; load {os.getloadavg()[0]:.2f}")
    runs: dict[str, list[tuple[float, float, str]]] = {name: [] for name in versions}
    for repeat in range(repeats):
        for name in list(versions)[:: 1 if repeat % 2 == 0 else -1]:
            wall, cpu, out = rmaudit_run(recipe, dbs[name], envs[name])
            runs[name].append((wall, cpu, out.replace(str(dbs[name]), "DB")))
    for name in versions:
        report_reruns(f"{name} rerun", iter(runs[name]).__next__, repeats)
        print_phases(recipe, dbs[name], envs[name])
    assert runs["before"][0][2] == runs["after"][0][2], "the versions printed different results"
    ratios = [b[1] / a[1] for b, a in zip(runs["before"], runs["after"], strict=True)]
    print(f"paired CPU ratio (before ÷ after): median {statistics.median(ratios):.2f}")
    contents = {name: dump(db) for name, db in dbs.items()}
    differ = [
        t for t in sorted(contents["after"]) if contents["before"].get(t) != contents["after"][t]
    ]
    print(f"tables whose content differs: {', '.join(differ) or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", type=Path, default=ROOT.parent / "recipes" / "helpful.toml")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--before", type=Path, help="an earlier commit's src/, run alternately")
    add_bytecode_option(parser)
    args = parse_args(parser, {"repeats": 1})
    with tempfile.TemporaryDirectory() as folder:
        recipe = small_copy(args.recipe, Path(folder)) if args.smoke else args.recipe
        env = interpreter_environment(args.bytecode, Path(folder))
        print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; bytecode {args.bytecode}")
        if args.before is not None:
            side_by_side(recipe, Path(folder), env, args.before, args.repeats)
            return
        db = Path(folder) / "rerun.db"
        first, _, _ = rmaudit_run(recipe, db, env)
        print(f"first run: {first:.1f} s; load {os.getloadavg()[0]:.2f}")
        report_reruns("rerun", lambda: rmaudit_run(recipe, db, env), args.repeats)
        print_phases(recipe, db, env)


if __name__ == "__main__":
    main()
