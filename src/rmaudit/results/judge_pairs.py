"""A pairwise judge's pairs as the views read them, from its stored verdicts (docs/judges.md):
the pairs of a set it judged in both orders with its verdicts (:func:`judged_set`, what the
paired comparisons and the pair screens start from), its margin and credit on each
(:func:`judge_pair_rows`), and its verdict and reply in each order on one pair
(:func:`judge_on_pair`)."""

from __future__ import annotations

from dataclasses import dataclass

from rmaudit.components import JudgedPairs
from rmaudit.metrics.judging import pair_credits
from rmaudit.run.verdicts import judge_logits, judged_pairs, showing_keys
from rmaudit.store import Store
from rmaudit.store.pair_records import PairIds, StoredPair

_MARK = {"first": "A", "second": "B", "tie": "C", "unparsed": "no verdict"}


@dataclass(frozen=True)
class JudgedSet:
    """The pairs of a set that a judge judged in both orders, in the set's order, and its
    verdicts on them (aligned)."""

    pairs: list[StoredPair]
    verdicts: JudgedPairs


@dataclass(frozen=True)
class JudgeRow:
    """A judge on one pair of a set, as the pair screens list it: the pair with its texts,
    whose chosen "score" is the judge's margin (the log-odds of P(chosen preferred), both
    orders averaged, as the pair metrics read it) and rejected "score" 0, and the judge's
    credit over both orders (1 chosen, ½ tie, 0 rejected; NaN where unparsed in both)."""

    pair: StoredPair
    credit: float


@dataclass(frozen=True)
class JudgeInOrder:
    """A judge on a pair shown in one order: the order, its verdict's mark and its reply."""

    order: str
    mark: str
    reply: str


@dataclass(frozen=True)
class JudgeOnPair:
    """A judge on one pair: its margin, its credit over both orders (1 chosen, ½ tie, 0
    rejected; NaN: no verdict in either), and what it said in each order shown."""

    margin: float
    credit: float
    orders: tuple[JudgeInOrder, ...]


def judged_set(
    store: Store, pair_set_key: str, rm_key: str, set_pairs: list[StoredPair] | None = None
) -> JudgedSet | None:
    """The pairs of ``pair_set_key`` (``set_pairs``: read already) that judge ``rm_key``
    judged in both orders (None: it judged none; an RM that scores responses has no
    verdicts)."""
    stored = store.verdicts.of(rm_key)
    if not stored:
        return None
    if set_pairs is None:
        set_pairs = store.read.set_pairs(pair_set_key)
    ids = tuple(PairIds(p.prompt_id, p.chosen_id, p.rejected_id) for p in set_pairs)
    shown = showing_keys(ids)
    kept = [i for i, (first, second) in enumerate(shown) if first in stored and second in stored]
    if not kept:
        return None
    return JudgedSet([set_pairs[i] for i in kept], judged_pairs(stored, [ids[i] for i in kept]))


def judge_pair_rows(store: Store, pair_set_key: str, rm_key: str) -> list[JudgeRow]:
    """Every pair of the set that judge ``rm_key`` judged in both orders, with its texts, its
    margin and its credit."""
    judged = judged_set(store, pair_set_key, rm_key)
    if judged is None:
        return []
    texts = {p.pair_id: p for p in store.read.set_pairs(pair_set_key, texts=True)}
    margins, _ = judge_logits(judged.verdicts)
    credits = pair_credits(judged.verdicts.chosen_first, judged.verdicts.rejected_first)
    return [
        JudgeRow(
            texts[p.pair_id]._replace(chosen_score=float(margin), rejected_score=0.0),
            float(credit),
        )
        for p, margin, credit in zip(judged.pairs, margins, credits.accuracy, strict=True)
    ]


def judge_on_pair(store: Store, rm_key: str, pair_id: str) -> JudgeOnPair | None:
    """The judge ``rm_key`` on pair ``pair_id`` (shifted or not); None if it judged it not."""
    found = store.verdicts.pair_ids(pair_id)
    if found is None:
        return None
    (showings,) = showing_keys((found,))
    rows = store.verdicts.of_showings(rm_key, list(showings))
    if len(rows) < 2:
        return None
    judged = judged_pairs(rows, [found])
    chosen, _ = judge_logits(judged)
    credit = pair_credits(judged.chosen_first, judged.rejected_first).accuracy[0]
    names = ("chosen shown first", "rejected shown first")
    return JudgeOnPair(
        float(chosen[0]),
        float(credit),
        tuple(
            JudgeInOrder(name, _MARK[rows[key].verdict], rows[key].reply)
            for name, key in zip(names, showings, strict=True)
        ),
    )
