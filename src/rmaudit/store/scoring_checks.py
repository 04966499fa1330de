"""The scoring checks stored per run and RM (``schema.M008``), as the JSON object that
:class:`rmaudit.components.scoring_checks.ScoringChecks` writes (``as_stored``) and reads back
(``from_stored``); the store parses it as it reads the row."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from .json_columns import dumps, json_object

if TYPE_CHECKING:
    from . import Store


class StoredChecks(NamedTuple):
    """The checks of one RM of a run: its recipe label and the stored checks."""

    label: str
    checks: dict[str, Any]


class ScoringChecksTable:
    def __init__(self, store: Store) -> None:
        self.store = store

    def save(
        self,
        run_id: str,
        label: str,
        rm_key: str,
        sample_key: str,
        status: str,
        checks: dict[str, Any],
    ) -> None:
        """The checks of the run's RM ``label`` (a rerun's replace the earlier ones)."""
        with self.store.transaction():
            self.store.execute(
                "insert or replace into scoring_checks (run_id, label, rm_key, sample_key, "
                "status, checks) values (?, ?, ?, ?, ?, ?)",
                [run_id, label, rm_key, sample_key, status, dumps(checks)],
            )

    def on_sample(self, rm_key: str, sample_key: str) -> list[dict[str, Any]]:
        """The checks every run stored for this RM on this sample (skipped ones too: they say
        under which settings a run scored unchecked), oldest first."""
        if "scoring_checks" not in self.store.tables():
            return []
        rows = self.store.execute(
            "select checks from scoring_checks where rm_key = ? and sample_key = ? order by rowid",
            [rm_key, sample_key],
        ).fetchall()
        return [json_object(checks, self.store.path, "scoring_checks.checks") for (checks,) in rows]

    def of_run(self, run_id: str) -> list[StoredChecks]:
        """The checks of a run's RMs, in the run's RM order; none for a run stored before
        checks were."""
        if "scoring_checks" not in self.store.tables():
            return []
        rows = self.store.execute(
            "select c.label, c.checks from scoring_checks c left join run_reward_models m "
            "on m.run_id = c.run_id and m.label = c.label where c.run_id = ? "
            "order by m.position",
            [run_id],
        ).fetchall()
        return [
            StoredChecks(label, json_object(checks, self.store.path, "scoring_checks.checks"))
            for label, checks in rows
        ]
