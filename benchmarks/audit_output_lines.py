"""How many lines ``rmaudit audit`` prints: the recorded LLMBar judges' audit (``--suite
llmbar --recorded-judges``: 65 judge configurations and the two baselines on rmaudit's
shared data) at 100 columns, by default and with ``--details``, and ``--list-suites`` at 80
(target: the default at most 60 lines, stdout and stderr together; issue 52, item 12).

The audit runs into a fresh DB, then again with ``--details`` (nothing new to do), each in a
fresh interpreter with ``COLUMNS`` set as a terminal of that width sets it; a line is a line
of the output as printed (Rich wraps at the width).

    python benchmarks/audit_output_lines.py --data-dir ../shared/data
    python benchmarks/audit_output_lines.py --smoke    # a made-up mirror, three judges
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from _smoke import parse_args  # noqa: E402
from bench_audit_rerun import SHARED_DATA, made_up_mirror  # noqa: E402
from bench_recorded_judges import made_up_judges  # noqa: E402

#: the default output's budget (issue 52)
MOST_LINES = 60


def printed(command: list[str], columns: int, cwd: Path) -> tuple[int, int]:
    """``rmaudit COMMAND`` at ``columns``: (lines on stdout, lines on stderr)."""
    env = {**os.environ, "COLUMNS": str(columns)}
    done = subprocess.run(
        [sys.executable, "-m", "rmaudit", *command],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )
    if done.returncode:
        raise SystemExit(f"rmaudit {' '.join(command)} failed: {done.stderr.strip()[-2000:]}")
    return len(done.stdout.splitlines()), len(done.stderr.splitlines())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(SHARED_DATA))
    args = parse_args(parser, {})
    with tempfile.TemporaryDirectory() as folder:
        data = Path(args.data_dir).resolve()
        if args.smoke:
            data = made_up_judges(made_up_mirror(Path(folder) / "data"))
        audit = ["audit", "--suite", "llmbar", "--recorded-judges", "--data-dir", str(data)]
        audit += ["--db", str(Path(folder) / "audit.db")]
        rows = [
            ("audit (a fresh DB)", 100, printed(audit, 100, Path(folder))),
            ("audit --details (a rerun)", 100, printed([*audit, "--details"], 100, Path(folder))),
            ("audit --list-suites", 80, printed(["audit", "--list-suites"], 80, Path(folder))),
        ]
    print("| command | columns | stdout | stderr | lines |")
    print("|---|---|---|---|---|")
    for name, columns, (out, err) in rows:
        print(f"| {name} | {columns} | {out:,} | {err:,} | {out + err:,} |")
    brief = sum(rows[0][2])
    verdict = "within" if brief <= MOST_LINES else "OVER"
    print(f"\nthe default: {brief} lines, {verdict} the budget of {MOST_LINES}")
    if brief > MOST_LINES:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
