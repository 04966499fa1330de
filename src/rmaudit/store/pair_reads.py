"""What the store reads of a run's preference pairs: :class:`PairReads`, the pair half of
:class:`rmaudit.store.read.Reads` (which derives from it), kept apart to keep each module short."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .pair_records import PairScore, PairTexts, ScoredPair, ScoredShiftedPair, SetPair

if TYPE_CHECKING:
    from . import Store


class PairReads:
    store: Store

    def pair_count(self, pair_set_key: str) -> int:
        return self.store.execute(
            "select count(*) from pair_sets where pair_set_key = ?", [pair_set_key]
        ).fetchone()[0]

    def pair_scores(self, pair_set_key: str, rm_key: str) -> list[ScoredPair]:
        """Every pair of a pair set that ``rm_key`` scored, in order, with its texts and the
        meta the source gave it at its position."""
        return [ScoredPair._make(row) for row in self._set_rows(pair_set_key, rm_key, True)]

    def pair_score_rows(self, pair_set_key: str, rm_key: str) -> list[PairScore]:
        """:meth:`pair_scores` without the texts (a comparison's per-pair credits need none,
        and RM-Bench's texts make the read several times slower)."""
        return [PairScore._make(row) for row in self._set_rows(pair_set_key, rm_key, False)]

    def set_pairs(self, pair_set_key: str) -> list[SetPair]:
        """Every pair of a pair set, in order, without texts or scores (what a pairwise judge's
        verdicts are matched to: it scores no response)."""
        return [SetPair._make(row) for row in self._set_rows(pair_set_key, None, False)]

    def set_texts(self, pair_set_key: str) -> dict[str, PairTexts]:
        """The texts of every pair of a pair set, by pair id."""
        rows = self._set_rows(pair_set_key, None, True)
        return {row[1]: PairTexts(row[7], row[8], row[9], row[5], row[6]) for row in rows}

    def _set_rows(self, pair_set_key: str, rm_key: str | None, texts: bool) -> list[tuple]:
        """The pairs of a set in order: position, pair id, subset, meta at the position, prompt
        id (and chosen and rejected ids without ``rm_key``), with their texts where asked, and
        ``rm_key``'s scores of both responses where given (only the pairs it scored)."""
        columns = ["s.position", "p.id", "p.subset", self._pair_meta(), "p.prompt_id"]
        joins, params = [], []
        if rm_key is None or texts:
            columns += ["p.chosen_id", "p.rejected_id"]
        if texts:
            columns += ["q.text", "c.text", "r.text"]
            joins += [
                "join prompts q on q.id = p.prompt_id",
                "join responses c on c.id = p.chosen_id join responses r on r.id = p.rejected_id",
            ]
        if rm_key is not None:
            columns += ["sc.score", "sr.score"]
            joins += [
                "join rm_scores sc on sc.rm_key = ? and sc.response_id = p.chosen_id",
                "join rm_scores sr on sr.rm_key = ? and sr.response_id = p.rejected_id",
            ]
            params += [rm_key, rm_key]
        return self.store.execute(
            f"select {', '.join(columns)} from pair_sets s join pairs p on p.id = s.pair_id "
            f"{' '.join(joins)} where s.pair_set_key = ? order by s.position",
            [*params, pair_set_key],
        ).fetchall()

    def _pair_meta(self) -> str:
        """A pair's meta at its position (a file opened read-only before schema 10 has only
        the pair's own: its first position's)."""
        columns = {row[1] for row in self.store.execute("pragma table_info(pair_sets)")}
        return "coalesce(s.meta, p.meta)" if "meta" in columns else "p.meta"

    def shifted_pair_scores(self, pair_set_key: str, rm_key: str) -> list[ScoredShiftedPair]:
        """Every stored shifted copy of the set's pairs that ``rm_key`` scored."""
        rows = self.store.execute(
            """select p.id, p.original_pair_id, p.shift_target, p.shift_level, sc.score, sr.score
               from pairs p
               join rm_scores sc on sc.rm_key = ? and sc.response_id = p.chosen_id
               join rm_scores sr on sr.rm_key = ? and sr.response_id = p.rejected_id
               where p.original_pair_id in
                 (select pair_id from pair_sets where pair_set_key = ?)""",
            [rm_key, rm_key, pair_set_key],
        ).fetchall()
        return [ScoredShiftedPair._make(row) for row in rows]

    def pair_texts(self, pair_id: str) -> PairTexts | None:
        """A stored pair's texts (None: not stored)."""
        row = self.store.execute(
            """select q.text, c.text, r.text, p.chosen_id, p.rejected_id from pairs p
               join prompts q on q.id = p.prompt_id join responses c on c.id = p.chosen_id
               join responses r on r.id = p.rejected_id where p.id = ?""",
            [pair_id],
        ).fetchone()
        return None if row is None else PairTexts._make(row)
