"""What the metrics of a run are handed: the benchmark's prompts, responses and oracle scores
in benchmark order, the RMs' stored scores (read on first use) and the pairs' logits, and
what each inputs object is a function of, for its digest (:mod:`.metric_digest`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import numpy as np

from rmaudit.components import MetricInputs, PairInputs, StepInputs, StudyInputs

from .benchmark import Benchmark, oracle_by_prompt
from .context import RunContext
from .design_inputs import BenchmarkArrays, budgeted_inputs
from .pairs import PairSet
from .shift import Sweep

AnyInputs = MetricInputs | StudyInputs | PairInputs | StepInputs


@dataclass
class ReadOnUse:
    """A metric's inputs, built the first time a metric is computed on them, and what they
    are a function of (digested in their place): the values in memory, among them the ids of
    the responses, and each RM's stored scores of those by the RM's key (one score per response
    and RM), whose stored digests an edited score deletes (``schema.M014``)."""

    made_of: object
    build: Callable[[], AnyInputs]
    built: AnyInputs | None = None

    def inputs(self) -> AnyInputs:
        if self.built is None:
            self.built = self.build()
        return self.built


class StoredScores:
    """The RMs' stored scores of the responses metrics read (``labels``: RM label → key),
    read on first use."""

    def __init__(
        self,
        ctx: RunContext,
        labels: dict[str, str],
        ids: list[str],
        prompt_ids: tuple[str, ...],
        order: dict[str, list[str]],
    ) -> None:
        self.ctx, self.labels, self.ids = ctx, labels, ids
        self.prompt_ids, self.order = prompt_ids, order
        self._by_id: dict[str, dict[str, float]] = {}
        self._by_prompt: dict[str, tuple[np.ndarray, ...]] = {}

    def by_id(self, label: str) -> dict[str, float]:
        """The RM's scores by response id."""
        if label not in self._by_id:
            self._by_id[label] = self.ctx.db.items.scores(self.labels[label], self.ids)
        return self._by_id[label]

    def by_prompt(self) -> dict[str, tuple[np.ndarray, ...]]:
        """Every RM's benchmark scores, per prompt in benchmark order."""
        return {label: self.of_prompts(label) for label in self.labels}

    def of_prompts(self, label: str) -> tuple[np.ndarray, ...]:
        """The RM's benchmark scores, per prompt in benchmark order."""
        if label not in self._by_prompt:
            found = self.by_id(label)
            self._by_prompt[label] = tuple(
                np.array([found[rid] for rid in self.order[pid]], float) for pid in self.prompt_ids
            )
        return self._by_prompt[label]


def rm_inputs(
    scores: StoredScores, label: str, arrays: BenchmarkArrays
) -> ReadOnUse | MetricInputs:
    """One RM's benchmark inputs; under a label design read now, with the other RMs' scores
    that narrow its intervals (its notes read them all)."""
    if arrays.design is None:
        return ReadOnUse(
            arrays, lambda: MetricInputs(arrays.prompt_ids, arrays.oracle, scores.of_prompts(label))
        )
    every = scores.by_prompt()
    others = tuple(v for other, v in every.items() if other != label)
    return MetricInputs(
        arrays.prompt_ids, arrays.oracle, every[label], replace(arrays.design, auxiliary=others)
    )


def scored_ids(
    order: dict[str, list[str]], pair_set: PairSet | None, shifted: Sweep | None
) -> list[str]:
    """Every response whose score a metric of the run reads: the benchmark's, the pairs' and
    their shifted copies'."""
    ids = [rid for rids in order.values() for rid in rids]
    if pair_set is not None:
        ids += pair_set.response_ids().known
    for by_level in (shifted or {}).values():
        ids += [
            i for level in by_level.values() for s in level for i in (s.chosen_id, s.rejected_id)
        ]
    return ids


def benchmark_arrays(ctx: RunContext, benchmark: Benchmark | None) -> BenchmarkArrays:
    """The benchmark's prompt ids, each prompt's response ids in order, their oracle scores
    (NaN where a label design left them unlabelled) and the design (None: all labelled)."""
    if benchmark is None:
        return BenchmarkArrays((), {}, (), None)
    if benchmark.design is not None:
        return budgeted_inputs(ctx, benchmark)
    oracle = oracle_by_prompt(ctx, benchmark)
    prompt_ids = tuple(oracle)
    return BenchmarkArrays(
        prompt_ids,
        {pid: list(oracle[pid]) for pid in prompt_ids},
        tuple(np.fromiter(oracle[pid].values(), float) for pid in prompt_ids),
        None,
    )


def pair_inputs(pair_set: PairSet, shifted: Sweep | None, scores: dict[str, float]) -> PairInputs:
    """One RM's logits of the pairs, and of their shifted copies at every level."""

    def logits(ids: Iterable[str]) -> np.ndarray:
        return np.fromiter((scores[i] for i in ids), float)

    chosen = logits(p.chosen.id for p in pair_set.pairs)
    rejected = logits(p.rejected.id for p in pair_set.pairs)
    sweep = {
        target: {
            0.0: (chosen, rejected),
            **{
                level: (
                    logits(s.chosen_id for s in level_pairs),
                    logits(s.rejected_id for s in level_pairs),
                )
                for level, level_pairs in by_level.items()
            },
        }
        for target, by_level in (shifted or {}).items()
    }
    return pair_set.inputs(chosen, rejected, sweep)
