"""The runs whose databases the reference test compares: a small copy of the README's main
job for the test suite, and the main job itself for ``benchmarks/bench_main_job.py``.

``SMALL_RECIPE`` is ``recipes/helpful.toml`` with its components and metrics as they are and
its sizes cut (k = 12 prompts by k-DPP from the same pool of 308, embedded the same way; 64
responses each; a batch size of 100, so batches end mid-prompt and the last one is short):
every stage and code path of the main job, in a few seconds.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from rmaudit.cli import main

REPO = Path(__file__).resolve().parents[2]
EXPECTED = Path(__file__).with_name("expected_db.json")
MAIN_RECIPE = "recipes/helpful.toml"

SMALL_RECIPE = """\
title = "Reliability on helpfulness (simulated world), small"
batch_size = 100

[prompts.source]
name = "simulated-helpful"

[prompts.sampler]
name = "kdpp"
k = 12
seed = 0

[prompts.embedder]
name = "tfidf-lsa"
dims = 256

[responses]
per_prompt = 64

[responses.policy]
name = "simulated-policy"
seed = 0

[oracle]
name = "simulated-judge"
samples = 10

[[reward_models]]
label = "honest"
name = "simulated-rm"
bias = "none"
noise = 1.0
seed = 1

[[reward_models]]
label = "length-biased"
name = "simulated-rm"
bias = "length"
noise = 1.0
seed = 2

[[reward_models]]
label = "flattery-biased"
name = "simulated-rm"
bias = "flattery"
noise = 1.0
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
members = [
  { name = "simulated-rm", noise = 1.0, seed = 11 },
  { name = "simulated-rm", noise = 1.0, seed = 12 },
  { name = "simulated-rm", noise = 1.0, seed = 13 },
]

[[metrics]]
name = "reta"
eta = 0.25

[[metrics]]
name = "reta-curve"

[[metrics]]
name = "best-of-n"
report = [4, 16, 64]

[[metrics]]
name = "best-of-n"
label = "2nd-best-of-n"
rank = 2
report = [4, 16, 64]

[[metrics]]
name = "pairwise-accuracy"
"""


def recorded() -> dict:
    return json.loads(EXPECTED.read_text(encoding="utf-8"))


def run_small(folder: Path) -> Path:
    """``rmaudit run small.toml --db small.db`` in ``folder``, in this process (its output
    discarded); the DB's path.  The recipe is given by its relative name, as a user gives it,
    so the stored ``recipe_path`` does not hold the folder."""
    (folder / "small.toml").write_text(SMALL_RECIPE, encoding="utf-8")
    with contextlib.chdir(folder), contextlib.redirect_stdout(io.StringIO()):
        try:
            main(["run", "small.toml", "--db", "small.db"])
        except SystemExit as done:
            if done.code:
                raise RuntimeError(f"rmaudit run small.toml exited with {done.code}") from None
    return folder / "small.db"


def run_main_job(db: Path, source: Path = REPO / "src") -> None:
    """The README's main job into a fresh ``db``, as a user runs it: in its own interpreter,
    from the repository's root, with ``source`` first on the path."""
    subprocess.run(
        [sys.executable, "-m", "rmaudit", "run", MAIN_RECIPE, "--db", str(db)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(source)},
        check=True,
        stdout=subprocess.DEVNULL,
    )
