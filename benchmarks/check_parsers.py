"""Run every preference-pair parser on the real files in ../shared/data and account for each record.

For each file: records in the file, records parsed (and the pairs they gave), records rejected
by reason, and whether parsed + rejected = records.  The record count is taken independently
of the parsers (JSON array length, non-blank JSON lines).

    python benchmarks/check_parsers.py [DATA_DIR]      # default: ../shared/data
    python benchmarks/check_parsers.py --smoke         # two records per format, written here
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path

from _smoke import parse_args

from rmaudit.benchmark.pairs import parse_hh, parse_llmbar, parse_rm_bench

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
        print(
            f"{parser.__name__:15} {str(path.relative_to(data)):55} {records:7d} "
            f"{result.parsed:7d} {len(result.pairs):6d}  {len(result.rejected)}"
            f"{f' ({reasons})' if reasons else ''}{'' if balanced else '  MISMATCH'}"
        )
    print("every record accounted for" if all_balanced else "SOME RECORDS UNACCOUNTED FOR")
    print(
        "not checked: reward-bench-bon/ (best-of-16 outputs and AlpacaEval annotations, "
        "not preference pairs)"
    )
    return 0 if all_balanced else 1


def write_smoke_data(data: Path) -> None:
    """One file per format in ``files``' layout, each with a good record and a rejected one."""
    turn = "\n\nHuman: Hi?\n\nAssistant: "
    for split in ("helpful-base", "harmless-base"):
        (data / "hh-rlhf" / split).mkdir(parents=True)
        with gzip.open(data / "hh-rlhf" / split / "test.jsonl.gz", "wt", encoding="utf-8") as out:
            out.write(json.dumps({"chosen": turn + "Hello.", "rejected": turn + "Go away."}) + "\n")
            out.write(json.dumps({"chosen": turn + "Same.", "rejected": turn + "Same."}) + "\n")
    (data / "rm-bench").mkdir()
    styles = {"prompt": "Why?", "chosen": ["A", "B", "C"], "rejected": ["x", "y", "z"]}
    with gzip.open(data / "rm-bench" / "total_dataset.json.gz", "wt", encoding="utf-8") as out:
        json.dump([styles, {**styles, "rejected": ["x"]}], out)
    (data / "llmbar" / "Natural").mkdir(parents=True)
    (data / "llmbar" / "Natural" / "dataset.json").write_text(
        json.dumps(
            [
                {"input": "Q?", "output_1": "good", "output_2": "bad", "label": 1},
                {"input": "Q?", "output_1": "good", "output_2": "bad", "label": 3},
            ]
        ),
        encoding="utf-8",
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DATA, metavar="DATA_DIR")
    args = parse_args(parser, {})
    if not args.smoke:
        sys.exit(main(args.data))
    with tempfile.TemporaryDirectory() as folder:
        write_smoke_data(Path(folder))
        sys.exit(main(Path(folder)))
