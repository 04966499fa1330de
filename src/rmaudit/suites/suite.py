"""What a suite is: the data it reads (files, a hub copy), its headline numbers, and the
recorded judges its data may hold (:mod:`rmaudit.suites` lists the suites themselves)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SuiteFile:
    """One data file of a suite: where it lies in a local mirror (``--data-dir``; the layout
    of rmaudit's shared data folder), the pair source that parses it, and that source's
    options beside its path."""

    #: a path under the data folder; a folder where it ends with ``/`` (a folder of results
    #: files, any of which may be there)
    mirror: str
    source: str
    options: dict[str, Any] = field(default_factory=dict)
    #: its path in the suite's hub repository (None: the suite has no hub source)
    hub: str | None = None
    #: SHA-256 of its content (uncompressed) at the suite's pinned source: a mirror whose file
    #: differs is recorded as local files, not as that source (None: nothing pinned)
    sha256: str | None = None


@dataclass(frozen=True)
class HubSource:
    """A Hugging Face hub dataset repository the suite's files can come from."""

    repo: str
    #: the revision asked for; the commit it resolves to is stored with the run
    revision: str = "main"


@dataclass(frozen=True)
class Headline:
    """A number a suite's closing table shows: a metric's label and key in the recipe."""

    metric: str
    key: str
    name: str
    #: what a model that knows nothing scores (½ for an accuracy, 1 for RETA); None: no such
    #: value (an ECE, a best-of-n in oracle units)
    chance: float | None = None


@dataclass(frozen=True)
class RecordedJudges:
    """Judges run elsewhere whose published outputs a suite's data folder may hold, audited
    with ``--recorded-judges`` (:mod:`.recorded_judges`; docs/judges.md, "Real judges")."""

    layout: str  # "llmbar", "judgebench" or "rewardmath": where the outputs lie, how they read
    where: str  # where, for --list-suites and the one line when none are found


@dataclass(frozen=True)
class Suite:
    name: str
    title: str
    measures: str
    size: str
    #: the pinned data: source repository and version, recorded with the run
    origin: str
    #: what to fetch and where to put it, for the one-line message when the data is missing
    fetch: str
    files: tuple[SuiteFile, ...]
    metrics: tuple[dict[str, Any], ...]
    #: the first is the number a model must beat length and chance on (:mod:`.verdict`)
    headlines: tuple[Headline, ...]
    hub: HubSource | None = None
    #: pairs drawn from each file by default (None: every pair); --sample overrides it
    sample: int | None = None
    #: the word-perturbation shift sweep of recipes/shift.toml
    shift: bool = False
    #: a suite of a benchmark read from files (prompts × responses × oracle labels) instead
    #: of pairs: its [benchmark] table, whose ``root`` is the mirror folder below; ``files``
    #: then only tell whether the data is there
    benchmark: dict[str, Any] | None = None
    benchmark_root: str = ""
    #: the judges run elsewhere on its pairs whose outputs it reads (None: none)
    recorded: RecordedJudges | None = None
    #: a suite of process reward models (docs/prm.md): the solution source that reads its
    #: files; its MODELs are PRMs, and both PRM baselines are bars
    solutions: str | None = None
    #: a judge rates each response (as on a benchmark suite) instead of judging the pairs
    rating_judges: bool = False
    #: the benchmark's texts, where the suite's benchmark reads them apart from its files (a
    #: mirror path and, in ``texts_hub``, the same file's path): without them a model that
    #: reads texts cannot be audited, nor the ``length`` baseline
    texts: SuiteFile | None = None
    texts_hub: HubSource | None = None
