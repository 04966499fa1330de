"""The typed rows the store returns for a run's preference pairs (the rest are in
:mod:`rmaudit.store.records`): a pair with one RM's scores, with or without its texts, a shifted
copy's scores, a pair's texts and its ids; a pair set's rows are read by
:func:`rmaudit.store.pair_reads.pair_set_rows`."""

from __future__ import annotations

from typing import Any, NamedTuple


class StoredPair(NamedTuple):
    """A stored pair (``pairs``): its prompt, chosen and rejected response, subset and meta; a
    shifted copy also its target, level, perturber and the pair it copies."""

    id: str
    prompt_id: str
    chosen_id: str
    rejected_id: str
    subset: str | None
    meta: dict[str, Any]
    shift_target: str | None = None
    shift_level: float | None = None
    perturber_key: str | None = None
    original_pair_id: str | None = None


class ScoredPair(NamedTuple):
    """A pair of a pair set, with its texts and one RM's scores."""

    position: int
    pair_id: str
    subset: str | None
    #: the meta its source gave it at this position
    meta: dict[str, Any]
    prompt_id: str
    chosen_id: str
    rejected_id: str
    prompt: str
    chosen: str
    rejected: str
    chosen_score: float
    rejected_score: float


class PairScore(NamedTuple):
    """A pair of a pair set with one RM's scores, without its texts (what a comparison reads)."""

    position: int
    pair_id: str
    subset: str | None
    meta: dict[str, Any]
    prompt_id: str
    chosen_score: float
    rejected_score: float


class SetPair(NamedTuple):
    """A pair of a pair set by its ids, without texts or scores."""

    position: int
    pair_id: str
    subset: str | None
    meta: dict[str, Any]
    prompt_id: str
    chosen_id: str
    rejected_id: str


class ScoredShiftedPair(NamedTuple):
    """A shifted copy of a pair, with one RM's scores."""

    pair_id: str
    original_pair_id: str
    shift_target: str
    shift_level: float
    chosen_score: float
    rejected_score: float


class PairTexts(NamedTuple):
    """A stored pair's texts."""

    prompt: str
    chosen: str
    rejected: str
    chosen_id: str
    rejected_id: str


class PairIds(NamedTuple):
    """A stored pair by its ids: the prompt, the chosen and the rejected response."""

    prompt_id: str
    chosen_id: str
    rejected_id: str
