"""``--smoke`` for the benchmark scripts: tiny sizes and one repeat, so that the test suite
runs every script in seconds and a script that no longer works fails a test
(``tests/test_benchmarks.py``).  Figures printed at smoke size mean nothing."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any


def parse_args(parser: argparse.ArgumentParser, smoke: dict[str, Any]) -> argparse.Namespace:
    """``parser``'s arguments, plus ``--smoke``, which sets the arguments named in ``smoke``."""
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="tiny sizes, one repeat: only checks that the script runs",
    )
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(smoke)
    return args


def write_report(out: Path | None, lines: list[str]) -> None:
    """Write a script's Markdown report to ``out`` (None: ``--smoke``, which writes nothing)."""
    if out is not None:
        out.write_text("\n".join(lines), encoding="utf-8")
        print(f"wrote {out}")


def print_table(lines: list[str], datasets: int, started: float, out: str | None) -> None:
    """A coverage script's closing Markdown table: printed with its size and the seconds since
    ``started`` (``time.perf_counter()``), and written to ``out`` where given."""
    table = "\n".join(lines)
    print(f"\n{table}\n\n{datasets} data sets per row, {time.perf_counter() - started:.0f} s")
    if out:
        with open(out, "w", encoding="utf-8") as file:
            file.write(table + "\n")
