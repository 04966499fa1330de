"""What the store reads of a run's preference pairs: :class:`PairReads`, the pair half of
:class:`rmaudit.store.read.Reads` (which derives from it), kept apart to keep each module short."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .pair_records import PairScore, PairTexts, ScoredPair, ScoredShiftedPair

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
        rows = self.store.execute(
            f"""select s.position, p.id, p.subset, {self._pair_meta()}, p.prompt_id, p.chosen_id,
                      p.rejected_id, q.text, c.text, r.text, sc.score, sr.score
               from pair_sets s join pairs p on p.id = s.pair_id
               join prompts q on q.id = p.prompt_id
               join responses c on c.id = p.chosen_id join responses r on r.id = p.rejected_id
               join rm_scores sc on sc.rm_key = ? and sc.response_id = p.chosen_id
               join rm_scores sr on sr.rm_key = ? and sr.response_id = p.rejected_id
               where s.pair_set_key = ? order by s.position""",
            [rm_key, rm_key, pair_set_key],
        ).fetchall()
        return [ScoredPair._make(row) for row in rows]

    def pair_score_rows(self, pair_set_key: str, rm_key: str) -> list[PairScore]:
        """:meth:`pair_scores` without the texts (a comparison's per-pair credits need none,
        and RM-Bench's texts make the read several times slower)."""
        rows = self.store.execute(
            f"""select s.position, p.id, p.subset, {self._pair_meta()}, p.prompt_id, sc.score,
                      sr.score
               from pair_sets s join pairs p on p.id = s.pair_id
               join rm_scores sc on sc.rm_key = ? and sc.response_id = p.chosen_id
               join rm_scores sr on sr.rm_key = ? and sr.response_id = p.rejected_id
               where s.pair_set_key = ? order by s.position""",
            [rm_key, rm_key, pair_set_key],
        ).fetchall()
        return [PairScore._make(row) for row in rows]

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
