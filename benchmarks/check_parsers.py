"""Run every preference-pair parser on the real files in ../shared/data and account for each record.

For each file: records in the file, records parsed (and the pairs they gave), records rejected
by reason, and whether parsed + rejected = records.  The record count is taken independently
of the parsers (JSON array length, non-blank JSON lines).

    python benchmarks/check_parsers.py [DATA_DIR]      # default: ../shared/data
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

from rmaudit.pairs import parse_hh, parse_llmbar, parse_rm_bench

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def count_records(path: Path) -> int:
    """Records in a JSON array or JSON Lines file, counted without the parsers."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        text = handle.read()
    if text.lstrip().startswith("["):
        return len(json.loads(text))
    return sum(1 for line in text.splitlines() if line.strip())


def files(data: Path):
    """(parser, file, options) for every preference-pair file of the data folder."""
    for split in ("helpful-base", "harmless-base"):
        yield parse_hh, data / "hh-rlhf" / split / "test.jsonl.gz", {"subset": split}
    for path in sorted((data / "rm-bench").glob("*.json.gz")):
        yield parse_rm_bench, path, {}
    for path in sorted((data / "llmbar").rglob("dataset.json")):
        subset = "/".join(path.relative_to(data / "llmbar").parts[:-1])
        yield parse_llmbar, path, {"subset": subset}


def main(data: Path) -> int:
    header = f"{'parser':15} {'file':55} {'records':>7} {'parsed':>7} {'pairs':>6}  rejected"
    print(header)
    print("-" * len(header))
    all_balanced = True
    for parser, path, options in files(data):
        result = parser(path, **options)
        records = count_records(path)
        balanced = result.records == records and result.parsed + len(result.rejected) == records
        all_balanced &= balanced
        reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(result.reasons().items()))
        print(f"{parser.__name__:15} {str(path.relative_to(data)):55} {records:7d} "
              f"{result.parsed:7d} {len(result.pairs):6d}  {len(result.rejected)}"
              f"{f' ({reasons})' if reasons else ''}{'' if balanced else '  MISMATCH'}")
    print("every record accounted for" if all_balanced else "SOME RECORDS UNACCOUNTED FOR")
    print("not checked: reward-bench-bon/ (best-of-16 outputs and AlpacaEval annotations, "
          "not preference pairs)")
    return 0 if all_balanced else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else DATA))
