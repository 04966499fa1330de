"""A pairwise judge's pairs as the pair screens show them: its margin on each pair (the
log-odds of P(chosen preferred), both orders averaged, as the pair metrics read it) and its
verdict and reply in each order, from the stored verdicts (docs/judges.md)."""

from __future__ import annotations

from dataclasses import dataclass

from rmaudit.run.verdicts import Triple, judge_logits, judged_pairs
from rmaudit.store import Store

_MARK = {"first": "A", "second": "B", "tie": "C", "unparsed": "no verdict"}


@dataclass(frozen=True)
class JudgeOnPair:
    """A judge on one pair: its margin, and (order, verdict, reply) for each order shown."""

    margin: float
    orders: tuple[tuple[str, str, str], ...]


def judge_pair_rows(store: Store, pair_set_key: str, rm_key: str) -> list[tuple]:
    """``Reads.pair_scores``' rows for a pairwise judge: the chosen "score" is its margin,
    the rejected one 0, for the pairs judged in both orders."""
    stored = store.verdicts.of(rm_key)
    if not stored:
        return []
    rows = store.verdicts.pair_set_rows(pair_set_key)
    triples = [Triple(r[4], r[5], r[6]) for r in rows]
    judged = [all(key in stored for key in t.showings()) for t in triples]
    kept = [t for t, ok in zip(triples, judged, strict=True) if ok]
    if not kept:
        return []
    chosen, _ = judge_logits(judged_pairs(stored, kept))
    margins = iter(chosen.tolist())
    return [(*row, next(margins), 0.0) for row, ok in zip(rows, judged, strict=True) if ok]


def judge_on_pair(store: Store, rm_key: str, pair_id: str) -> JudgeOnPair | None:
    """The judge ``rm_key`` on pair ``pair_id`` (shifted or not); None if it judged it not."""
    found = store.verdicts.pair_ids(pair_id)
    if found is None:
        return None
    triple = Triple(*found)
    rows = store.verdicts.of_showings(rm_key, list(triple.showings()))
    if len(rows) < 2:
        return None
    chosen, _ = judge_logits(judged_pairs(rows, [triple]))
    names = ("chosen shown first", "rejected shown first")
    return JudgeOnPair(
        float(chosen[0]),
        tuple(
            (name, _MARK[rows[key].verdict], rows[key].reply)
            for name, key in zip(names, triple.showings(), strict=True)
        ),
    )
