"""The RewardMATH leaderboard of docs/rewardmath.md: every reward model, PRM and LLM judge whose
per-solution scores the RewardMATH paper released (Kim et al., *Evaluating Robustness of Reward
Models for Mathematical Reasoning*, arXiv 2410.01729), ranked by rmaudit beside the publisher's
own figures, and how RewardBench's math subset ranks the same models.

The script runs ``rmaudit audit --suite rewardmath --recorded-judges`` and ``--suite
rewardbench-math --recorded-judges`` into one DB (a DB that holds them reruns with nothing to
do), reads each run back with ``rmaudit runs DB RUN --json`` (the leaderboard: RETA, best-of-k,
letters, rank intervals) and its results file (the publisher's accuracy, accuracy with ties and
MRR), and asks ``rmaudit compare DB RB_RUN RM_RUN --rank-correlation --json`` whether the two
benchmarks rank the shared models alike.  Nothing is recomputed here: every figure is the
CLI's.  ``--write FILE`` puts the tables between the ``<!-- rewardmath-leaderboard:start -->``
and ``<!-- rewardmath-leaderboard:end -->`` comments of FILE.

    python benchmarks/rewardmath_leaderboard.py --data-dir ../shared/data --write docs/rewardmath.md
    python benchmarks/rewardmath_leaderboard.py --smoke     # made-up models on a made-up mirror
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from _smoke import parse_args  # noqa: E402
from bench_audit_rerun import SHARED_DATA, timed_rmaudit  # noqa: E402
from llmbar_leaderboard import Board, around_markers, markdown_table  # noqa: E402

from rmaudit.display.formatting import format_number, markdown_line  # noqa: E402

START, END = "<!-- rewardmath-leaderboard:start -->", "<!-- rewardmath-leaderboard:end -->"
#: RewardMATH's result files name GRM-Llama3-8B differently in its two folders
SAME = ("GRM-Llama3-8B=grm_llama3",)
SUITES = ("rewardmath", "rewardbench-math")


def audit(suite: str, data: Path, db: Path) -> tuple[float, dict[str, Any]]:
    """``rmaudit audit --suite SUITE --recorded-judges`` into ``db``: (wall s, results entry)."""
    results = db.with_name(f"{suite}.results.json")
    command = ["audit", "--suite", suite, "--recorded-judges", "--data-dir", str(data)]
    wall, _, _ = timed_rmaudit([*command, "--db", str(db), "--results", str(results)], {})
    return wall, json.loads(results.read_text(encoding="utf-8"))["suites"][0]


def cli_json(*command: str) -> dict[str, Any]:
    _, _, out = timed_rmaudit([*command, "--json"], {})
    return json.loads(out)


def publisher_table(audited: dict[str, Any]) -> list[str]:
    """The publisher's accuracy, accuracy with ties and MRR per model (a PRM's under each of
    the eight aggregations), as percentages the way the paper prints them."""
    rows = []
    for model in audited["models"]:
        figures = model.get("publisher")
        if not figures:
            continue
        found = figures.get("aggregations") or {"": figures["overall"]}
        for name, value in found.items():
            rows.append(
                [
                    markdown_line(model["label"]) if name in ("", next(iter(found))) else "",
                    markdown_line(figures.get("kind") or ""),
                    markdown_line(name),
                    *(
                        format_number(100 * value[k], 2)
                        for k in ("accuracy", "accuracy_with_ties", "mrr")
                    ),
                ]
            )
    headers = ["model", "kind", "PRM aggregation", "Acc. (%)", "Acc. w/ tie (%)", "MRR (%)"]
    return markdown_table(headers, rows, left=("kind", "PRM aggregation"))


def agreement_table(found: dict[str, Any]) -> list[str]:
    rows = []
    for row in found["agreements"]:
        if "spearman" not in row:
            rows.append([markdown_line(row["second"]), markdown_line(row["note"]), "", "", ""])
            continue
        cells = []
        for name in ("spearman", "kendall"):
            c = row[name]
            cells += [f"{c['value']:+.3f}", f"[{c['ci_low']:+.2f}, {c['ci_high']:+.2f}]"]
        rows.append([markdown_line(row["second"]), *cells])
    headers = ["RewardMATH number", "Spearman ρ", "95% interval", "Kendall τ", "95% interval"]
    return markdown_table(headers, rows)


def section(runs: dict[str, tuple[dict, dict]], agreement: dict, data_dir: str) -> list[str]:
    lines = [
        START,
        "<!-- written by benchmarks/rewardmath_leaderboard.py: edit the script, not this text -->",
        "",
        "Reproduced by",
        "",
        "```bash",
        f"python benchmarks/rewardmath_leaderboard.py --data-dir {data_dir} "
        "--write docs/rewardmath.md",
        "```",
        "",
    ]
    for suite in SUITES:
        audited, run = runs[suite]
        models = sum(not r["baseline"] for r in run["leaderboard"]["rows"])
        lines += [
            f"### `{suite}`: {models} models, run `{run['id'][:10]}`",
            "",
            f"rmaudit's figures, best first by *{markdown_line(run['leaderboard']['headline'])}*"
            f" ± its standard error across problems, with its 95% interval; *group*: models "
            f"that share a letter are not separable (paired over the problems, Holm-adjusted); "
            f"*rank*: the simultaneous 95% rank interval.",
            "",
            *Board(run).overall(),
            "",
            "The publisher's figures (its rule, written again in rmaudit and checked against "
            "every file by tests/test_rewardmath.py):",
            "",
            *publisher_table(audited),
            "",
        ]
    models = ", ".join(markdown_line(m) for m in agreement["agreements"][0]["models"])
    lines += [
        "### Do the two benchmarks rank the same models alike?",
        "",
        f"RewardBench math's headline against each RewardMATH number, over the models scored "
        f'on both ({models}); intervals as in docs/metrics.md ("Do two benchmarks rank '
        f'alike?"):',
        "",
        *agreement_table(agreement),
        "",
    ]
    return [*lines, END]


def made_up_mirror(root: Path) -> Path:
    """Three classifiers' files in both of RewardMATH's results folders (``--smoke``)."""
    rng = np.random.default_rng(0)
    names = ["human_to_GPT-4", *(f"model-{k}" for k in range(9))]
    for folder, prefix, suffix, solutions in (
        ("RewardMATH", "", "_reward", names),
        ("Rewardbench", "rewardbench_", "", names[:2]),
    ):
        for skill, model in enumerate(("good", "fair", "poor")):
            records = []
            for i in range(8):
                scores = rng.normal(size=len(solutions))
                scores[0] += 1.5 - skill / 2  # the correct solution, first
                records.append(
                    {
                        "problem": f"What is {i} + {i}?",
                        "solution_reference": solutions,
                        "score": scores.round(3).tolist(),
                    }
                )
            path = root / "rewardmath" / "results" / folder / f"{prefix}{model}{suffix}.json.gz"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(gzip.compress(json.dumps(records).encode()))
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(SHARED_DATA))
    parser.add_argument("--db", type=Path, help="the audits' DB (default: a temporary file)")
    parser.add_argument("--write", type=Path, help="the Markdown file whose markers to fill")
    args = parse_args(parser, {})
    if args.write is not None:
        around_markers(args.write, START, END)  # a page without the markers fails first
    with tempfile.TemporaryDirectory() as folder:
        data = Path(args.data_dir).resolve()
        if args.smoke:
            data = made_up_mirror(Path(folder) / "data")
            args.data_dir = str(data)
        db = args.db or Path(folder) / "audit.db"
        runs, walls = {}, []
        for suite in SUITES:
            wall, audited = audit(suite, data, db)
            walls.append(wall)
            runs[suite] = (audited, cli_json("runs", str(db), audited["run_id"])["runs"][0])
        same = [f"--same={s}" for s in SAME]
        ids = [runs[s][0]["run_id"] for s in reversed(SUITES)]
        agreement = cli_json("compare", str(db), *ids, "--rank-correlation", *same)
        lines = section(runs, agreement, args.data_dir)
    print(f"audits: {' + '.join(f'{w:.1f}' for w in walls)} s; data {data}; DB {db}")
    if args.write is None:
        print("\n".join(lines))
    else:
        head, tail = around_markers(args.write, START, END)
        args.write.write_text(head + "\n".join(lines) + tail, encoding="utf-8")
        print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
