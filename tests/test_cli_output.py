"""What ``rmaudit run`` and ``rmaudit runs`` print, at 80, 120 and 200 columns and piped
(syrupy snapshots in __snapshots__/; after an intended change: ``pytest tests/test_cli_output.py
--snapshot-update``, then read the new output before committing it).

Whatever the width, every table fits it and no number is cut: at 80 columns the RMs become
columns; piped output is as wide as its tables, without trailing spaces.
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
    """RMs are rows where they fit (200 columns, piped) and columns where they do not (80)."""
    wide, _ = small_run("200")
    narrow, _ = small_run("80")
    assert re.search(r"│ flattery-biased +│ +\d\.\d{4} │", wide)  # a row per RM
    header = next(line for line in narrow.splitlines() if "honest" in line)
    assert all(label in header for label in ("honest", "length", "weak"))  # a column per RM
    assert re.search(r"│ RETA\(1/4\) ↑ +│", narrow)  # a row per metric
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
