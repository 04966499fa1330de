"""What every stage of a run shares: the recipe, the store, the built components, progress,
the counts and timings the run reports, the prompts and responses already in memory, and
the run's one way to locate a component's error and to time a stage.

A stage first works out its ``Work`` — the keys of the items it must have stored and which of
them already are — and only then, in a run, makes the missing ones.  ``--dry-run`` stops after
the first half, so the plan is the run's own count, not a second copy of it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from rmaudit.components import BenchmarkContent, Component, Prompt, Response
from rmaudit.components.keys import response_ids
from rmaudit.components.scoring_checks import CheckSettings, ScoringChecks
from rmaudit.errors import BadInput
from rmaudit.recipe import ComponentSpec, Recipe
from rmaudit.run.executors import LocalExecutor, RayExecutor, make_executor
from rmaudit.store import Store
from rmaudit.store.item_records import StoredPrompt, StoredResponse
from rmaudit.store.records import ComponentRow

T = TypeVar("T")
C = TypeVar("C", bound=Component)


def required(value: T | None, what: str) -> T:
    """``value``, which the recipe has wherever the calling stage runs (a stage runs only for
    the sections it needs): None here is a bug of rmaudit's, not a user's input."""
    if value is None:
        raise RuntimeError(f"a stage ran without {what}")
    return value


def slot_class(spec: ComponentSpec, kind: type[C]) -> type[C]:
    """A recipe slot's class, as the kind its section holds (the plugin host registers only
    subclasses of a kind's base class)."""
    if not issubclass(spec.cls, kind):
        raise TypeError(f"{spec.label}: {spec.cls.__name__} is not a {kind.__name__}")
    return spec.cls


def built(components: dict[str, Component], spec: ComponentSpec | None, kind: type[C]) -> C:
    """The built component of a recipe slot, as the kind its section holds."""
    component = components[required(spec, "its recipe section").field]
    if not isinstance(component, kind):
        raise TypeError(f"{type(component).__name__} is not a {kind.__name__}")
    return component


#: the largest stage a run starts without being told to (items × calls per item) …
MAX_ITEMS = 10_000_000
#: … and the environment variable that raises it
MAX_ITEMS_VARIABLE = "RMAUDIT_MAX_ITEMS"


def max_items() -> int:
    raw = os.environ.get(MAX_ITEMS_VARIABLE, "")
    try:
        return int(raw) if raw else MAX_ITEMS
    except ValueError:
        raise BadInput("expected a whole number", field=MAX_ITEMS_VARIABLE, value=raw) from None


class Progress(Protocol):
    def start(self, stage: str, total: int, done: int) -> None: ...
    def advance(self, stage: str, amount: int) -> None: ...
    def finish(self, stage: str) -> None: ...


class SilentProgress:
    def start(self, stage: str, total: int, done: int) -> None: ...
    def advance(self, stage: str, amount: int) -> None: ...
    def finish(self, stage: str) -> None: ...


@dataclass
class StageCount:
    """How many items a stage needs, how many were stored before, how many it made.

    ``at_most``: in a plan, the items depend on work not done yet (the pairs of a benchmark
    still to be built), so ``total`` and ``pending`` are upper bounds.  ``approximate``: they
    are an expectation (the labels an rm-guided design draws before its guides have scored).
    """

    stage: str
    total: int
    stored: int
    calls_per_item: int = 1
    at_most: bool = False
    approximate: bool = False
    #: after a run: pending items it tried and could not store (a label with no usable judge
    #: sample); a rerun tries them again
    failed: int = 0
    #: what an item is, where the stage's name counts something else (a PRM's step scores
    #: are stored a solution at a time: "solutions")
    unit: str | None = None

    @property
    def pending(self) -> int:
        return self.total - self.stored

    @property
    def made(self) -> int:
        """After a run: the items it stored."""
        return self.pending - self.failed


@dataclass
class Keys:
    """The keys of items a later stage needs: those known, and in a plan, how many more it can
    only count (their keys depend on work not done yet); ``at_most``: that count is a bound."""

    known: list[str] = field(default_factory=list)
    unlisted: int = 0
    at_most: bool = False
    approximate: bool = False

    def __add__(self, other: Keys) -> Keys:
        return Keys(
            list(dict.fromkeys(self.known + other.known)),
            self.unlisted + other.unlisted,
            self.at_most or other.at_most,
            self.approximate or other.approximate,
        )

    @property
    def total(self) -> int:
        return len(self.known) + self.unlisted


@dataclass
class Work(Generic[T]):
    """A stage's count and, in a run, the items it must still make (all of them known)."""

    count: StageCount
    pending: list[T]


@dataclass
class RunContext:
    recipe: Recipe
    store: Store | None  # None: a plan without a database
    components: dict[str, Component]
    progress: Progress = field(default_factory=SilentProgress)
    counts: list[StageCount] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: What the recipe's benchmark source read (for the run's provenance), once read
    benchmark_content: BenchmarkContent | None = None
    #: the header of an imported rmaudit benchmark file, once read, and its records
    benchmark_header: dict[str, Any] | None = None
    benchmark_file_records: list[dict[str, Any]] | None = None
    #: the pair set a pair source that needs no benchmark gave (``run.pairs.PairSet``), once
    #: loaded: a run's plan loads it, the run reuses it
    loaded_pairs: Any = None
    #: the solution set of a run of process reward models (``run.solutions.SolutionSet``),
    #: once loaded: a run's plan loads it, the run reuses it
    loaded_solutions: Any = None
    #: the shift sweep of a pair set (``run.shift.Sweep``) by the set's key, once made: its
    #: ids hash the pairs' ids, so a run reuses its plan's
    swept: tuple[str, Any] | None = None
    #: In a plan of a benchmark from files: its oracle scores per prompt (labels known before
    #: any work), so metrics can say which prompts they will skip
    planned_oracle: tuple[np.ndarray, ...] | None = None
    #: Prompts and responses already in memory (written or read this run), so later stages
    #: read from the store only what a resumed run did not produce itself.
    prompts: dict[str, Prompt] = field(default_factory=dict)
    responses: dict[str, Response] = field(default_factory=dict)
    #: A run's own plan (``Runner.preflight``): what the run would refuse, the plan refuses
    strict: bool = False
    #: how model-backed RMs are checked before they score (docs/real-models.md)
    checks: CheckSettings = field(default_factory=CheckSettings)
    #: (RM key, sample key, settings key) → the scoring checks made this run (in its plan,
    #: where the items were known then): the run stores and keeps them rather than redo them
    checked: dict[tuple[str, str, str], ScoringChecks] = field(default_factory=dict)
    #: RM key → responses an earlier stage of this run scores with it (a label design's guides),
    #: so the scores stage counts them as done in a plan as in the run
    prescored: dict[str, Keys] = field(default_factory=dict)
    #: each scores stage's pending response ids, as its plan found them
    pending: dict[str, list[str]] = field(default_factory=dict)
    #: What the prompt source loaded: (text, meta) pairs, None until loaded
    loaded_prompts: list[tuple[str, dict[str, Any]]] | None = None
    #: The sampler's draw a run's plan made: (selection key, the chosen prompts)
    planned_draw: tuple[str, list[Prompt]] | None = None
    #: In a run's plan with a draw: the policy's key and N, whose responses it will generate
    #: (:meth:`planned_responses`)
    planned_policy: tuple[str, int] | None = None
    #: (what, component key) → ids found stored: items are never deleted, so a stage asks the
    #: store only about the others (a run about those its plan did not find), see ``stored``
    found_stored: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    #: (policy key, prompt id, N) → the ids of the prompt's responses: a plan and its run key
    #: every response of the benchmark more than once
    keyed_responses: dict[tuple[str, str, int], list[str]] = field(default_factory=dict)
    #: Runs the component calls of the item stages; connects to Ray, if at all, on first use.
    executor: LocalExecutor | RayExecutor = field(init=False)

    def __post_init__(self) -> None:
        self.executor = make_executor(self.recipe.executor)

    @property
    def db(self) -> Store:
        """The store, where a stage reads or writes it (a plan without one reads nothing)."""
        return required(self.store, "a database")

    def component(self, spec: ComponentSpec | None) -> Any:
        """The built component of a recipe slot (any kind: callers know which)."""
        return self.components[required(spec, "its recipe section").field]

    def located(self, error: BadInput, spec: ComponentSpec | None) -> BadInput:
        return locate(error, self.recipe, spec)

    def planned_responses(self) -> list[str]:
        """In a run's plan, the ids of the responses the policy will generate for the plan's
        draw (a response's key hashes policy, prompt and index: known before its text), so a
        model can check them by id before the run writes anything; none without a draw, or
        beyond ``max_items()`` (which the plan refuses)."""
        if self.planned_draw is None or self.planned_policy is None:
            return []
        policy, n = self.planned_policy
        drawn = self.planned_draw[1]
        if len(drawn) * n > max_items():
            return []
        return [rid for p in drawn for rid in self.response_ids(policy, p.id, n)]

    def check_ready(self, spec: ComponentSpec | None, count: StageCount) -> None:
        """In the plan before a run, a component whose stage has work is asked whether it can
        do it (:meth:`~rmaudit.components.Component.check_ready`), before anything is stored."""
        if self.strict and count.stored < count.total:
            try:
                self.component(spec).check_ready()
            except BadInput as error:
                raise self.located(error, spec) from None

    def check_prompts(
        self, spec: ComponentSpec | None, count: StageCount, chosen: list[Prompt]
    ) -> None:
        """In the plan before a run, an oracle with labels to make is shown the prompts it will
        judge (:meth:`~rmaudit.components.Oracle.check_prompts`), before anything is stored."""
        planned = self.planned_draw
        prompts = chosen or (planned[1] if planned else [])
        if spec is not None and self.strict and count.stored < count.total and prompts:
            try:
                self.component(spec).check_prompts(prompts)
            except BadInput as error:
                raise self.located(error, spec) from None

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        """Record the stage's wall time under ``timings[stage]`` (added to, if it ran before)."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - started

    def response_ids(self, policy_key: str, prompt_id: str, count: int) -> list[str]:
        """``components.keys.response_ids``, memoised."""
        key = (policy_key, prompt_id, count)
        if key not in self.keyed_responses:
            self.keyed_responses[key] = response_ids(policy_key, prompt_id, count)
        return self.keyed_responses[key]

    def stored_responses(self, ids: Sequence[str]) -> set[str]:
        return self._stored(
            ("responses", ""), ids, lambda s, asked: s.items.stored_responses(asked)
        )

    def stored_pairs(self, ids: Sequence[str]) -> set[str]:
        return self._stored(("pairs", ""), ids, lambda s, asked: s.items.stored_pairs(asked))

    def labelled(self, oracle_key: str, ids: Sequence[str]) -> set[str]:
        """Those of the responses ``ids`` the oracle labelled."""
        return self._stored(
            ("labels", oracle_key), ids, lambda s, a: s.items.labelled(oracle_key, a)
        )

    def scored(self, rm_key: str, ids: Sequence[str]) -> set[str]:
        """Those of the responses ``ids`` the RM scored."""
        return self._stored(("scores", rm_key), ids, lambda s, a: s.items.scored(rm_key, a))

    def step_scored(self, prm_key: str, ids: Sequence[str]) -> set[str]:
        """Those of the solutions ``ids`` the PRM scored the steps of."""
        return self._stored(
            ("step scores", prm_key), ids, lambda s, a: s.solutions.scored(prm_key, a)
        )

    def judged(self, judge_key: str, shown_keys: Sequence[str]) -> set[str]:
        """Those of the showings ``shown_keys`` the pairwise judge has a verdict on."""
        return self._stored(
            ("verdicts", judge_key), shown_keys, lambda s, a: s.verdicts.stored(judge_key, a)
        )

    def _stored(
        self,
        found: tuple[str, str],
        ids: Sequence[str],
        lookup: Callable[[Store, list[str]], set[str]],
    ) -> set[str]:
        """Those of ``ids`` stored (none without a store); only ids not found before are looked
        up (``found_stored``, by table and component key)."""
        if self.store is None or not ids:
            return set()
        known = self.found_stored.get(found)
        if known is None:  # none asked before: what the store finds is all that is known
            self.found_stored[found] = known = lookup(self.store, list(ids))
            return set(known)
        if known.issuperset(ids):  # every one found before: the plan's answer, asked again
            return set(ids)
        known |= lookup(self.store, [i for i in ids if i not in known])
        return known.intersection(ids)

    # -- reading items back, memoised -------------------------------------------------------
    def prompt(self, pid: str) -> Prompt:
        if pid not in self.prompts:
            self.prompts[pid] = Prompt(*self.db.items.prompts([pid])[pid])
        return self.prompts[pid]

    def load_responses(self, ids: Sequence[str]) -> list[Response]:
        """The responses of ``ids``, from memory or (for a resumed run) from the store."""
        missing = [rid for rid in ids if rid not in self.responses]
        for row in self.db.items.responses(missing):
            self.responses[row[0]] = response_from_row(row)
        return [self.responses[rid] for rid in ids]

    def prompted_responses(self, ids: Sequence[str]) -> list[tuple[Prompt, Response]]:
        """The responses of ``ids`` with their prompts: a batch for ``label`` and ``score``."""
        return [(self.prompt(r.prompt_id), r) for r in self.load_responses(ids)]

    def known_items(self, ids: Sequence[str]) -> list[tuple[Prompt, Response]]:
        """The (prompt, response) of each of ``ids`` in memory or stored; in a plan, those not
        made yet (a shift sweep's copies) are left out."""
        stored = (
            self.db.items.responses([rid for rid in ids if rid not in self.responses])
            if self.store is not None
            else []
        )
        for row in stored:
            self.responses[row[0]] = response_from_row(row)
        known = [self.responses[rid] for rid in ids if rid in self.responses]
        prompts = {r.prompt_id for r in known}
        if self.store is not None:
            missing = [pid for pid in prompts if pid not in self.prompts]
            for pid, stored_prompt in self.db.items.prompts(missing).items():
                self.prompts[pid] = Prompt(*stored_prompt)
        return [(self.prompts[r.prompt_id], r) for r in known if r.prompt_id in self.prompts]

    def add_components(self, *components: Component) -> None:
        """Store the identity of components whose items the run writes."""
        for c in components:
            i = c.identity()
            row = ComponentRow(c.key, i["kind"], i["name"], i["version"], i["options"], c.simulated)
            self.db.items.add_component(row)


def locate(error: BadInput, recipe: Recipe, spec: ComponentSpec | None) -> BadInput:
    """A component's error, located: a data file's error names that file (and line) and the
    record's field; any other names the recipe and the component's recipe field."""
    field = None if error.file else required(spec, "its recipe section").field
    return error.located(file=error.file or recipe.path, field=field)


def response_from_row(row: StoredResponse) -> Response:
    return Response(row.id, row.prompt_id, row.sample_index, row.text, row.meta)


def prompt_row(prompt: Prompt) -> StoredPrompt:
    return StoredPrompt(prompt.id, prompt.text, prompt.meta)


def text_response_rows(responses: Sequence[Response]) -> list[StoredResponse]:
    """Rows of responses no policy wrote (pair files, shifted texts): NULL policy_key and
    sample_index; responses a policy wrote are already stored and left alone."""
    return [
        StoredResponse(r.id, r.prompt_id, None, None, r.text, r.meta)
        for r in responses
        if r.sample_index is None
    ]
