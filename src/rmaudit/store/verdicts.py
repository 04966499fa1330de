"""A pairwise judge's stored verdicts (``judge_verdicts``), one per pair as shown, keyed by the
judge and the showing (:func:`rmaudit.components.shown_key`): ``insert or ignore``, so a
rerun or a resumed run never stores a verdict twice.  The table's record is what a judge
returns, :class:`PairVerdict`, written and read back as it is."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NamedTuple, cast

from .json_columns import dumps, json_list
from .pair_records import PairIds
from .tables import Table, marks

if TYPE_CHECKING:
    from . import Store

#: a verdict on one showing: the first-shown answer is better, the second, a tie, or the
#: reply held no verdict (counted apart, never scored)
Verdict = Literal["first", "second", "tie", "unparsed"]
VERDICTS: tuple[Verdict, ...] = ("first", "second", "tie", "unparsed")


@dataclass(frozen=True)
class PairVerdict:
    """A judge's verdict on one pair as shown (:class:`rmaudit.components.PairShown`).

    ``p_first`` is the judge's probability that the first-shown answer is better, a tie
    counting one half: from the verdict tokens' log-probabilities when ``from_logprobs``,
    else the share of its parsed sampled replies (NaN when no reply held a verdict).
    ``verdict`` is the most likely verdict (``"unparsed"`` when none was read).
    """

    verdict: Verdict
    p_first: float
    reply: str = ""
    samples: tuple[Verdict, ...] = ()
    from_logprobs: bool = False
    cost_usd: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ShownIds(NamedTuple):
    """A pair as shown, by its ids: the showing's key, the prompt, the first and the second
    answer (the key a verdict is stored under)."""

    key: str
    prompt_id: str
    first_id: str
    second_id: str


#: the ``judge_verdicts`` columns of a :class:`PairVerdict`, each named for its field: written
#: and read in this order, the record built by name (its fields' order is its own)
_FIELDS = (
    "verdict",
    "p_first",
    "reply",
    "samples",
    "from_logprobs",
    "cost_usd",
    "prompt_tokens",
    "completion_tokens",
)
_COLUMNS = ", ".join(_FIELDS)


class Verdicts(Table):
    def __init__(self, store: Store) -> None:
        super().__init__(store)
        #: each judge's verdicts as last read (a run's metrics and its views read them all)
        self._read: dict[str, dict[str, PairVerdict]] = {}

    def add(self, rm_key: str, shown: Sequence[ShownIds], verdicts: Sequence[PairVerdict]) -> None:
        """The judge's verdicts on these showings, ``verdicts[i]`` on ``shown[i]``."""
        self._insert(
            "insert or ignore into judge_verdicts (rm_key, shown_key, prompt_id, first_id, "
            f"second_id, {_COLUMNS}) values (?, ?, ?, ?, ?, {marks(_FIELDS)})",
            (
                (rm_key, *ids, v.verdict, v.p_first, v.reply, dumps(list(v.samples)))
                + (int(v.from_logprobs), v.cost_usd, v.prompt_tokens, v.completion_tokens)
                for ids, v in zip(shown, verdicts, strict=True)
            ),
        )

    def stored(self, rm_key: str, shown_keys: Sequence[str]) -> set[str]:
        """Those of ``shown_keys`` the judge has a verdict on: its verdicts' keys read at once
        where it holds at most ``RANGE_READ`` times as many as asked about, else looked up."""
        return self._stored_by("judge_verdicts", "rm_key", rm_key, shown_keys, "shown_key")

    def of(self, rm_key: str) -> dict[str, PairVerdict]:
        """Every stored verdict of a judge, by showing: read again only when the judge holds
        another number of them (a stored verdict is never changed or deleted)."""
        (held,) = self.store.execute(
            "select count(*) from judge_verdicts where rm_key = ?", [rm_key]
        ).fetchone()
        if len(self._read.get(rm_key, ())) != held:
            self._read[rm_key] = self._rows("where rm_key = ?", [rm_key])
        return self._read[rm_key]

    def of_showings(self, rm_key: str, shown_keys: Sequence[str]) -> dict[str, PairVerdict]:
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

    def _rows(self, where: str, params: list) -> dict[str, PairVerdict]:
        rows = self.store.execute(
            f"select shown_key, {_COLUMNS} from judge_verdicts " + where, params
        )
        parsed: dict[str, tuple[Verdict, ...]] = {}  # a judge's samples repeat: each parsed once
        found = {}
        for key, verdict, p, reply, samples, logprobs, cost, prompt, completion in rows:
            if samples not in parsed:
                listed = json_list(samples, self.store.path, "judge_verdicts.samples")
                parsed[samples] = cast(tuple[Verdict, ...], listed)
            found[key] = PairVerdict(
                verdict=verdict,
                # an unparsed verdict's P(first) is NaN, which SQLite stores as NULL
                p_first=math.nan if p is None else p,
                reply=reply,
                samples=parsed[samples],
                from_logprobs=bool(logprobs),
                cost_usd=cost,
                prompt_tokens=prompt,
                completion_tokens=completion,
            )
        return found
