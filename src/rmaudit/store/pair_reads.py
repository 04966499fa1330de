"""What the store reads of a run's preference pairs: :class:`PairReads`, the pair half of
:class:`rmaudit.store.read.Reads` (which derives from it), kept apart to keep each module short."""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING

from .json_columns import json_object
from .pair_records import StoredPair

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


#: the select of a pair's columns, in :class:`StoredPair`'s order up to its position in a set
_PAIR = (
    "select p.id, p.prompt_id, p.chosen_id, p.rejected_id, p.subset, {meta}, p.shift_target, "
    "p.shift_level, p.perturber_key, p.original_pair_id, {position}"
)
#: a pair read by its own row, not at a position in a set
_BY_ID = _PAIR.format(meta="p.meta", position=-1)


def _pairs(
    store: Store, pairs: str, tables: str, where: str, params: list, rm_key: str | None, texts: bool
) -> list[StoredPair]:
    """The pairs of ``tables`` (``from`` …) ``where`` (``where`` …), their columns ``pairs``,
    with their texts if asked and with ``rm_key``'s scores if given (only the pairs it scored)."""
    columns, joins = [pairs, "q.text, c.text, r.text" if texts else "'', '', ''"], []
    if texts:
        joins.append(_TEXTS)
    if rm_key is not None:
        columns.append("sc.score, sr.score")
        joins.append(_SCORES)
        params = [rm_key, rm_key, *params]
    unscored = () if rm_key is not None else (math.nan, math.nan)
    rows = store.execute(f"{', '.join(columns)} {tables} {' '.join(joins)} {where}", params)
    meta = partial(json_object, path=store.path, field="pairs.meta")
    return [StoredPair._make((*row[:5], meta(row[5]), *row[6:], *unscored)) for row in rows]


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

    def set_pairs(
        self, pair_set_key: str, rm_key: str | None = None, *, texts: bool = False
    ) -> list[StoredPair]:
        """Every pair of a pair set in order, at its position and with the meta the source gave
        it there; with ``rm_key``, those that RM scored with its scores; with ``texts``, their
        texts (RM-Bench's texts make the read several times slower: a comparison needs none)."""
        return _pairs(
            self.store,
            _PAIR.format(meta=_pair_meta(self.store), position="s.position"),
            "from pair_sets s join pairs p on p.id = s.pair_id",
            "where s.pair_set_key = ? order by s.position",
            [pair_set_key],
            rm_key,
            texts,
        )

    def shifted_pair_scores(self, pair_set_key: str, rm_key: str) -> list[StoredPair]:
        """Every stored shifted copy of the set's pairs that ``rm_key`` scored."""
        return _pairs(
            self.store,
            _BY_ID,
            "from pairs p",
            "where p.original_pair_id in (select pair_id from pair_sets where pair_set_key = ?)",
            [pair_set_key],
            rm_key,
            False,
        )

    def pair_texts(self, pair_id: str) -> StoredPair | None:
        """A stored pair with its texts (None: not stored)."""
        found = _pairs(self.store, _BY_ID, "from pairs p", "where p.id = ?", [pair_id], None, True)
        return found[0] if found else None
