"""Record the database content that tests/reference/test_db_reference.py holds the code to.

    python tests/reference/record_reference.py            # the small run and the main job
    python tests/reference/record_reference.py --small    # the small run only (seconds)

Run it on the commit BEFORE a change that is meant to leave every stored value as it is (a
speed-up, a refactor), never after it: the point of ``expected_db.json`` is that the code
after the change writes what the code before it wrote.  Only a change meant to alter stored
content (a new migration, a component's ``version`` bumped, a recipe edited) records anew,
and says so in its commit.  The small run is recorded with one BLAS thread, as the test suite
runs (tests/conftest.py); the main job as a user runs it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))

from _db_dump import dump, environment
from _reference_runs import EXPECTED, MAIN_RECIPE, REPO, SMALL_RECIPE, run_main_job, run_small


def commit() -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    )
    return out.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="record the small run only")
    args = parser.parse_args()
    old = json.loads(EXPECTED.read_text(encoding="utf-8")) if EXPECTED.exists() else {}
    with tempfile.TemporaryDirectory() as folder:
        with threadpool_limits(1):
            small = dump(run_small(Path(folder)))
        if not args.small:
            run_main_job(Path(folder) / "main.db")
            main_job = dump(Path(folder) / "main.db")
    record = {
        "commit": commit(),
        "environment": environment(),
        "small": {
            "recipe": SMALL_RECIPE,
            "tables": {name: t.as_json(with_floats=True) for name, t in small.items()},
        },
        "main_job": (
            {
                "recipe": MAIN_RECIPE,
                "tables": {name: t.as_json(with_floats=False) for name, t in main_job.items()},
            }
            if not args.small
            else old.get("main_job")
        ),
    }
    EXPECTED.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"recorded {EXPECTED.relative_to(REPO)} at commit {record['commit']}")


if __name__ == "__main__":
    main()
