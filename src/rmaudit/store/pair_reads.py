"""What the store reads of a run's preference pairs: :class:`PairReads`, the pair half of
:class:`rmaudit.store.read.Reads` (which derives from it), kept apart to keep each module short."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .json_columns import json_object
from .pair_records import PairScore, PairTexts, ScoredPair, ScoredShiftedPair, SetPair

if TYPE_CHECKING:
    from . import Store

#: a pair's prompt and response texts
_TEXTS = (
    "join prompts q on q.id = p.prompt_id join responses c on c.id = p.chosen_id "
    "join responses r on r.id = p.rejected_id"
)
#: one RM's scores of a pair's chosen and rejected responses (the RM's key twice)
_SCORES = (
    "join rm_scores sc on sc.rm_key = ? and sc.response_id = p.chosen_id "
    "join rm_scores sr on sr.rm_key = ? and sr.response_id = p.rejected_id"
)


def pair_set_rows(
    store: Store, pair_set_key: str, rm_key: str | None = None, *, texts: bool = True
) -> list[tuple]:
    """A pair set's pairs in order, each (position, pair id, subset, meta, prompt id), then
    with ``texts`` or without ``rm_key`` (chosen id, rejected id), then with ``texts``
    (prompt, chosen, rejected), then with ``rm_key`` that RM's (chosen score, rejected score),
    for the pairs it scored: the one read of a pair set, whose rows :class:`PairScore`,
    :class:`ScoredPair` and :class:`SetPair` name."""
    columns = ["s.position", "p.id", "p.subset", _pair_meta(store), "p.prompt_id"]
    joins, params = ["from pair_sets s join pairs p on p.id = s.pair_id"], []
    if texts or rm_key is None:
        columns += ["p.chosen_id", "p.rejected_id"]
    if texts:
        columns += ["q.text", "c.text", "r.text"]
        joins.append(_TEXTS)
    if rm_key is not None:
        columns += ["sc.score", "sr.score"]
        joins.append(_SCORES)
        params += [rm_key, rm_key]
    rows = store.execute(
        f"select {', '.join(columns)} {' '.join(joins)} where s.pair_set_key = ? "
        "order by s.position",
        [*params, pair_set_key],
    ).fetchall()
    return [(*row[:3], json_object(row[3], store.path, "pairs.meta"), *row[4:]) for row in rows]


def _pair_meta(store: Store) -> str:
    """A pair's meta at its position (a file opened read-only before schema 10 has only the
    pair's own: its first position's)."""
    columns = {row[1] for row in store.execute("pragma table_info(pair_sets)")}
    return "coalesce(s.meta, p.meta)" if "meta" in columns else "p.meta"


class PairReads:
    store: Store

    def pair_count(self, pair_set_key: str) -> int:
        return self.store.execute(
            "select count(*) from pair_sets where pair_set_key = ?", [pair_set_key]
        ).fetchone()[0]

    def pair_scores(self, pair_set_key: str, rm_key: str) -> list[ScoredPair]:
        """Every pair of a pair set that ``rm_key`` scored, in order, with its texts and the
        meta the source gave it at its position."""
        return [ScoredPair._make(row) for row in pair_set_rows(self.store, pair_set_key, rm_key)]

    def pair_score_rows(self, pair_set_key: str, rm_key: str) -> list[PairScore]:
        """:meth:`pair_scores` without the texts (a comparison's per-pair credits need none,
        and RM-Bench's texts make the read several times slower)."""
        rows = pair_set_rows(self.store, pair_set_key, rm_key, texts=False)
        return [PairScore._make(row) for row in rows]

    def set_pairs(self, pair_set_key: str) -> list[SetPair]:
        """Every pair of a pair set, in order, without texts or scores (what a pairwise judge's
        verdicts are matched to: it scores no response)."""
        return [SetPair._make(row) for row in pair_set_rows(self.store, pair_set_key, texts=False)]

    def set_texts(self, pair_set_key: str) -> dict[str, PairTexts]:
        """The texts of every pair of a pair set, by pair id."""
        rows = pair_set_rows(self.store, pair_set_key)
        return {row[1]: PairTexts(row[7], row[8], row[9], row[5], row[6]) for row in rows}

    def shifted_pair_scores(self, pair_set_key: str, rm_key: str) -> list[ScoredShiftedPair]:
        """Every stored shifted copy of the set's pairs that ``rm_key`` scored."""
        rows = self.store.execute(
            f"""select p.id, p.original_pair_id, p.shift_target, p.shift_level, sc.score, sr.score
               from pairs p {_SCORES}
               where p.original_pair_id in
                 (select pair_id from pair_sets where pair_set_key = ?)""",
            [rm_key, rm_key, pair_set_key],
        ).fetchall()
        return [ScoredShiftedPair._make(row) for row in rows]

    def pair_texts(self, pair_id: str) -> PairTexts | None:
        """A stored pair's texts (None: not stored)."""
        row = self.store.execute(
            f"select q.text, c.text, r.text, p.chosen_id, p.rejected_id from pairs p {_TEXTS} "
            "where p.id = ?",
            [pair_id],
        ).fetchone()
        return None if row is None else PairTexts._make(row)
