"""The records components exchange: prompts, responses, generations, oracle labels, preference
pairs as sources load them, benchmarks, and where a run's data came from."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, astuple, dataclass, field
from typing import Any

import numpy as np

from rmaudit.metrics.rewardbench2 import RowPlace
from rmaudit.store.records import RunSourceRow


@dataclass(frozen=True)
class Prompt:
    id: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Response:
    id: str
    prompt_id: str
    sample_index: int | None  # None: a response addressed by its text (preference pairs)
    text: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Generation:
    """What a reference policy returns for one (prompt, sample index)."""

    text: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OracleLabel:
    """An oracle's verdict on one response: ``score`` is the mean of ``samples``."""

    score: float
    samples: tuple[float, ...] = ()
    cost_usd: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Why samples could not be had (e.g. an unparseable judge reply), one message each; the
    #: runner records them in the ``failures`` table.  A NaN ``score`` with failures means
    #: no sample was had: the label failed and is not stored (a rerun asks again).
    failures: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return bool(self.failures) and not math.isfinite(self.score)


@dataclass(frozen=True)
class SourcedPair:
    """One preference pair as a pair source gives it: the prompt, the preferred (``chosen``)
    and the dispreferred (``rejected``) response, the subset it belongs to and what else the
    source knows (RM-Bench styles, the file line, ...)."""

    prompt: Prompt
    chosen: Response
    rejected: Response
    subset: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    #: its place in its RewardBench 2 row (None: a pair of no row)
    place: RowPlace | None = None

    @property
    def stored_meta(self) -> dict[str, Any]:
        """The meta the store keeps: the source's, with the place's where it has one."""
        return self.meta if self.place is None else {**asdict(self.place), **self.meta}


@dataclass(frozen=True)
class RejectedRecord:
    """A record of a pair file that gave no pair: where it is and why (never dropped silently)."""

    where: str  # "file:line"
    reason: str
    field: str | None = None
    value: Any = None

    def one_line(self) -> str:
        located = f"{self.where}: {self.field}" if self.field else self.where
        shown = "" if self.value is None else f" (got {self.value!r})"
        return f"{located}: {self.reason}{shown}"


@dataclass(frozen=True)
class PairLoad:
    """What a pair source or a pair file's parser read: its pairs, the records it rejected, and
    how many records it saw (``records`` = records that gave pairs + ``len(rejected)``; a record
    may give several pairs, RM-Bench's 9)."""

    pairs: list[SourcedPair]
    rejected: list[RejectedRecord] = field(default_factory=list)
    records: int = 0

    @property
    def parsed(self) -> int:
        """How many records gave pairs."""
        return self.records - len(self.rejected)

    def reasons(self) -> Counter[str]:
        """Rejected records counted by reason."""
        return Counter(r.reason for r in self.rejected)


@dataclass(frozen=True)
class BenchmarkData:
    """A stored benchmark as a pair source sees it: per prompt, its responses and their oracle
    scores, in benchmark order."""

    prompts: tuple[Prompt, ...]
    responses: tuple[tuple[Response, ...], ...]
    oracle: tuple[np.ndarray, ...]


@dataclass(frozen=True)
class Source:
    """Where part of a run's data came from: a file (path and SHA-256 of its bytes) or a
    model (id and revision), and what it gave (``role``: "prompts", "responses", "labels",
    "scores")."""

    role: str
    kind: str  # "file" or "model"
    location: str  # a file's path, a model's id
    digest: str = ""  # a file's SHA-256; a model's revision
    note: str = ""


@dataclass(frozen=True)
class BenchmarkContent:
    """A labelled benchmark read from files: what :mod:`rmaudit.benchmark.portable` stores.

    ``header`` holds ``title``, ``policy_key`` and ``oracle_key`` (content keys of the files
    the responses and labels came from, so a benchmark read from files never shares keys with
    one rmaudit built) and ``components`` (key → kind, name, version, options, simulated).
    ``records`` are one per prompt: ``{"prompt": {"text", "meta"}, "responses": [{"text",
    "sample_index", "meta", "label": {"score"}}]}``.
    """

    header: dict[str, Any]
    records: list[dict[str, Any]]
    #: what the reader left out or noticed, one line each (unlabelled responses, ...)
    notes: tuple[str, ...] = ()
    sources: tuple[Source, ...] = ()
    #: who labelled the benchmark, for the provenance banner ("AlpacaEval weighted GPT-4-turbo")
    oracle_description: str = "labels file"


#: the parts of a run, in the order the banner names them
PROVENANCE_PARTS = ("prompts", "responses", "oracle", "pairs", "solutions", "RMs")


@dataclass(frozen=True)
class Provenance:
    """One source of one part of a run: ``part`` (one of :data:`PROVENANCE_PARTS`), ``entry`` (the
    recipe
    entry, e.g. an RM's label), whether it is simulated, and the source itself."""

    part: str
    entry: str
    simulated: bool
    source: Source

    def row(self) -> RunSourceRow:
        return RunSourceRow(self.part, self.entry, self.simulated, *astuple(self.source))

    @classmethod
    def from_row(cls, row: RunSourceRow) -> Provenance:
        return cls(
            row.part,
            row.entry,
            row.simulated,
            Source(row.role, row.kind, row.location or "", row.digest or "", row.note or ""),
        )

    def describe(self) -> str:
        """ "simulated", "labels file (AlpacaEval …)", "model org/rm@abc", "file x.jsonl"."""
        s = self.source
        if self.simulated:
            return "simulated"
        if s.kind == "model":
            return f"model {s.location}" + (f"@{s.digest}" if s.digest else "")
        if s.kind == "file":
            what = "labels file" if s.role == "labels" else "file"
            return f"{what} ({s.note})" if s.note else f"{what} {s.location.rsplit('/', 1)[-1]}"
        return s.location
