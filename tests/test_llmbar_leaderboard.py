"""benchmarks/llmbar_leaderboard.py, the LLMBar leaderboard of docs/judges.md: run at its smoke
size (made-up judges on a made-up LLMBar mirror) into a page with the markers, its tables read
back and checked against what the CLI gives by other paths — ``rmaudit compare --json``'s
standings (order, letters, rank intervals, values on the common pairs) and the stored numbers
of ``rmaudit runs --json`` — and against values worked out by hand from the made-up judges."""

from __future__ import annotations

import json
import random
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest
from _support import HANG_S

from rmaudit.metrics.letters import letter_runs, runs_note

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPT = BENCHMARKS / "llmbar_leaderboard.py"
START, END = "<!-- llmbar-leaderboard:start -->", "<!-- llmbar-leaderboard:end -->"
LETTERS = string.ascii_lowercase + string.ascii_uppercase
SUBSETS = ("llmbar-natural", "llmbar-adver-neighbor", "llmbar-adver-GPTInst",
           "llmbar-adver-GPTOut", "llmbar-adver-manual")  # fmt: skip
OTHERS = ("position_bias", "consistency", "tie_rate", "parse_failure_rate")


def expand(compact: str) -> str:
    """The letters a compact cell stands for: ``i–l`` is ijkl (a–z, then A–Z)."""
    names = [*LETTERS, *(f"[{i}]" for i in range(len(LETTERS), 80))]
    found = ""
    for part in compact.split():
        first, dash, last = part.partition("–")
        if dash:
            found += "".join(names[names.index(first) : names.index(last) + 1])
        else:
            found += "".join(re.findall(r"\[\d+\]|[a-zA-Z]", part))
    return found


def test_compact_letters_stand_for_every_letter_they_replace():
    assert letter_runs("ijklmnopqrstuvwxyzAB") == "i–B"
    assert letter_runs("nopqrstuwyACGJKL") == "n–u w y A C G J–L"
    assert letter_runs("ab") == "ab" and letter_runs("S") == "S"  # no run: as it was
    # a caption explains the first–last form only where one is printed
    assert runs_note(["a", "ab", "bcde"]) == "; a–d: the groups a to d"
    assert runs_note(["a", "ab", "bd"]) == ""
    names = [*LETTERS, *(f"[{i}]" for i in range(52, 60))]
    draw = random.Random(7)
    for _ in range(300):
        letters = "".join(n for n in names if draw.random() < draw.choice((0.2, 0.6, 0.95)))
        assert expand(letter_runs(letters)) == letters


def cells(line: str) -> list[str]:
    """A table row's cells as written (Markdown escapes kept), split at unescaped pipes."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def plain(cell: str) -> str:
    return re.sub(r"\\(.)", r"\1", cell)


def tables(text: str) -> list[list[list[str]]]:
    """Every pipe table in ``text``: its header row and body rows, cells as written."""
    found: list[list[list[str]]] = []
    for block in re.findall(r"((?:^\|.*\|\n)+)", text, re.M):
        rows = block.splitlines()
        found.append([cells(rows[0]), *(cells(r) for r in rows[2:])])
    return found


def model(cell: str) -> tuple[str, bool]:
    """A model cell's label as the data has it, and whether it is marked a baseline."""
    baseline = re.fullmatch(r"\*(.*)\* \(baseline\)", cell)
    return plain(baseline.group(1) if baseline else cell), baseline is not None


def cli(*args: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-m", "rmaudit", *args], capture_output=True, text=True, timeout=HANG_S
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def shown(found: dict, approximate: bool) -> str:
    return f"{found['value']:.4f} ± {found['stderr']:.4f}" + " ≈" * approximate


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[str, Path, Path]:
    """The page the smoke run wrote, its DB, and the (empty) folder it ran in."""
    folder = tmp_path_factory.mktemp("leaderboard")
    page, db, work = folder / "judges.md", folder / "audit.db", folder / "work"
    page.write_text(f"# Judges\n\nbefore\n\n{START}\nstale\n{END}\n\nafter\n", encoding="utf-8")
    work.mkdir()
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--smoke", "--db", str(db), "--write", str(page)],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"wrote {page}" in result.stdout
    return page.read_text(encoding="utf-8"), db, work


def test_it_fills_the_markers_and_leaves_the_rest(written):
    text, _, work = written
    assert text.startswith(f"# Judges\n\nbefore\n\n{START}\n")
    assert text.endswith(f"\n{END}\n\nafter\n") and "stale" not in text
    assert "python benchmarks/llmbar_leaderboard.py --data-dir " in text
    assert not list(work.iterdir()), "the script left files in the working directory"


def test_the_overall_table_is_the_comparison_and_the_stored_numbers(written):
    text, db, _ = written
    compared = cli("compare", str(db), "--json")
    head = compared["comparisons"][0]  # compare ranks the headlines first
    run = cli("runs", str(db), compared["runs"][0], "--json")["runs"][0]
    stored = {(m["rm"], m["metric"], m["key"]): m for m in run["metrics"]}
    overall, by_subset = tables(text)
    header, rows = overall[0], overall[1:]
    assert f"on the {head['units']} common {head['unit']}" in header
    assert all(len(r) == len(header) for r in rows), "a label's pipe split a row"
    assert [model(r[0])[0] for r in rows] == [s["model"] for s in head["standings"]]
    assert {model(r[0])[0] for r in rows if model(r[0])[1]} == {"length", "random"}
    for index, (row, standing) in enumerate(zip(rows, head["standings"], strict=True)):
        label = standing["model"]
        low, high = standing["rank_low"], standing["rank_high"]
        assert row[3] == f"{standing['value']:.4f}"
        assert expand(plain(row[4])) == standing["letters"]
        assert row[5] == (str(low) if low == high else f"{low}–{high}")
        measure = head["measures"].get(label, {"metric": head["metric"], "key": head["key"]})
        found = stored[(label, measure["metric"], measure["key"])]
        assert row[1] == shown(found, bool(found["params"].get("approximate")))
        assert row[2] == f"[{found['ci_low']:.3f}, {found['ci_high']:.3f}]"
        for key, cell in zip(OTHERS, row[6:], strict=True):
            other = stored.get((label, "judge-audit", key))
            expected = (
                "—" if other is None else shown(other, bool(other["params"].get("approximate")))
            )
            assert cell == expected, (label, key)
        for subset, cell in zip(SUBSETS, by_subset[1 + index][1:], strict=True):
            one = stored[(label, measure["metric"], f"{measure['key']}[{subset}]")]
            assert cell == shown(one, bool(one["params"].get("approximate"))), (label, subset)
    assert [model(r[0])[0] for r in by_subset[1:]] == [s["model"] for s in head["standings"]]


def test_the_made_up_judges_score_what_they_were_made_to(written, tmp_path):
    """By hand: a judge naming the better output in both orders is right on every pair; one
    always naming the output shown first gets ½ on each pair, a position bias of +½ and a
    consistency of 0; the length baseline is right where the longer output is the better."""
    sys.path.insert(0, str(BENCHMARKS))
    from bench_audit_rerun import LLMBAR_FOLDERS, made_up_mirror

    data = made_up_mirror(tmp_path / "data")
    records = [
        r
        for folder in LLMBAR_FOLDERS
        for r in json.loads((data / "llmbar" / "LLMBar" / folder / "dataset.json").read_text())
    ]
    longer = [r["label"] == (1 if len(r["output_1"]) > len(r["output_2"]) else 2) for r in records]
    rows = {model(r[0])[0]: r for r in tables(written[0])[0][1:]}
    right = rows["Right|LLM/`Gold`_*1*"]
    assert right[1].startswith("1.0000 ± ") and right[5] == "1" and expand(plain(right[4])) == "a"
    first = rows["First/Vanilla"]
    assert first[1].startswith("0.5000 ± ") and first[6].startswith("0.5000 ± ")
    assert first[7].startswith("0.0000 ± ")
    assert rows["length"][1].startswith(f"{sum(longer) / len(longer):.4f} ± ")


def test_a_page_without_the_markers_fails_before_the_audit(tmp_path):
    page, db = tmp_path / "judges.md", tmp_path / "audit.db"
    page.write_text(f"# Judges\n\n{END}\n{START}\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--smoke", "--db", str(db), "--write", str(page)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert result.returncode != 0 and str(page) in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert page.read_text(encoding="utf-8") == f"# Judges\n\n{END}\n{START}\n"
    assert not db.exists()
