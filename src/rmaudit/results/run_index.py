"""Which runs a DB holds: open it for reading, list its runs, resolve a run id prefix.

Light on purpose (no numpy, no metric code): ``rmaudit runs`` lists runs with nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rmaudit.errors import BadInput
from rmaudit.store import Store


def open_for_reading(path: str | Path) -> Store:
    """Open an existing rmaudit DB read-only; anything else is ``BadInput`` (exit code 2)."""
    path = str(path)
    store = Store.open_readonly(path)  # raises BadInput for foreign files and newer schemas
    if store is None:
        raise BadInput("database does not exist", file=path)
    if "runs" not in store.tables():
        store.close()
        raise BadInput("not an rmaudit database (no runs table)", file=path)
    return store


def open_if_stored(path: str) -> Store | None:
    """The DB at ``path`` opened read-only, or None where nothing is stored yet (no file, or
    a new, empty one); a foreign file or a newer schema is ``BadInput``."""
    store = Store.open_readonly(path)
    if store is not None and "schema_info" not in store.tables():  # a new, empty file
        store.close()
        return None
    return store


@dataclass(frozen=True)
class ListedRun:
    """One stored audit, as the runs list shows it."""

    id: str
    title: str
    status: str
    simulated: bool
    created_at: str
    recipe_path: str
    prompts: int
    per_prompt: int
    reward_models: int
    #: why a failed or interrupted run stopped ("" otherwise)
    error: str = ""
    #: the preference pairs it audits (0: none, or none stored yet)
    pairs: int = 0
    #: the solutions a run of process reward models audits (0: none, or none stored yet)
    solutions: int = 0

    @property
    def size(self) -> str:
        """``8 prompts × 16``, ``1,234 pairs``, ``3,013 solutions`` or, for a run whose data
        is not stored yet, ``—``."""
        if self.per_prompt:
            return f"{self.prompts:,} prompts × {self.per_prompt}"
        if self.solutions:
            return f"{self.solutions:,} solutions"
        return f"{self.pairs:,} pairs" if self.pairs else "—"


def list_runs(store: Store) -> list[ListedRun]:
    """Every run, newest first."""
    return [
        ListedRun(
            i,
            t or "",
            s or "",
            bool(sim),
            c or "",
            p or "",
            n or 0,
            pp or 0,
            rms,
            e or "",
            pairs,
            solutions,
        )
        for i, t, s, sim, c, p, n, pp, rms, e, pairs, solutions in store.read.runs()
    ]


#: the status of a run that finished every stage
DONE = "done"


#: the status of a run still writing (the TUI follows it)
RUNNING = "running"


def latest_complete_run(store: Store, *, or_running: bool = False) -> str | None:
    """The newest run that finished, or with ``or_running`` that finished or is still
    running: a failed or interrupted run is never a default."""
    wanted = {DONE, RUNNING} if or_running else {DONE}
    return next((run.id for run in list_runs(store) if run.status in wanted), None)


def resolve_run(store: Store, run_id: str | None, field: str = "--run") -> str:
    """The run named by ``run_id`` (a unique prefix), or the newest complete run when None;
    ``field`` names the option or argument that gave it."""
    if run_id is not None and not run_id.strip():  # a prefix of every id: refused, not the newest
        raise BadInput(
            "expected a run id or prefix (rmaudit runs lists them)", field=field, value=run_id
        )
    ids = [run.id for run in list_runs(store)]
    if not ids:
        raise BadInput("no runs stored; run a recipe first", file=store.path)
    if run_id is None:
        latest = latest_complete_run(store)
        if latest is None:
            raise BadInput(
                f"no complete run stored ({len(ids)} failed or unfinished: rmaudit runs "
                f"lists them); name one with --run",
                file=store.path,
            )
        return latest
    matches = [i for i in ids if i.startswith(run_id)]
    if len(matches) != 1:
        raise BadInput(
            "no such run" if not matches else "run id prefix is ambiguous",
            file=store.path,
            field=field,
            value=run_id,
        )
    return matches[0]
