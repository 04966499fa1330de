"""The LLMBar leaderboard of docs/judges.md ("Real judges"): every judge configuration whose
outputs the LLMBar paper released (*Evaluating Large Language Models at Evaluating Instruction
Following*, arXiv 2310.07641: 6 LLMs × up to 15 prompting strategies), beside the ``length``
and ``random`` baselines, as rmaudit audits and ranks them.

The script runs ``rmaudit audit --suite llmbar --recorded-judges --data-dir DATA --db DB`` (a
DB that holds the audit already reruns it with nothing to do), reads the run back with
``rmaudit runs DB RUN --json`` and renders its leaderboard — each model's headline ± standard
error and 95% interval, its letters and simultaneous rank interval from rmaudit's paired
comparison, position bias, consistency, tie and parse-failure rates, and the headline per
subset — as two Markdown tables.  Nothing is recomputed here: every figure is the CLI's.
``--write FILE`` puts them between the ``<!-- llmbar-leaderboard:start -->`` and
``<!-- llmbar-leaderboard:end -->`` comments of FILE; without it they are printed.

    python benchmarks/llmbar_leaderboard.py --data-dir ../shared/data --write docs/judges.md
    python benchmarks/llmbar_leaderboard.py --smoke     # made-up judges on a made-up mirror
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from _smoke import parse_args  # noqa: E402
from bench_audit_rerun import SHARED_DATA, made_up_mirror, timed_rmaudit  # noqa: E402
from bench_recorded_judges import made_up_judges  # noqa: E402

from rmaudit.display.formatting import format_number, format_value, markdown_line  # noqa: E402
from rmaudit.metrics.letters import letter_runs  # noqa: E402

START, END = "<!-- llmbar-leaderboard:start -->", "<!-- llmbar-leaderboard:end -->"
#: the smoke run's judges: a label with characters Markdown acts on shows it stays literal
SMOKE_JUDGES = {
    "Long/Vanilla": "longer",
    "First/Vanilla": "first",
    "Long/Rating": "longer",
    "Right|LLM/`Gold`_*1*": "label",
}
#: LLMBar's names for its subsets (arXiv 2310.07641, Sec. 3), the table's headers
SUBSET_NAMES = {
    "llmbar-natural": "Natural",
    "llmbar-adver-neighbor": "Neighbor",
    "llmbar-adver-GPTInst": "GPTInst",
    "llmbar-adver-GPTOut": "GPTOut",
    "llmbar-adver-manual": "Manual",
}
COVERAGE = "../benchmarks/README.md#judge-audits-coverage_judgespy-issue-33"
RANKS = "../benchmarks/README.md#ranking-judges-coverage_judge_rankspy"
APPROXIMATE = " ≈"


def run_audit(data: Path, db: Path, results: Path) -> tuple[float, list[dict[str, Any]]]:
    """``rmaudit audit --suite llmbar --recorded-judges`` into ``db``: (wall s, each run)."""
    command = ["audit", "--suite", "llmbar", "--recorded-judges", "--data-dir", str(data)]
    wall, _, out = timed_rmaudit(
        [*command, "--db", str(db), "--results", str(results), "--json"], {}
    )
    return wall, json.loads(out)["suites"]


def stored_run(db: Path, run_id: str) -> dict[str, Any]:
    """``rmaudit runs DB RUN --json``: the run's results, its leaderboard among them."""
    _, _, out = timed_rmaudit(["runs", str(db), run_id, "--json"], {})
    return json.loads(out)["runs"][0]


def markdown_table(
    headers: list[str], rows: list[list[str]], left: tuple[str, ...] = ()
) -> list[str]:
    """A pipe table: numbers right-aligned, the first column and those named in ``left``
    left-aligned."""
    aligned = ["---" if i == 0 or h in left else "---:" for i, h in enumerate(headers)]
    return [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join(aligned) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


class Board:
    """One run's leaderboard (``rmaudit runs RUN --json``'s ``leaderboard``) as Markdown."""

    def __init__(self, run: dict[str, Any]) -> None:
        self.run = run
        self.board = run["leaderboard"]
        self.approximate = {
            (m["rm"], m["metric"], m["key"])
            for m in run["metrics"]
            if (m["params"] or {}).get("approximate")
        }
        compared = self.board["comparison"] or {}
        self.comparison = compared if compared.get("standings") else None

    def value(self, row: dict[str, Any], metric: str, key: str, found: dict | None) -> str:
        """A cell's value ± stderr, ≈ where the audit flags its ± approximate."""
        if found is None:
            return "—"
        flagged = (row["model"], metric, key) in self.approximate
        return format_value(found["value"], found["stderr"]) + APPROXIMATE * flagged

    def label(self, row: dict[str, Any]) -> str:
        text = markdown_line(row["model"])
        return f"*{text}* (baseline)" if row["baseline"] else text

    def overall(self) -> list[str]:
        columns = self.board["columns"]
        arrows = {True: "↑", False: "↓", None: "(signed)"}
        headers = ["model", f"{markdown_line(self.board['headline'])} ↑", "95% interval"]
        standings: dict[str, dict[str, Any]] = {}
        if self.comparison is not None:
            standings = {s["model"]: s for s in self.comparison["standings"]}
            units = f"{self.comparison['units']:,}"
            headers += [f"on the {units} common {self.comparison['unit']}", "group", "rank"]
        headers += [f"{markdown_line(c['label'])} {arrows[c['higher_is_better']]}" for c in columns]
        rows = []
        for row in self.board["rows"]:
            head = row["headline"]
            cells = [self.label(row), self.value(row, *_measure(head), head)]
            cells.append(
                f"[{format_number(head['ci_low'], 3)}, {format_number(head['ci_high'], 3)}]"
                if head
                else "—"
            )
            if self.comparison is not None:
                s = standings.get(row["model"])
                cells += (
                    [
                        format_number(s["value"]),
                        markdown_line(letter_runs(s["letters"])),
                        _ranks(s["rank_low"], s["rank_high"]),
                    ]
                    if s
                    else ["—", "", ""]
                )
            cells += [
                self.value(row, c["metric"], c["key"], row["numbers"].get(c["key"]))
                for c in columns
            ]
            rows.append(cells)
        return markdown_table(headers, rows, left=("group",))

    def by_subset(self) -> list[str]:
        subsets = self.board["subsets"]
        headers = ["model", *(markdown_line(SUBSET_NAMES.get(s, s)) for s in subsets)]
        rows = []
        for row in self.board["rows"]:
            metric, key = _measure(row["headline"])
            rows.append(
                [
                    self.label(row),
                    *(
                        self.value(row, metric, f"{key}[{s}]", row["subsets"].get(s))
                        for s in subsets
                    ),
                ]
            )
        return markdown_table(headers, rows)

    def caption(self) -> str:
        """What the first table's numbers are, and what its letters and ranks mean."""
        conventions = "; ".join(self.board["conventions"])
        text = (
            f"**Overall**, best first. *{markdown_line(self.board['headline'])}* "
            f"({markdown_line(conventions)}) ± its standard error, clustered by prompt, and "
            f"its 95% interval, over every pair the model was audited on; these intervals, "
            f"and the other columns', cover 0.94–0.96 in simulation where not marked ≈ "
            f"([measured]({COVERAGE})). "
        )
        if self.comparison is None:
            why = (self.board["comparison"] or {}).get("note") or "fewer than two models"
            return text + f"Not compared: {markdown_line(why)}."
        c = self.comparison
        prompts = f" (in {c['clusters']:,} prompts)" if c["clusters"] != c["units"] else ""
        note = f"; {markdown_line(c['note'])}" if c["note"] else ""
        return text + (
            f"*On the {c['units']:,} common {c['unit']}*: the same number on the "
            f"{c['units']:,} {c['unit']}{prompts} that every model has a value on{note}. "
            f"The paired comparison ranks these, and the rows are in its order. *group*: "
            f"models that share a letter are not separable (paired differences clustered by "
            f"prompt, "
            f"Holm-adjusted at {1 - c['alpha']:.0%}); a run of three or more letters is "
            f"written first–last, the letters going a–z then A–Z (`y–B` is y z A B). "
            f"*rank*: the simultaneous {1 - c['alpha']:.0%} rank interval. Both hold for "
            f"every model at once ([measured]({RANKS}) on simulated judges: letters with a "
            f"family-wise error of 0.004–0.020, all rank intervals right together in "
            f"0.995–1.000 of the data sets)."
        )

    def notes(self) -> list[str]:
        lines = [
            f"*{markdown_line(c['label'])}*: signed, no better direction "
            f"({markdown_line(c['signed'])})."
            for c in self.board["columns"]
            if c["signed"]
        ]
        lines.append(
            f"{APPROXIMATE.strip()}: a ± the audit flags approximate (an accuracy near 0 or "
            f"1 over few pairs, a rate from 1–4 events, a position bias that fewer than 10 "
            f"prompts follow a position on: value ± 1.96·stderr covers off 95%, the 95% "
            f"interval is the figure to cite; each one's reason is `params.approximate` in "
            f"`rmaudit runs DB RUN --json`)."
        )
        return lines

    def markdown(self) -> list[str]:
        subsets = ", ".join(
            f"{markdown_line(SUBSET_NAMES.get(s, s))} (`{markdown_line(s)}`)"
            for s in self.board["subsets"]
        )
        return [
            self.caption(),
            "",
            *self.overall(),
            "",
            *self.notes(),
            "",
            f"**By subset**: the same number on each subset — {subsets} — ± its standard "
            f"error (its interval: `rmaudit runs DB RUN --json`; compared pairwise: "
            f"`rmaudit compare DB --subsets`).",
            "",
            *self.by_subset(),
        ]


def _measure(headline: dict[str, Any] | None) -> tuple[str, str]:
    """A headline's (metric, key): ("", "") for a model without one."""
    return (headline["metric"], headline["key"]) if headline else ("", "")


def _ranks(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}–{high}"


def section(runs: list[tuple[dict[str, Any], dict[str, Any]]], data_dir: str) -> list[str]:
    """The text between the markers: where the numbers come from, how to reproduce them, and
    each run's two tables (one run, unless some configuration lacks a subset)."""
    lines = [
        START,
        "<!-- written by benchmarks/llmbar_leaderboard.py: edit the script, not this text -->",
        "",
    ]
    for audited, run in runs:
        board = run["leaderboard"]
        judges = sum(not r["baseline"] for r in board["rows"])
        lines += [
            f"Suite `{markdown_line(audited['suite'])}`, run `{run['id'][:10]}`: {judges} "
            f"recorded judge configurations ({markdown_line(audited['data']['version'])}) "
            f"beside the baselines, as `rmaudit audit --suite llmbar --recorded-judges` "
            f"stores them. Reproduced by",
            "",
            "```bash",
            f"python benchmarks/llmbar_leaderboard.py --data-dir {data_dir} --write docs/judges.md",
            "```",
            "",
            *Board(run).markdown(),
            "",
        ]
    return [*lines, END]


def around_markers(path: Path, start: str = START, end: str = END) -> tuple[str, str]:
    """The text of ``path`` before ``start`` and after ``end`` (each there once, in that
    order)."""
    text = path.read_text(encoding="utf-8")
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise SystemExit(f"{path}: expected one {start} before one {end}")
    head, rest = text.split(start)
    return head, rest.split(end)[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(SHARED_DATA))
    parser.add_argument("--db", type=Path, help="the audit's DB (default: a temporary file)")
    parser.add_argument("--write", type=Path, help="the Markdown file whose markers to fill")
    args = parse_args(parser, {})
    if args.write is not None:
        around_markers(args.write)  # a page without the markers fails before the audit
    with tempfile.TemporaryDirectory() as folder:
        data = Path(args.data_dir).resolve()
        if args.smoke:
            data = made_up_judges(made_up_mirror(Path(folder) / "data"), SMOKE_JUDGES)
            args.data_dir = str(data)
        db = args.db or Path(folder) / "audit.db"
        wall, audited = run_audit(data, db, Path(db).with_suffix(".results.json"))
        runs = [(a, stored_run(db, a["run_id"])) for a in audited]
        lines = section(runs, args.data_dir)
    models = sum(len(run["leaderboard"]["rows"]) for _, run in runs)
    print(f"audit: {wall:.1f} s; {len(runs)} run(s), {models} models; data {data}; DB {db}")
    if args.write is None:
        print("\n".join(lines))
    else:
        head, tail = around_markers(args.write)
        args.write.write_text(head + "\n".join(lines) + tail, encoding="utf-8")
        print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
