"""A pairwise judge's stored verdicts (``judge_verdicts``), one per pair as shown, keyed by the
judge and the showing (:func:`rmaudit.components.shown_key`): ``insert or ignore``, so a
rerun or a resumed run never stores a verdict twice."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from .json_columns import dumps
from .pair_records import PairIds
from .tables import Table, marks

if TYPE_CHECKING:
    from . import Store


@dataclass(frozen=True)
class VerdictRow:
    """One stored verdict: the showing (its key, prompt, first and second answer), the
    verdict, P(first preferred), whether it came from log-probabilities, the parsed samples
    (JSON), the reply text and what the call cost."""

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


class StoredVerdict(NamedTuple):
    """What is read back of a stored verdict for the pair metrics and the views: the verdict,
    P(first preferred) (NaN: unparsed), whether it came from log-probabilities, and the reply
    (a named tuple: a judge's thousands are read at once, without what the call cost)."""

    verdict: str
    p_first: float
    from_logprobs: bool
    reply: str


class Verdicts(Table):
    def __init__(self, store: Store) -> None:
        super().__init__(store)
        #: each judge's verdicts as last read (a run's metrics and its views read them all)
        self._read: dict[str, dict[str, StoredVerdict]] = {}

    def add(self, rm_key: str, rows: Iterable[VerdictRow]) -> None:
        with self.store.transaction():
            self.store.executemany(
                "insert or ignore into judge_verdicts (rm_key, shown_key, prompt_id, first_id, "
                "second_id, verdict, p_first, from_logprobs, samples, reply, cost_usd, "
                "prompt_tokens, completion_tokens) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    (
                        rm_key,
                        r.shown_key,
                        r.prompt_id,
                        r.first_id,
                        r.second_id,
                        r.verdict,
                        r.p_first,
                        int(r.from_logprobs),
                        dumps(list(r.samples)),
                        r.reply,
                        r.cost_usd,
                        r.prompt_tokens,
                        r.completion_tokens,
                    )
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
        rows = self.store.execute(
            "select shown_key, verdict, p_first, from_logprobs, reply from judge_verdicts " + where,
            params,
        ).fetchall()
        # an unparsed verdict's P(first) is NaN, which SQLite stores as NULL
        return {
            key: StoredVerdict(verdict, math.nan if p is None else p, bool(logprobs), reply)
            for key, verdict, p, logprobs, reply in rows
        }
