"""What ``rmaudit tui`` and ``rmaudit report`` show, from the store's reads (no UI toolkit
here): the runs list, a run's failures per prompt, a prompt's responses and ranks.

The store answers through indexed lookups (:mod:`rmaudit.store.read`); the one scan — an RM's
scores over the whole benchmark, for the failure table — reads each score once and
aggregates here, in numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rmaudit.components.vocabulary import RETA_PREFIX
from rmaudit.results.summary import Column, RunSummary
from rmaudit.store import Store
from rmaudit.store.records import BenchmarkRow

#: η used to mark an RM's top set when the run stored no RETA scalar to take it from.
DEFAULT_ETA = 0.25
#: how plots and tables name the results of a metric across all RMs (``scope = "run"``)
ACROSS_RMS = "across RMs"


def top_eta(store: Store, run_id: str) -> float:
    """η of the run's first RETA scalar (what "the RM's top-η set" refers to)."""
    for row in store.read.metric_rows(run_id):
        if row.key.startswith(RETA_PREFIX):
            eta = row.params.get("eta")
            return float(eta) if isinstance(eta, (int, float)) and 0 < eta < 1 else DEFAULT_ETA
    return DEFAULT_ETA


def per_prompt_columns(store: Store, summary: RunSummary) -> list[Column]:
    """The scalar metrics the run stored per prompt, RETA first (they rank failures)."""
    stored = store.read.per_prompt_keys(summary.run.id)
    columns = [c for c in summary.columns if c.key in stored]
    return sorted(columns, key=lambda c: not c.key.startswith(RETA_PREFIX))


@dataclass(frozen=True)
class PromptFailure:
    """How one RM's top picks do on one prompt.

    ``gap`` is the oracle's best score among the prompt's responses minus the oracle score
    of the RM's favourite (averaged over the RM's tied favourites, as the tie is broken
    at random): 0 when the RM picks the oracle's best, larger the worse its pick.  Under a
    label design both count only the labels the design drew (see :func:`_picks`): the best
    is the best labelled response, and the gap is NaN where no favourite was drawn.
    """

    position: int  # the prompt's place in the benchmark
    prompt_id: str
    text: str
    topic: str
    metrics: dict[str, float]  # per-prompt value by metric key
    pick_oracle: float
    best_oracle: float

    @property
    def gap(self) -> float:
        """NaN where a label design left the RM's favourites unlabelled."""
        return self.best_oracle - self.pick_oracle

    def largest_gap_first(self) -> tuple[bool, float, int]:
        """A sort key: the largest gap first, the prompts without one last."""
        unknown = math.isnan(self.gap)
        return unknown, 0.0 if unknown else -self.gap, self.position


def prompt_failures(store: Store, summary: RunSummary, rm_key: str) -> list[PromptFailure]:
    """One row per benchmark prompt for ``rm_key``, in benchmark order."""
    bench, run_id = summary.benchmark, summary.run.id
    prompts = store.read.selection_prompts(bench.selection_key)
    metrics: dict[str, dict[str, float]] = {}
    for row in store.read.per_prompt_values(run_id, rm_key):
        metrics.setdefault(row.prompt_id, {})[row.key] = row.value
    pick, best = _picks(store, bench, rm_key)
    rows = []
    for position, prompt_id, text, meta in prompts:
        if prompt_id not in best:
            continue  # not scored by this RM (an interrupted run): nothing to show
        topic = meta.get("topic", "")
        rows.append(
            PromptFailure(
                position,
                prompt_id,
                text,
                str(topic),
                metrics.get(prompt_id, {}),
                pick[prompt_id],
                best[prompt_id],
            )
        )
    return rows


def _picks(
    store: Store, bench: BenchmarkRow, rm_key: str
) -> tuple[dict[str, float], dict[str, float]]:
    """Per prompt: the oracle score of the RM's favourite (tie-averaged) and the oracle's best.

    Under a label design only the labels its design drew count: the favourite's score is the
    mean over its tied favourites' drawn labels, each weighted by 1/π (Hájek's ratio form of
    Horvitz & Thompson 1952; Särndal et al., "Model Assisted Survey Sampling", 1992,
    Sec. 5.7), NaN when the design drew none of them, and the best is the best drawn label
    (NaN when none is drawn).  With every response labelled both are the plain figures."""
    rows = store.read.scores_with_labels(bench, rm_key)
    if not rows:
        return {}, {}
    names, prompt = np.unique([row.prompt_id for row in rows], return_inverse=True)
    score = np.fromiter((row.rm_score for row in rows), float, len(rows))
    oracle = np.array([math.nan if row.oracle_score is None else row.oracle_score for row in rows])
    probability = np.array([row.inclusion_probability or 1.0 for row in rows])
    order = np.lexsort((-score, prompt))  # by prompt, the RM's favourite first
    prompt, score, oracle, probability = (
        prompt[order],
        score[order],
        oracle[order],
        probability[order],
    )
    starts = np.flatnonzero(np.r_[True, prompt[1:] != prompt[:-1]])
    labelled = ~np.isnan(oracle)
    best = np.fmax.reduceat(oracle, starts)  # NaN only where no response is labelled
    tied = score == np.repeat(score[starts], np.diff(np.r_[starts, len(score)]))
    weight = np.where(tied & labelled, 1.0 / probability, 0.0)
    weighted = np.add.reduceat(np.where(weight > 0, weight * oracle, 0.0), starts)
    total = np.add.reduceat(weight, starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        pick = np.where(total > 0, weighted / total, math.nan)
    ids = names[prompt[starts]].tolist()
    return dict(zip(ids, pick.tolist(), strict=True)), dict(zip(ids, best.tolist(), strict=True))


@dataclass(frozen=True)
class ResponseRow:
    """One response to a prompt: its oracle score and rank, and each requested RM's score and
    rank."""

    id: str
    sample_index: int
    text: str
    oracle: float
    oracle_rank: int  # 1 = the oracle's best (ties share the best rank)
    scores: dict[str, float]  # by rm_key
    ranks: dict[str, int]  # by rm_key, 1 = the RM's favourite

    @property
    def words(self) -> int:
        return len(self.text.split())


@dataclass(frozen=True)
class PromptDetail:
    prompt_id: str
    text: str
    meta: dict
    responses: list[ResponseRow] = field(default_factory=list)

    def top_set(self, rm_key: str, eta: float) -> set[str]:
        """Ids of the RM's top ⌊η·N⌋ responses (at least one): the set RETA(η) averages."""
        size = max(1, math.floor(eta * len(self.responses)))
        return {r.id for r in self.responses if r.ranks.get(rm_key, size + 1) <= size}


def prompt_detail(
    store: Store, bench: BenchmarkRow, prompt_id: str, rm_keys: list[str]
) -> PromptDetail:
    """A prompt and its responses with the oracle's and each RM's scores and ranks."""
    _, text, meta = store.items.prompts([prompt_id])[prompt_id]
    rows = store.read.labelled_responses(bench, prompt_id)
    ids = [row.id for row in rows]
    # on a budgeted benchmark a response the design left unlabelled has no oracle score: NaN
    oracle = [math.nan if row.score is None else row.score for row in rows]
    oracle_rank = _ranks(oracle)
    scores = {rm_key: store.read.scores_of(rm_key, ids) for rm_key in rm_keys}
    ranks = {
        k: dict(zip(ids, _ranks([s.get(i, -math.inf) for i in ids]), strict=True))
        for k, s in scores.items()
    }
    responses = [
        ResponseRow(
            row.id,
            row.sample_index,
            row.text,
            score,
            rank,
            {k: s[row.id] for k, s in scores.items() if row.id in s},
            {k: r[row.id] for k, r in ranks.items()},
        )
        for row, score, rank in zip(rows, oracle, oracle_rank, strict=True)
    ]
    return PromptDetail(prompt_id, text, meta, responses)


def _ranks(values: list[float]) -> list[int]:
    """1-based descending ranks; tied values share the best of their ranks."""
    descending = -np.asarray(values, dtype=float)
    return (np.searchsorted(np.sort(descending), descending, side="left") + 1).tolist()
