"""The scoring checks stored per run and RM (``schema.M008``), as JSON that
:class:`rmaudit.components.scoring_checks.ScoringChecks` reads back."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import Store


class ScoringChecksTable:
    def __init__(self, store: Store) -> None:
        self.store = store

    def save(
        self, run_id: str, label: str, rm_key: str, sample_key: str, status: str, checks: str
    ) -> None:
        """The checks of the run's RM ``label`` (a rerun's replace the earlier ones)."""
        with self.store.transaction():
            self.store.execute(
                "insert or replace into scoring_checks (run_id, label, rm_key, sample_key, "
                "status, checks) values (?, ?, ?, ?, ?, ?)",
                [run_id, label, rm_key, sample_key, status, checks],
            )

    def on_sample(self, rm_key: str, sample_key: str) -> list[str]:
        """The checks every run stored for this RM on this sample (skipped ones too: they say
        under which settings a run scored unchecked), oldest first."""
        if "scoring_checks" not in self.store.tables():
            return []
        rows = self.store.execute(
            "select checks from scoring_checks where rm_key = ? and sample_key = ? order by rowid",
            [rm_key, sample_key],
        ).fetchall()
        return [row[0] for row in rows]

    def of_run(self, run_id: str) -> list[tuple[str, str]]:
        """(RM label, checks JSON) of a run, in the run's RM order; none for a run stored
        before checks were."""
        if "scoring_checks" not in self.store.tables():
            return []
        return self.store.execute(
            "select c.label, c.checks from scoring_checks c left join run_reward_models m "
            "on m.run_id = c.run_id and m.label = c.label where c.run_id = ? "
            "order by m.position",
            [run_id],
        ).fetchall()
