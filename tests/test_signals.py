"""Signals (issue 13): SIGTERM stops a run as Ctrl-C does — one line, the run marked
interrupted, exit 143 (Ctrl-C: 130) — and Ctrl-C during start-up prints no traceback."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from test_resume import EXTRA, SLOW_RM, TOTAL, _scores


def _ignore_sigint() -> None:
    """What a shell does to a script's background job (``rmaudit run ... &``) before exec."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize(
    "signum, code, said, started_ignoring",
    [
        (signal.SIGTERM, 143, "SIGTERM", None),
        (signal.SIGINT, 130, "Ctrl-C", None),
        (signal.SIGINT, 130, "Ctrl-C", _ignore_sigint),
    ],
    ids=["SIGTERM", "SIGINT", "SIGINT to a background job"],
)
def test_a_signal_mid_run_marks_it_interrupted_in_one_line(
    signum, code, said, started_ignoring, tmp_path, write_recipe
):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "slow_rm.py").write_text(SLOW_RM)
    recipe = write_recipe(extra_rms=EXTRA)
    recipe.write_text(recipe.read_text().replace("batch_size = 32", "batch_size = 8"))
    db = tmp_path / "audit.db"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rmaudit",
            "--plugins-dir",
            str(plugins),
            "run",
            str(recipe),
            "--db",
            str(db),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=started_ignoring,
    )
    deadline = time.monotonic() + 120
    while _scores(db) < 2 * TOTAL + 8:
        assert process.poll() is None and time.monotonic() < deadline, "finished too soon"
        time.sleep(0.02)
    process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    assert process.returncode == code, err
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if "━" not in line and line.strip()] == [
        f"Interrupted ({said}); rerun the same command to resume."
    ]
    conn = sqlite3.connect(db)
    assert conn.execute("select status from runs").fetchone()[0] == "interrupted"
    conn.close()


@pytest.mark.parametrize("delay", [0.5, 1.0, 1.5])
def test_ctrl_c_during_start_up_prints_no_traceback(delay, tmp_path, write_recipe):
    """From the first import of the command line on (before it, in the interpreter's own
    start-up and ``import rmaudit``, Python prints its traceback, as for any program)."""
    recipe = write_recipe()
    process = subprocess.Popen(
        [sys.executable, "-m", "rmaudit", "run", str(recipe), "--db", str(tmp_path / "audit.db")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert "Traceback" not in err, err
    # 0: it finished before the signal came; -SIGINT: died of it, which a shell reports as 130
    assert process.returncode in (0, 130, -signal.SIGINT), err
