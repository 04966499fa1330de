"""The interpreter ``main_job_stages.py`` meters: ``_stage_child.py MODE RECIPE DB MODULES``.

``modules``: run the recipe, then write the modules it imported, in import order, to MODULES.
``fresh``: import those modules (timed), run the recipe into the fresh DB with its stages
metered and the store's statements counted, then time each stage's floor.  ``rerun``: the
same on a DB that holds the run already.  Prints one JSON line.
"""

from __future__ import annotations

import time

STARTED = time.process_time()  # what the interpreter spent before this line

import contextlib  # noqa: E402
import importlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from _stage_meter import Meter, count_statements, install  # noqa: E402


def _scores_stage(*args, **kwargs) -> str:
    execute = args[4] if len(args) > 4 else kwargs.get("execute")
    return "scores" if execute else "plan"


TARGETS = {
    "rmaudit.store:Store.open": "open and migrate",
    "rmaudit.recipe:load_recipe": "plan",
    "rmaudit.run.runner:build_components": "plan",
    "rmaudit.run.runner:Runner.preflight": "plan",
    "rmaudit.run.prompts:select": "sampling",
    "rmaudit.run.responses:generate": "generation",
    "rmaudit.default_plugins.simulated:SimulatedPolicyComponent.generate": "generation",
    "rmaudit.run.labels:label": "labels",
    "rmaudit.default_plugins.simulated:SimulatedJudgeComponent.label": "labels",
    "rmaudit.run.scores:stage": _scores_stage,
    "rmaudit.default_plugins.simulated:SimulatedRM.score": "scores",
    "rmaudit.default_plugins.reward_models:Ensemble.score": "scores",
    "rmaudit.run.metrics:compute": "metrics",
    "rmaudit.cli.summary:print_summary": "summary",
}


def run_cli(recipe: str, db: str) -> None:
    from rmaudit.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(["run", recipe, "--db", db])
        except SystemExit as done:
            if done.code:
                raise RuntimeError(f"rmaudit run exited {done.code}") from None


def import_all(modules: Path) -> float:
    """Import what the job imports, in its order; the CPU seconds it took."""
    started = time.process_time()
    for name in json.loads(modules.read_text()):
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    return time.process_time() - started


def metered_run(recipe: str, db: str, imports: float) -> tuple[Meter, dict]:
    meter = Meter()
    install(meter, TARGETS)
    count_statements(meter)
    run_cli(recipe, db)
    meter.settle()
    cpu = {"interpreter start": STARTED, "imports": imports, **meter.cpu}
    sql = [
        {"stage": stage, "kind": kind, "table": table, "statements": n, "rows": meter.rows[key]}
        for key, n in meter.statements.items()
        for stage, kind, table in [key]
    ]
    sql += [
        {"stage": stage, "kind": kind, "table": table, "statements": 0, "rows": rows}
        for (stage, kind, table), rows in meter.rows.items()
        if (stage, kind, table) not in meter.statements
    ]
    return meter, {"cpu": cpu, "total": time.process_time(), "sql": sql}


def main() -> None:
    mode, recipe, db, modules = sys.argv[1:5]
    import rmaudit.__main__ as entry  # what the command sets before numpy loads, if anything

    getattr(entry, "blas_defaults", lambda: None)()
    if mode == "modules":
        run_cli(recipe, db)
        skip = ("__main__", "rmaudit.__main__", "_stage_meter")
        names = [n for n in list(sys.modules) if n not in skip and not n.startswith("_stage")]
        Path(modules).write_text(json.dumps(names))
        print(json.dumps({"modules": len(names)}))
        return
    imports = import_all(Path(modules)) if modules else 0.0
    _, measured = metered_run(recipe, db, imports)
    if mode == "fresh":
        from _stage_floors import floors

        measured["floors"] = floors(recipe, Path(db))
    print(json.dumps(measured))


if __name__ == "__main__":
    main()
