"""What ``rmaudit run`` and ``rmaudit runs`` print, at 80, 120 and 200 columns and piped
(syrupy snapshots in __snapshots__/; after an intended change: ``pytest tests/test_cli_output.py
--snapshot-update``, then read the new output before committing it).

Whatever the width, every table fits it and no number is cut: the leaderboard keeps a row per
RM and splits its numbers over several tables where they do not fit; piped output fits 100
columns, without trailing spaces.
"""

from __future__ import annotations

import re
import sqlite3

import pytest
from rich.cells import cell_len

#: five RMs and both best-of-n ranks: too wide for 80 or 120 columns with RMs as rows
EXTRA_RMS = """
[[reward_models]]
label = "flattery-biased"
name = "simulated-rm"
bias = "flattery"
seed = 3

[[reward_models]]
label = "weak"
name = "simulated-rm"
signal = 0.4
noise = 1.5
seed = 4

[[reward_models]]
label = "ensemble-3x"
name = "ensemble"
members = [{ name = "simulated-rm", seed = 11 }, { name = "simulated-rm", seed = 12 },
           { name = "simulated-rm", seed = 13 }]

[[metrics]]
name = "best-of-n"
label = "2nd-best-of-n"
rank = 2
report = [4, 16]
"""
WIDTHS = {"80": "80", "120": "120", "200": "200", "piped": None}
#: the width piped output's tables fit (cli/console.py)
PIPED = 100
FIXED_CREATED_AT = "2025-01-01T12:00:00+00:00"


def stable(text: str, db) -> str:
    """The output with the run's and benchmark's ids (hashes of the recipe, which change with
    the recipe schema) replaced by placeholders."""
    conn = sqlite3.connect(db)
    run_id, bench_id = conn.execute("select id, benchmark_id from runs").fetchone()
    conn.close()
    for ident, name in ((run_id, "RUN"), (bench_id, "BENCH")):
        text = text.replace(ident, f"<{name}>").replace(ident[:10], f"<{name}>")
    return text


@pytest.fixture
def small_run(rmaudit, write_recipe, tmp_path, monkeypatch):
    """The run command (in tmp_path, DB audit.db) at a width; returns (output, DB)."""
    monkeypatch.chdir(tmp_path)
    recipe = write_recipe(extra_rms=EXTRA_RMS)

    def run(width: str | None):
        if width:
            monkeypatch.setenv("COLUMNS", width)
        else:
            monkeypatch.delenv("COLUMNS", raising=False)
        result = rmaudit("run", str(recipe.name), "--db", "audit.db")
        assert result.code == 0, result.err
        return result.out, tmp_path / "audit.db"

    return run


def assert_fits(out: str, width: str | None) -> None:
    lines = out.splitlines()
    assert all(line == line.rstrip() for line in lines), "a line ends in spaces"
    if width:
        assert max(cell_len(line) for line in lines) <= int(width)
    else:  # piped: the tables fit 100 columns, a line of text is never wrapped
        tables = [line for line in lines if line[:1] in "┏┃┡│└"]
        assert max(cell_len(line) for line in tables) <= PIPED


def assert_every_number_whole(out: str, db) -> None:
    """Every stored value, and its stderr, is printed whole (no '…' in a number's place)."""
    conn = sqlite3.connect(db)
    rows = conn.execute("select value, stderr from metric_results where rm_key != ''").fetchall()
    conn.close()
    for value, stderr in rows:
        assert f"{value:.4f}" in out
        if stderr is not None:
            assert f"± {stderr:.4f}" in out
    assert not re.search(r"\d…", out)


@pytest.mark.parametrize("width", WIDTHS)
def test_run_output(small_run, snapshot, width):
    out, db = small_run(WIDTHS[width])
    assert_fits(out, WIDTHS[width])
    assert_every_number_whole(out, db)
    assert stable(out, db) == snapshot


def test_the_layout_follows_the_width(small_run):
    """A row per RM at every width, best first; what does not fit goes into more tables."""
    wide, _ = small_run("200")
    narrow, _ = small_run("80")
    for out in (wide, narrow):
        rows = [line for line in out.splitlines() if re.match(r"│ [a-z]", line)]
        assert re.search(r"│ ensemble-3x +│ +\d\.\d{4}( ± \d\.\d{4})? │", out)  # a row per RM
        assert rows[0].startswith("│ ensemble-3x ")  # best first, by its headline
    assert "pairwise acc" in wide.split("└")[0]  # at 200 columns, one table
    assert "pairwise acc" not in narrow.split("└")[0] and "pairwise acc" in narrow
    assert sum(line.startswith("┏") for line in narrow.splitlines()) > sum(
        line.startswith("┏") for line in wide.splitlines()
    )  # the leaderboard's numbers in more tables
    # the legend under the summary says what the numbers mean
    for out in (wide, narrow):
        flat = " ".join(out.split())
        assert "1 = a random RM, > 1 better" in flat and "±: standard error across prompts" in flat
        assert "the worst RM by RETA(1/4) is weak" in flat


@pytest.mark.parametrize("width", WIDTHS)
def test_runs_output(rmaudit, small_run, snapshot, monkeypatch, width):
    _, db = small_run(None)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("update runs set created_at = ?", [FIXED_CREATED_AT])
    conn.close()
    if WIDTHS[width]:
        monkeypatch.setenv("COLUMNS", WIDTHS[width])
    listing = rmaudit("runs", "--db", "audit.db")
    assert listing.code == 0
    assert_fits(listing.out, WIDTHS[width])
    assert "small simulated audit" in " ".join(listing.out.split())
    assert stable(listing.out, db) == snapshot
