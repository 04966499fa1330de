"""A pairwise judge's stored verdicts (``judge_verdicts``), one per pair as shown, keyed by the
judge and the showing (:func:`rmaudit.components.shown_key`): ``insert or ignore``, so a
rerun or a resumed run never stores a verdict twice."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .items import chunks, marks

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
    samples: str
    reply: str
    cost_usd: float
    prompt_tokens: int
    completion_tokens: int


class Verdicts:
    def __init__(self, store: Store) -> None:
        self.store = store

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
                        r.samples,
                        r.reply,
                        r.cost_usd,
                        r.prompt_tokens,
                        r.completion_tokens,
                    )
                    for r in rows
                ),
            )

    def stored(self, rm_key: str, shown_keys: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for chunk in chunks(list(dict.fromkeys(shown_keys))):
            rows = self.store.execute(
                "select shown_key from judge_verdicts where rm_key = ? and shown_key in "
                f"({marks(chunk)})",
                [rm_key, *chunk],
            ).fetchall()  # at once: a row at a time costs a Python call each
            found.update(row[0] for row in rows)
        return found

    def of(self, rm_key: str) -> dict[str, VerdictRow]:
        """Every stored verdict of a judge, by showing."""
        return self._rows("where rm_key = ?", [rm_key])

    def of_showings(self, rm_key: str, shown_keys: Sequence[str]) -> dict[str, VerdictRow]:
        """A judge's stored verdicts on these showings, by showing."""
        return self._rows(
            f"where rm_key = ? and shown_key in ({marks(shown_keys)})", [rm_key, *shown_keys]
        )

    def pair_ids(self, pair_id: str) -> tuple[str, str, str] | None:
        """(prompt, chosen, rejected) ids of a stored pair, shifted or not."""
        row = self.store.execute(
            "select prompt_id, chosen_id, rejected_id from pairs where id = ?", [pair_id]
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def _rows(self, where: str, params: list) -> dict[str, VerdictRow]:
        rows = self.store.execute(
            "select shown_key, prompt_id, first_id, second_id, verdict, p_first, from_logprobs, "
            "samples, reply, cost_usd, prompt_tokens, completion_tokens from judge_verdicts "
            + where,
            params,
        ).fetchall()
        return {
            row[0]: VerdictRow(
                row[0],
                row[1],
                row[2],
                row[3],
                row[4],
                float("nan") if row[5] is None else float(row[5]),
                bool(row[6]),
                row[7],
                row[8],
                float(row[9] or 0.0),
                int(row[10] or 0),
                int(row[11] or 0),
            )
            for row in rows
        }
