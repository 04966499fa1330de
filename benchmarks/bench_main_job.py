"""The README's main job, side by side with an earlier commit (issue 50).

Targets on 2 cores (medians): ``rmaudit run recipes/helpful.toml`` into a fresh DB at most 8 s
wall and 8 s CPU (user + system), its peak memory no higher than the earlier commit's, an idle
rerun at most 1.0 s wall, ``rmaudit --help`` at most 0.1 s wall.

Each repeat runs, for each version in turn (the order alternating from one repeat to the
next, so both meet the same load): the main job into a fresh DB, its idle rerun, and
``rmaudit --help`` three times, each in a fresh interpreter as a user runs it, and records wall
time, CPU time and peak resident memory (the child's own ``ru_maxrss``) with the load average.
Every fresh DB of this checkout is compared with the content recorded before the speed-up
(``tests/reference/expected_db.json``, every table's SHA-256): a version that writes another
number fails here, not just in the test suite's small copy (the earlier commit's DBs are
compared too, and a table the reference was re-recorded for since is named).  Off the recorded
environment (another CPU's kernels, other numpy or scipy) the floats round differently and are
recorded only as a digest: what is not a float is still compared.

Modules are compiled once into a bytecode cache in the benchmark's temporary folder, as an
installed rmaudit has them (``bench_rerun.py``'s ``interpreter_environment``).

    python benchmarks/bench_main_job.py --before /path/to/old/src --repeats 5
    python benchmarks/bench_main_job.py                     # this checkout alone
    python benchmarks/bench_main_job.py --smoke             # a small recipe, once, uncompiled
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
sys.path[:0] = [str(ROOT), str(REPO / "tests" / "reference")]

from _db_dump import differences, dump, same_environment  # noqa: E402
from _reference_runs import MAIN_RECIPE, recorded  # noqa: E402
from _smoke import parse_args  # noqa: E402
from bench_rerun import interpreter_environment, small_copy  # noqa: E402


@dataclass(frozen=True)
class Timing:
    """One command in a fresh interpreter."""

    wall: float
    cpu: float  # user + system
    peak_mib: float  # the child's maximum resident set size
    load: float  # 1-minute load average when it ended


def timed(command: list[str], env: dict[str, str]) -> Timing:
    """Run ``command`` from the repository's root, its output discarded; raise on failure."""
    started = time.perf_counter()
    child = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    errors = child.stderr.read().decode() if child.stderr else ""
    if child.returncode:
        raise RuntimeError(f"{' '.join(command)} exited {child.returncode}: {errors[-400:]}")
    return Timing(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.getloadavg()[0])


@dataclass
class Version:
    """A source tree to time and what was measured on it."""

    name: str
    source: Path
    fresh: list[Timing]
    rerun: list[Timing]
    help: list[Timing]

    def env(self, base: dict[str, str]) -> dict[str, str]:
        return {**base, "PYTHONPATH": str(self.source)}


@dataclass(frozen=True)
class Reference:
    """The full main job's recorded tables, and whether this environment can match their
    floats: on another CPU or numerical library only what is not a float is compared, as the
    floats are recorded as a digest, not value by value (tests/reference)."""

    tables: dict[str, dict]
    exact: bool

    @classmethod
    def read(cls) -> Reference:
        recorded_db = recorded()
        return cls(recorded_db["main_job"]["tables"], same_environment(recorded_db["environment"]))


def one_repeat(
    version: Version,
    recipe: str,
    folder: Path,
    base: dict[str, str],
    reference: Reference | None,
    helps: int = 3,
):
    env = version.env(base)
    db = folder / f"{version.name}-{len(version.fresh)}.db"
    rmaudit = [sys.executable, "-m", "rmaudit"]
    version.fresh.append(timed([*rmaudit, "run", recipe, "--db", str(db)], env))
    if reference is not None:
        found = differences(reference.tables, dump(db), exact=reference.exact)
        if version.name == "after":
            assert not found, f"the main job's DB is not the recorded one: {found}"
        elif found:  # the earlier commit may predate a recorded change (tests/reference)
            print(f"  note: before's DB differs from the recorded one in {found}")
    version.rerun.append(timed([*rmaudit, "run", recipe, "--db", str(db)], env))
    version.help += [timed([*rmaudit, "--help"], env) for _ in range(helps)]
    db.unlink()


def median(timings: list[Timing], what: str) -> str:
    values = [getattr(t, what) for t in timings]
    unit = " MiB" if what == "peak_mib" else " s"
    digits = 0 if what == "peak_mib" else (3 if max(values) < 1 else 2)
    return (
        f"{statistics.median(values):.{digits}f}{unit} "
        f"({min(values):.{digits}f}–{max(values):.{digits}f})"
    )


def report(versions: list[Version]) -> None:
    print(
        "\n| version | fresh wall | fresh CPU | peak memory | idle rerun wall | rerun CPU "
        "| --help wall | load |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for v in versions:
        loads = [t.load for t in v.fresh + v.rerun]
        print(
            f"| {v.name} | {median(v.fresh, 'wall')} | {median(v.fresh, 'cpu')} | "
            f"{median(v.fresh, 'peak_mib')} | {median(v.rerun, 'wall')} | "
            f"{median(v.rerun, 'cpu')} | {median(v.help, 'wall')} | "
            f"{min(loads):.1f}–{max(loads):.1f} |"
        )
    if len(versions) == 2:
        before, after = versions
        ratios = [b.wall / a.wall for b, a in zip(before.fresh, after.fresh, strict=True)]
        print(
            f"\npaired fresh-run speed-up (before ÷ after): median {statistics.median(ratios):.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="the earlier commit's src/ folder")
    parser.add_argument("--repeats", type=int, default=5)
    args = parse_args(parser, {"repeats": 1})
    versions = [Version("after", REPO / "src", [], [], [])]
    if args.before is not None:
        versions.insert(0, Version("before", args.before.resolve(), [], [], []))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        base = interpreter_environment("cached", folder)
        recipe = str(small_copy(REPO / MAIN_RECIPE, folder)) if args.smoke else MAIN_RECIPE
        for v in versions if not args.smoke else []:  # compile each version's modules once
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", str(v.source)],
                env=v.env(base),
                check=True,
            )
        print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at the start")
        reference = None if args.smoke else Reference.read()
        if reference is not None and not reference.exact:
            print("  not the recorded environment: the DBs' floats are not compared")
        for repeat in range(args.repeats):
            for v in versions if repeat % 2 == 0 else versions[::-1]:
                one_repeat(v, recipe, folder, base, reference, 1 if args.smoke else 3)
                print(
                    f"  {v.name} #{repeat + 1}: fresh {v.fresh[-1].wall:.1f} s, "
                    f"load {v.fresh[-1].load:.1f}"
                )
    report(versions)


if __name__ == "__main__":
    main()
