"""Every recorded LLMBar judge audited: ``rmaudit audit --suite llmbar --recorded-judges
--data-dir DATA`` (target: at most 60 s from a fresh DB, a rerun at most 3 s, on 2 cores).

The audit is run once into a fresh SQLite file (on rmaudit's shared data folder: 65 judge
configurations × 419 pairs × 2 orders, and the length and random baselines), then again
``--repeats`` times with nothing to do, each in a fresh interpreter, as a user reruns an audit
to print its results again — printing its tables at 100 columns, and with ``--json`` (the
same work, no tables) — and ``rmaudit compare DB`` as many times; the wall and CPU (user +
system) times are printed with the load average, and each rerun's tables are checked
identical to the first run's (the JSON reruns and the comparisons to each other).  Bytecode
is cached as in ``bench_rerun.py`` (``--bytecode none``: compiled in every interpreter).

    python benchmarks/bench_recorded_judges.py --data-dir ../shared/data   # reruns: median of 5
    python benchmarks/bench_recorded_judges.py --smoke    # a made-up mirror, three judges
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from _smoke import parse_args  # noqa: E402
from bench_audit_rerun import (  # noqa: E402
    LLMBAR_FOLDERS,
    SHARED_DATA,
    made_up_mirror,
    timed_rmaudit,
)
from bench_rerun import add_bytecode_option, interpreter_environment, report_reruns  # noqa: E402

#: the made-up mirror's judges (``--smoke``): LLM/strategy → the winner it names in each order
#: (the longer output, the one shown first, or the better one: "label")
MADE_UP_JUDGES = {"Long/Vanilla": "longer", "First/Vanilla": "first", "Long/Rating": "longer"}


def made_up_judges(data: Path, judges: dict[str, str] = MADE_UP_JUDGES) -> Path:
    """``made_up_mirror``'s LLMBar subsets, each with ``judges``' recorded outputs (a
    strategy named ``Rating`` rates each output by its length)."""
    for name in LLMBAR_FOLDERS:
        folder = data / "llmbar" / "LLMBar" / name
        records = json.loads((folder / "dataset.json").read_text(encoding="utf-8"))
        for judge, prefers in judges.items():
            results = []
            for r in records:
                longer = "1" if len(r["output_1"]) > len(r["output_2"]) else "2"
                orders = {
                    "first": ("1", "2"),
                    "longer": (longer, longer),
                    "label": (str(r["label"]),) * 2,
                }[prefers]
                last: dict = {
                    "swap = False": {"winner": orders[0]},
                    "swap = True": {"winner": orders[1]},
                }
                if judge.endswith("Rating"):
                    last |= {"score_1": [str(len(r["output_1"])), "stop"]}
                    last |= {"score_2": [str(len(r["output_2"])), "stop"]}
                results.append({**r, "results": [last]})
            path = folder / "evaluators" / judge / "result.json.gz"
            path.parent.mkdir(parents=True)
            path.write_bytes(gzip.compress(json.dumps(results).encode()))
    return data


def audit(data: Path, db: Path, env: dict[str, str], *flags: str) -> tuple[float, float, str]:
    """``rmaudit audit --suite llmbar --recorded-judges [FLAGS]``: (wall s, CPU s, stdout)."""
    command = ["audit", "--suite", "llmbar", "--recorded-judges", "--data-dir", str(data)]
    return timed_rmaudit([*command, *flags, "--db", str(db)], {**env, "COLUMNS": "100"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=SHARED_DATA)
    parser.add_argument("--repeats", type=int, default=5)
    add_bytecode_option(parser)
    args = parse_args(parser, {"repeats": 1})
    with tempfile.TemporaryDirectory() as folder:
        if args.smoke:
            data = made_up_judges(made_up_mirror(Path(folder) / "data"))
        else:
            data = args.data_dir.resolve()
        db = Path(folder) / "audit.db"
        env = interpreter_environment(args.bytecode, Path(folder))
        load = os.getloadavg()[0]
        wall, cpu, first = audit(data, db, env)
        judges = len(list((data / "llmbar" / "LLMBar" / "Natural" / "evaluators").glob("*/*")))
        print(
            f"fresh DB, {judges} judges: wall {wall:.1f} s, CPU {cpu:.1f} s; "
            f"{os.cpu_count()} CPUs, load {load:.2f}; bytecode {args.bytecode}; data {data}"
        )
        report_reruns(
            "rerun, tables printed", lambda: same(first, audit(data, db, env)), args.repeats
        )
        report_reruns("rerun, --json", lambda: audit(data, db, env, "--json"), args.repeats)
        compare = ["compare", str(db)]
        report_reruns("rmaudit compare", lambda: timed_rmaudit(compare, env), args.repeats)


def same(first: str, rerun: tuple[float, float, str]) -> tuple[float, float, str]:
    """A rerun's (wall s, CPU s, stdout), once its stdout is checked to be the first run's."""
    if rerun[2] != first:
        raise SystemExit("a rerun printed other results than the first run")
    return rerun


if __name__ == "__main__":
    main()
