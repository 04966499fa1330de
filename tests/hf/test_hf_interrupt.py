"""Ctrl-C while a tiny Hugging Face RM scores (issue 52, item 1): the worker thread computing
the next call is stopped and waited for before the process exits, so the run ends with its
one line and exit 130 — never under a running model ("terminate called without an active
exception", exit 134) — and a rerun completes the work."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
from _support import HANG_S
from test_audit_command import write_hh

pytest.importorskip("torch")

#: ``rmaudit audit`` with each hf-classifier score() call marked in a file (sys.argv[1]) as it
#: starts and as it ends, from inside the worker thread that makes it
MARKED_AUDIT = """
import sys
from rmaudit.default_plugins.huggingface import HFClassifier

marks = sys.argv.pop(1)
score = HFClassifier.score


def mark(line):
    with open(marks, "a") as handle:
        handle.write(line + "\\n")


def marked(self, batch):
    mark("start")
    try:
        outputs = score(self, batch)
    except BaseException as error:
        mark("end " + type(error).__name__)
        raise
    mark("end returned")
    return outputs


HFClassifier.score = marked
sys.argv[0] = "rmaudit"
from rmaudit.__main__ import main
main()
"""


def _marks(path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _stored(db) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as connection:
            return connection.execute("select count(*) from rm_scores").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def test_ctrl_c_mid_scores_stops_the_worker_before_exit_130(
    tiny_models, tmp_path, rmaudit, monkeypatch
):
    data, db, marks = tmp_path / "data", tmp_path / "audit.db", tmp_path / "marks.txt"
    write_hh(data)
    args = ["audit", tiny_models["gpt2-rm"], "--suite", "hh", "--data-dir", str(data)]
    args += ["--db", str(db)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(
        [sys.executable, "-c", MARKED_AUDIT, str(marks), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    stderr: list[str] = []  # read as it comes, so a full pipe never blocks the audit
    reader = threading.Thread(target=lambda: stderr.extend(process.stderr), daemon=True)
    reader.start()
    deadline = time.monotonic() + HANG_S
    # the first call's scores committed and the second call running in the worker: the
    # driver now waits on it
    while not (_marks(marks).count("start") >= 2 and _stored(db) > 0):
        assert process.poll() is None, "the audit finished before it could be interrupted"
        assert time.monotonic() < deadline, "the audit never reached its second call"
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    process.wait(timeout=HANG_S)
    reader.join(timeout=HANG_S)
    err = "".join(stderr)
    assert process.returncode == 130, err
    assert "terminate called" not in err and "Traceback" not in err
    assert err.strip().splitlines()[-1] == "Interrupted (Ctrl-C); rerun the same command to resume."
    lines = _marks(marks)
    # every call the worker started had ended before the process exited
    assert lines.count("start") == sum(line.startswith("end") for line in lines), lines
    with sqlite3.connect(db) as connection:
        (status,) = connection.execute("select status from runs").fetchone()
    assert status == "interrupted"

    monkeypatch.chdir(tmp_path)  # where the interrupted audit ran
    resumed = rmaudit(*args)  # the rerun needs no process of its own
    assert resumed.code == 0, resumed.err
