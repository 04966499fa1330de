"""The typed rows the store writes and returns for a run's preference pairs (the rest are in
:mod:`rmaudit.store.records`): one record of a pair, :class:`StoredPair`, whatever a read adds
to it (:mod:`rmaudit.store.pair_reads`), and a pair's ids."""

from __future__ import annotations

import math
from typing import Any, NamedTuple


class StoredPair(NamedTuple):
    """A stored pair (``pairs``): its prompt, chosen and rejected response, subset and meta; a
    shifted copy also its target, level, perturber and the pair it copies.  What a read adds
    is carried as fields, left at their defaults where it asks for none: the pair's position in
    a pair set (with the meta its source gave it there), its texts, one RM's scores."""

    pair_id: str
    prompt_id: str
    chosen_id: str
    rejected_id: str
    subset: str | None
    meta: dict[str, Any]
    shift_target: str | None = None
    shift_level: float | None = None
    perturber_key: str | None = None
    original_pair_id: str | None = None
    #: its position in the pair set read (-1: read by its id)
    position: int = -1
    #: its texts ("": read without them)
    prompt: str = ""
    chosen: str = ""
    rejected: str = ""
    #: one RM's scores of its responses (NaN: read without an RM)
    chosen_score: float = math.nan
    rejected_score: float = math.nan


class PairIds(NamedTuple):
    """A stored pair by its ids: the prompt, the chosen and the rejected response."""

    prompt_id: str
    chosen_id: str
    rejected_id: str
