"""Signals (issue 13): SIGTERM stops a run as Ctrl-C does — one line, the run marked
interrupted, exit 143 (Ctrl-C: 130) — and Ctrl-C during start-up prints no traceback."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from importlib.metadata import entry_points

import pytest
from _support import HANG_S
from test_resume import EXTRA, SLOW_RM, TOTAL, scores_stored


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
    deadline = time.monotonic() + HANG_S
    while scores_stored(db) < 2 * TOTAL + 8:
        assert process.poll() is None and time.monotonic() < deadline, "finished too soon"
        time.sleep(0.02)
    process.send_signal(signum)
    _, err = process.communicate(timeout=HANG_S)
    assert process.returncode == code, err
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if "━" not in line and line.strip()] == [
        f"Interrupted ({said}); rerun the same command to resume."
    ]
    conn = sqlite3.connect(db)
    assert conn.execute("select status from runs").fetchone()[0] == "interrupted"
    conn.close()


#: run before the console script's entry: a SIGINT sent to itself when ``sys.argv[1]`` is first
#: imported, a Ctrl-C at that exact moment of start-up (an event, not a delay)
CTRL_C_ON_IMPORT = """
import os, signal, sys
target = sys.argv.pop(1)

class CtrlCOnImport:
    def find_spec(self, name, path=None, target_module=None):
        if name == target:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, CtrlCOnImport())
sys.argv[0] = "rmaudit"
from rmaudit.__main__ import main
main()
"""


def test_the_console_script_is_the_entry_that_handles_ctrl_c_at_start_up():
    (script,) = entry_points(group="console_scripts", name="rmaudit")
    assert script.value == "rmaudit.__main__:main"


@pytest.mark.parametrize(
    "module",
    ["rmaudit.cli", "click", "importlib.metadata", "rmaudit.cli.run", "numpy", "rmaudit.store"],
)
def test_ctrl_c_at_any_moment_of_start_up_is_one_line_and_exit_130(module, tmp_path, write_recipe):
    """Ctrl-C while the command line imports (rmaudit's own modules, click, the package
    metadata) or loads the command (``run``'s modules, numpy, the store): one line, no
    traceback, exit 130, and no DB."""
    recipe, db = write_recipe(), tmp_path / "audit.db"
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C_ON_IMPORT, module, "run", str(recipe), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr
    assert len(lines) == 1 and lines[0].startswith("Interrupted (Ctrl-C)"), lines
    assert not db.exists()
