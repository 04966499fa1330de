"""Reading a run's stored results back (for the CLI summary, the TUI and reports)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rmaudit.backends.simulated import SIMULATED_NOTICE
from rmaudit.components import RUN_LEVEL, MetricValue, Provenance
from rmaudit.components.vocabulary import (
    BASELINE_PROCESS_REWARD_MODELS,
    BASELINE_REWARD_MODELS,
    CLUSTERED_PROMPTS,
    DETAIL,
    HEADLINE,
    RETA_CURVE,
    SIGNED,
    SKIPPED_STAGE,
    ResultKey,
)
from rmaudit.display.formatting import eta_label, spread
from rmaudit.metrics.reta_coverage import few_prompts_note, finite_pool_note
from rmaudit.results.labelling import Labelling, labelling, labelling_line
from rmaudit.results.noise_dependence import NoiseDependence, noise_dependence
from rmaudit.results.provenance import banner
from rmaudit.store import Store
from rmaudit.store.records import (
    BenchmarkRow,
    CurvePointRow,
    RunRewardModel,
    RunRow,
)


@dataclass(frozen=True)
class Column:
    metric: str  # the metric's label in the recipe
    key: str
    header: str  # what the column is headed (its value's label, as the metric names it)
    higher_is_better: bool
    #: the convention of a value that heads its model's row in place of the run's first
    #: number (a pairwise judge's accuracy; empty: none), as the metric declares it
    headline: str = ""
    #: what the sign of a value with no better direction means (empty: it has one)
    signed: str = ""
    #: a detail, shown on request rather than in the leaderboard
    detail: bool = False

    @property
    def result_key(self) -> ResultKey:
        return ResultKey.read(self.key)

    @property
    def arrow(self) -> str:
        """↑ higher is better, ↓ lower, or "(signed)": no better direction (what its sign
        means is in ``signed``, which the views print beside the table)."""
        if self.signed:
            return "(signed)"
        return "↑" if self.higher_is_better else "↓"


@dataclass(frozen=True)
class Curve:
    label: str
    x_label: str
    x: np.ndarray
    value: np.ndarray
    stderr: np.ndarray
    #: each point's interval as the metric stored it (NaN where it stored none): a reliability
    #: diagram's Wilson 95% interval, which is not value ± 1.96·stderr
    ci_low: np.ndarray | None = None
    ci_high: np.ndarray | None = None

    def _largest_x_first(self) -> np.ndarray:
        """Its points' indices from the largest x to the smallest, however the metric ordered
        them: a RETA curve's from its largest η, as its sparkline and table read."""
        return np.argsort(-self.x, kind="stable")

    def from_largest_x(self) -> np.ndarray:
        """The values from the largest x to the smallest."""
        return self.value[self._largest_x_first()]

    def spread_from_largest_x(self, count: int) -> list[int]:
        """``count`` of its points spread evenly, the first and last included, from the largest
        x to the smallest: the η a RETA curve's table shows."""
        order = self._largest_x_first()
        return [int(order[i]) for i in spread(len(order), count)]


@dataclass
class RunSummary:
    """A run read back: its results by RM, metric and key, and what the views print beside."""

    run: RunRow
    #: the benchmark's record; for a run of preference pairs only, a stand-in of the same shape
    #: (each pair is a prompt with two responses, no keys) so every view can describe the run
    benchmark: BenchmarkRow
    reward_models: list[RunRewardModel]  # in recipe order
    columns: list[Column] = field(default_factory=list)
    #: each stored value by (rm_key, metric, key)
    cells: dict[tuple[str, str, str], MetricValue] = field(default_factory=dict)
    curves: dict[tuple[str, str, str], Curve] = field(default_factory=dict)
    #: results of metrics across all RMs (``scope = "run"``), in stored order
    run_level: list[tuple[Column, MetricValue]] = field(default_factory=list)
    #: how many preference pairs the run audits (0: none)
    pairs: int = 0
    #: where each part of the run came from (empty for runs stored before it was recorded)
    sources: list[Provenance] = field(default_factory=list)
    #: "pairwise-accuracy: 7 of 805 prompts skipped: all oracle scores equal", per reason
    skipped: list[str] = field(default_factory=list)
    #: a budgeted benchmark's label design and coverage (:mod:`.labelling`); None: all labelled
    labelling: Labelling | None = None
    #: a noise-dependent metric under a label design (:mod:`.noise_dependence`); None: none
    noise: NoiseDependence | None = None
    #: the rm keys of the run's baseline RMs (``length``, ``random``)
    baselines: set[str] = field(default_factory=set)
    #: how many prompts the benchmark has (0: a run of preference pairs only)
    prompts: int = 0
    #: whether a pair metric's ± is clustered by prompt (some prompt has several pairs)
    clustered_pairs: bool = False
    #: a run of process reward models: its solutions and their distinct questions (0: none)
    solutions: int = 0
    questions: int = 0

    @property
    def simulated(self) -> bool:
        return self.run.simulated

    @property
    def simulated_notice(self) -> str | None:
        """Which parts are simulated, and what the others came from; None when none is."""
        if not self.simulated:
            return None
        named = banner(self.sources)
        return f"SIMULATED — {named}" if named else SIMULATED_NOTICE

    def source_lines(self) -> list[str]:
        """One line per source: part, recipe entry, what it is, and a file's SHA-256."""
        return [
            f"{p.part} ({p.entry}): {p.describe()}"
            + (f": {p.source.location} sha256:{p.source.digest}" if p.source.kind == "file" else "")
            for p in self.sources
        ]

    @property
    def notes(self) -> list[str]:
        """Caveats the numbers need, for every view to print with them."""
        notes = list(self.skipped)
        if self.labelling is not None:
            notes.append(labelling_line(self.labelling))
        if self.noise is not None:
            notes.append(self.noise.text)
        etas = [float(c.key.split("@", 1)[1]) for c in self.columns if c.key.startswith("reta@")]
        etas += [
            float(x)
            for (_, _, key), curve in self.curves.items()
            if key == "reta_curve"
            for x in curve.x
        ]
        if etas and self.run.benchmark_id:
            note = finite_pool_note(etas, self.benchmark.per_prompt)
            if note:
                notes.append(note)
        if self.run.benchmark_id and self.columns:
            note = few_prompts_note(self.prompts)
            if note:
                notes.append(note)
        approximate = [
            c for c in self.cells.values() if c.approximate and "Wilson" in c.approximate
        ]
        # other approximate intervals (a bootstrap's measured off 95%) say their own reason
        notes += sorted(
            {f"≈: {c.approximate}" for c in self.cells.values() if c.approximate}
            - {f"≈: {c.approximate}" for c in approximate}
        )
        if approximate:
            notes.append(
                f"≈: {len(approximate)} ± of an accuracy over few pairs or near 0 or 1 "
                f"are approximate (value ± 1.96·stderr covers less than 95%); cite "
                f"the Wilson CI instead"
            )
        labels = {rm.rm_key: rm.label for rm in self.reward_models}
        notes += [
            f"{labels.get(rm_key, rm_key)}: {cell.undefined}"
            for (rm_key, _, _), cell in self.cells.items()
            if cell.undefined
        ]
        marked = [cell for _, cell in self.run_level if cell.approximate]
        if marked:
            notes.append(
                f"≈ across reward models: {len(marked)} of {len(self.run_level)} intervals are "
                f"approximate, their coverage measured off 95% or not measured at this size "
                f"(each cell's reason: rmaudit runs RUN --json, params.approximate; "
                f"benchmarks/coverage.py)"
            )
        return notes

    def curve_keys(self) -> list[tuple[str, str]]:
        """(metric, key) of every stored curve, in stored order."""
        return list(dict.fromkeys((metric, key) for _, metric, key in self.curves))

    @property
    def reta_curve(self) -> tuple[str, str] | None:
        """(metric, key) of the run's first RETA curve, which the boards draw as sparklines."""
        return next(((m, k) for m, k in self.curve_keys() if k == RETA_CURVE), None)

    def reta_etas(self) -> tuple[float, float] | None:
        """The largest and the smallest η of those curves (None: none stored)."""
        reta = self.reta_curve
        found = [c.x for (_, *ident), c in self.curves.items() if tuple(ident) == reta and len(c.x)]
        if not found:
            return None
        return max(float(x.max()) for x in found), min(float(x.min()) for x in found)

    def reta_start(self) -> str:
        """Where those curves start, their largest η: "½" for the default grid, "0.9" for
        RewardMATH's, whose η rise from 1/10."""
        largest = (self.reta_etas() or (0.5, 0.5))[0]
        return "½" if largest == 0.5 else eta_label(largest)

    @property
    def first_column(self) -> Column | None:
        """The run's first number of the whole data (not of one subset), not a detail and with
        a better direction: what heads each model's row unless its metric declares another."""
        return next(
            (
                c
                for c in self.columns
                if c.result_key.part is None and not c.detail and not c.signed
            ),
            None,
        )

    def headline(self, rm_key: str) -> Column | None:
        """The number that heads ``rm_key``'s row: a value its metric declares the headline
        (a pairwise judge's accuracy, both orders, a tie ½), else the run's first number."""
        declared = [
            c
            for c in self.columns
            if c.headline and c.result_key.part is None and (rm_key, c.metric, c.key) in self.cells
        ]
        return declared[0] if declared else self.first_column


def latest_run_id(store: Store) -> str | None:
    runs = store.read.runs()
    return runs[0].id if runs else None


def load_summary(store: Store, run_id: str) -> RunSummary:
    run = store.read.run(run_id)
    pairs = store.read.pair_count(run.pair_set_key) if run.pair_set_key else 0
    benchmark = store.items.benchmark(run.benchmark_id) if run.benchmark_id else None
    if benchmark is None:
        benchmark = BenchmarkRow(
            id=run.pair_set_key or "",
            title=run.title,
            selection_key="",
            policy_key="",
            per_prompt=2,
            oracle_key="",
            simulated=run.simulated,
            origin=f"{pairs:,} preference pairs",
            created_at=run.created_at,
        )
    reward_models = list(store.read.reward_models(run_id))
    summary = RunSummary(
        run,
        benchmark,
        reward_models,
        pairs=pairs,
        sources=[Provenance.from_row(r) for r in store.read.run_sources(run_id)],
        labelling=(found := labelling(store, run, benchmark)),
        noise=noise_dependence(run, found),
        baselines={
            row.key
            for row in store.items.components([key for _, key in reward_models])
            if row.name
            in (
                BASELINE_PROCESS_REWARD_MODELS
                if row.kind == "process_reward_model"
                else BASELINE_REWARD_MODELS
            )
        },
    )
    if run.solution_set_key:
        summary.solutions, summary.questions = store.solutions.set_size(run.solution_set_key)
    if run.benchmark_id:
        summary.prompts = len(store.read.selection_prompts(benchmark.selection_key))
    skipped = store.read.failures(run_id, SKIPPED_STAGE)
    if skipped:
        total = summary.prompts
        counts: dict[str, int] = {}
        for _, error in skipped:
            counts[error] = counts.get(error, 0) + 1
        summary.skipped = [
            f"{error.split(': ', 1)[0]}: {n} of {total} prompts skipped: {error.split(': ', 1)[-1]}"
            for error, n in counts.items()
        ]
    _add_metrics(summary, store.read.metric_rows(run_id))
    _add_curves(summary, store.read.curve_rows(run_id))
    return summary


def _add_metrics(summary: RunSummary, rows: list[MetricValue]) -> None:
    """The run's metric values as the summary's columns and cells (and run-level results)."""
    seen: set[tuple[str, str]] = set()
    for row in rows:
        params = row.params
        column = Column(
            row.metric,
            row.key,
            row.label,
            bool(row.higher_is_better),
            headline=str(params.get(HEADLINE) or ""),
            signed=str(params.get(SIGNED) or ""),
            detail=bool(params.get(DETAIL)),
        )
        summary.clustered_pairs |= CLUSTERED_PROMPTS in params
        if row.rm_key == RUN_LEVEL:
            summary.run_level.append((column, row))
            continue
        if (row.metric, row.key) not in seen:
            seen.add((row.metric, row.key))
            summary.columns.append(column)
        summary.cells[(row.rm_key, row.metric, row.key)] = row


def _add_curves(summary: RunSummary, stored: list[CurvePointRow]) -> None:
    """The run's curve points, gathered into one :class:`Curve` per (RM, metric, key)."""
    points: dict[tuple[str, str, str], list[CurvePointRow]] = {}
    for point in stored:
        points.setdefault((point.rm_key, point.metric, point.key), []).append(point)
    for ident, rows in points.items():
        rows.sort(key=lambda r: r.point)
        summary.curves[ident] = Curve(
            rows[0].label,
            rows[0].x_label,
            np.array([r.x for r in rows]),
            np.array([r.value for r in rows], dtype=float),
            np.array([r.stderr for r in rows], dtype=float),
            np.array([r.ci_low for r in rows], dtype=float),
            np.array([r.ci_high for r in rows], dtype=float),
        )


@dataclass(frozen=True)
class OracleScale:
    """What a benchmark's oracle scores look like: best-of-n values are in these units."""

    oracle: str  # the oracle component's name
    declared: tuple[float, float] | None  # the scale its options declare (an LLM judge's), if any
    low: float  # the lowest, highest and mean score it gave this benchmark's responses
    high: float
    mean: float  # what a random pick scores on average

    @property
    def short(self) -> str:
        """``1–10``: the declared scale, else the observed range."""
        low, high = self.declared or (self.low, self.high)
        return f"{low:g}–{high:g}" if self.declared else f"{low:.1f}–{high:.1f}"


def oracle_scale(store: Store, benchmark: BenchmarkRow) -> OracleScale | None:
    """The oracle's name, declared scale and observed range on ``benchmark`` (None for a run of
    preference pairs only, which has no oracle)."""
    if not benchmark.oracle_key:
        return None
    low, high, mean = store.read.oracle_range(benchmark)
    if low is None:
        return None
    oracle = next(iter(store.items.components([benchmark.oracle_key])), None)
    name = (oracle.name if oracle else None) or "oracle"
    declared = oracle.options.get("scale") if oracle else None
    scale = (
        (float(declared[0]), float(declared[1]))
        if isinstance(declared, list) and len(declared) == 2
        else None
    )
    assert high is not None and mean is not None  # with low: some response is labelled
    return OracleScale(name, scale, float(low), float(high), float(mean))
