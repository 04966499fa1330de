"""A pairwise judge's stored verdicts (``judge_verdicts``), one per pair as shown, keyed by the
judge and the showing (:func:`rmaudit.components.shown_key`): ``insert or ignore``, so a
rerun or a resumed run never stores a verdict twice."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from .json_columns import dumps, json_list
from .pair_records import PairIds
from .tables import Table, marks

if TYPE_CHECKING:
    from . import Store


class StoredVerdict(NamedTuple):
    """One stored verdict, written and read back: the showing (its key, prompt, first and
    second answer), the verdict, P(first preferred) (NaN: unparsed), whether it came from
    log-probabilities, the parsed samples, the reply text and what the call cost."""

    shown_key: str
    prompt_id: str
    first_id: str
    second_id: str
    verdict: str
    p_first: float
    from_logprobs: bool
    samples: tuple[str, ...]
    reply: str
    cost_usd: float
    prompt_tokens: int
    completion_tokens: int


#: the ``judge_verdicts`` columns of a :class:`StoredVerdict`, in its order
_COLUMNS = ", ".join(StoredVerdict._fields)


class Verdicts(Table):
    def __init__(self, store: Store) -> None:
        super().__init__(store)
        #: each judge's verdicts as last read (a run's metrics and its views read them all)
        self._read: dict[str, dict[str, StoredVerdict]] = {}

    def add(self, rm_key: str, rows: Iterable[StoredVerdict]) -> None:
        with self.store.transaction():
            self.store.executemany(
                f"insert or ignore into judge_verdicts (rm_key, {_COLUMNS}) "
                f"values (?, {marks(StoredVerdict._fields)})",
                (
                    (rm_key, *r[:6], int(r.from_logprobs), dumps(list(r.samples)), *r[8:])
                    for r in rows
                ),
            )

    def stored(self, rm_key: str, shown_keys: Sequence[str]) -> set[str]:
        """Those of ``shown_keys`` the judge has a verdict on: its verdicts' keys read at once
        where it holds at most ``RANGE_READ`` times as many as asked about, else looked up."""
        return self._stored_by("judge_verdicts", "rm_key", rm_key, shown_keys, "shown_key")

    def of(self, rm_key: str) -> dict[str, StoredVerdict]:
        """Every stored verdict of a judge, by showing: read again only when the judge holds
        another number of them (a stored verdict is never changed or deleted)."""
        (held,) = self.store.execute(
            "select count(*) from judge_verdicts where rm_key = ?", [rm_key]
        ).fetchone()
        if len(self._read.get(rm_key, ())) != held:
            self._read[rm_key] = self._rows("where rm_key = ?", [rm_key])
        return self._read[rm_key]

    def of_showings(self, rm_key: str, shown_keys: Sequence[str]) -> dict[str, StoredVerdict]:
        """A judge's stored verdicts on these showings, by showing."""
        return self._rows(
            f"where rm_key = ? and shown_key in ({marks(shown_keys)})", [rm_key, *shown_keys]
        )

    def pair_ids(self, pair_id: str) -> PairIds | None:
        """The ids of a stored pair, shifted or not."""
        row = self.store.execute(
            "select prompt_id, chosen_id, rejected_id from pairs where id = ?", [pair_id]
        ).fetchone()
        return None if row is None else PairIds._make(row)

    def _rows(self, where: str, params: list) -> dict[str, StoredVerdict]:
        rows = self.store.execute(f"select {_COLUMNS} from judge_verdicts " + where, params)
        parsed: dict[str, tuple[str, ...]] = {}  # a judge's samples repeat: each parsed once
        found = {}
        for key, prompt, first, second, verdict, p, logprobs, samples, *call in rows:
            if samples not in parsed:
                parsed[samples] = json_list(samples, self.store.path, "judge_verdicts.samples")
            # an unparsed verdict's P(first) is NaN, which SQLite stores as NULL
            p_first = math.nan if p is None else p
            found[key] = StoredVerdict(
                key, prompt, first, second, verdict, p_first, bool(logprobs), parsed[samples], *call
            )
        return found
