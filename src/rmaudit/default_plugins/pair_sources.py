"""Built-in preference-pair sources: pair files (generic, Anthropic HH, RM-Bench, LLMBar),
several of them as one pair set, and pairs derived from the recipe's benchmark (TestGenPair
and oracle rank bins).

A pair source is a prompt source (docs/architecture.md's plugin-kinds table lists pair sources
among them), so these register through ``register_prompt_sources``.  File sources parse
their file when built — before the runner opens the database — so with
``on_bad_record = "fail"`` (the default) a bad record stops the run with exit code 2 and
nothing written; with ``"reject"`` it is skipped, counted and stored in ``failures``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import combinations
from typing import Annotated, Any, Literal, TypeVar

import numpy as np
from pydantic import Field, field_validator

from rmaudit import hookimpl
from rmaudit.benchmark.pairs import (
    parse_hh,
    parse_judgebench,
    parse_llmbar,
    parse_pairs,
    parse_rm_bench,
)
from rmaudit.benchmark.pairs.rewardbench2 import RB2Row, read_rewardbench2
from rmaudit.components import (
    BenchmarkData,
    ComponentOptions,
    PairLoad,
    PairSource,
    RejectedRecord,
    Source,
    SourcedPair,
)
from rmaudit.components.keys import content_key
from rmaudit.components.options import DataFile, Nested, NestedComponent, file_source
from rmaudit.errors import BadInput
from rmaudit.metrics.rewardbench2 import is_ties


class PairFileOptions(ComponentOptions):
    path: DataFile
    on_bad_record: Literal["fail", "reject"] = Field(
        "fail",
        description="fail: stop at the first bad record (exit 2); reject: skip it, "
        "count it and store it in the failures table",
    )


_PairFileOptionsT = TypeVar("_PairFileOptionsT", bound=PairFileOptions)


class _PairFile(PairSource[_PairFileOptionsT]):
    """A pair source that parses one file with a parser of :mod:`rmaudit.benchmark.pairs`."""

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.parsed = self.parse(strict=self.options.on_bad_record == "fail")

    def parse(self, *, strict: bool) -> PairLoad:
        raise NotImplementedError

    def sources(self) -> tuple[Source, ...]:
        """The pair file, for the run's provenance."""
        return (file_source("pairs", self.options.path),)

    def load_pairs(self, benchmark: BenchmarkData | None) -> PairLoad:
        return self.load_kept(None)

    def load_kept(self, kept: Callable[[int], list[int] | None] | None) -> PairLoad:
        """The pairs at the positions ``kept`` gives for the file's number of pairs (None:
        every pair), keyed: a sample keys only the pairs it keeps."""
        parsed = self.parsed.pairs
        positions = kept(len(parsed)) if kept is not None else None
        pairs = list(parsed) if positions is None else [parsed[i] for i in positions]
        return PairLoad(pairs, self.parsed.rejected, self.parsed.records)


class PairsFileOptions(PairFileOptions):
    prompt: str = Field("prompt", description="field holding the prompt")
    chosen: str = Field("chosen", description="field holding the preferred response")
    rejected: str = Field("rejected", description="field holding the dispreferred response")
    subset: str | None = Field(None, description="field holding the subset label (then required)")


class PairsFile(_PairFile[PairsFileOptions]):
    """Preference pairs from a JSON Lines, JSON or CSV file, one pair per record, with a field
    mapping."""

    name = "pairs-file"
    Options = PairsFileOptions

    def parse(self, *, strict: bool) -> PairLoad:
        o = self.options
        return parse_pairs(
            o.path,
            prompt=o.prompt,
            chosen=o.chosen,
            rejected=o.rejected,
            subset=o.subset,
            strict=strict,
        )


class LabelledFileOptions(PairFileOptions):
    subset: str | None = Field(None, description="subset label for every pair of the file")


class HHPairs(_PairFile[LabelledFileOptions]):
    """Anthropic HH-RLHF dialogues: the prompt is the shared context, the responses the final
    assistant turns."""

    name = "hh-pairs"
    Options = LabelledFileOptions

    def parse(self, *, strict: bool) -> PairLoad:
        return parse_hh(self.options.path, subset=self.options.subset, strict=strict)


class RMBenchPairs(_PairFile[PairFileOptions]):
    """RM-Bench: each prompt's 3 chosen × 3 rejected style variants (concise, detailed,
    markdown)."""

    name = "rm-bench"
    Options = PairFileOptions

    def parse(self, *, strict: bool) -> PairLoad:
        return parse_rm_bench(self.options.path, strict=strict)


class LLMBarPairs(_PairFile[LabelledFileOptions]):
    """LLMBar records (input, output_1, output_2, label): label 1 or 2 names the better output."""

    name = "llmbar"
    Options = LabelledFileOptions

    def parse(self, *, strict: bool) -> PairLoad:
        return parse_llmbar(self.options.path, subset=self.options.subset, strict=strict)


class JudgeBenchPairs(_PairFile[PairFileOptions]):
    """JudgeBench records (question, response_A, response_B, label "A>B" or "B>A"), each pair
    in its category's subset: Knowledge, Reasoning, Math, Coding."""

    name = "judgebench"
    Options = PairFileOptions

    def parse(self, *, strict: bool) -> PairLoad:
        return parse_judgebench(self.options.path, strict=strict)


class RewardBench2PairsOptions(PairFileOptions):
    seed: int = Field(0, ge=0, description="orders each row's pairs, and so its completions")


class RewardBench2Pairs(_PairFile[RewardBench2PairsOptions]):
    """RewardBench 2 rows: each row's correct × incorrect completions as pairs, the row in their
    meta (for the rewardbench-2 metric); a sample draws whole rows (Ties: whole questions)."""

    name = "rewardbench-2"
    Options = RewardBench2PairsOptions

    def __init__(self, options=None) -> None:
        # not _PairFile's: the file is read into rows, not pairs (each completion keyed by its
        # place where the file holds its text twice: benchmark.pairs.rewardbench2)
        super(_PairFile, self).__init__(options)
        strict = self.options.on_bad_record == "fail"
        self.data = read_rewardbench2(self.options.path, strict=strict)

    def load_kept(self, kept: Callable[[int], list[int] | None] | None) -> PairLoad:
        """The pairs of the rows at the positions ``kept`` gives for the file's rows, a Ties
        question's ref and tied rows counting as one (the Ties score needs both)."""
        units: dict[str, list[RB2Row]] = {}
        for row in self.data.rows:
            unit = "question " + row.id.partition(":")[2] if is_ties(row.subset) else str(row.line)
            units.setdefault(unit, []).append(row)
        groups = list(units.values())
        positions = kept(len(groups)) if kept is not None else None
        chosen = groups if positions is None else [groups[k] for k in positions]
        pairs = self.data.pairs([row for group in chosen for row in group], self.options.seed)
        return PairLoad(pairs, list(self.data.rejected), self.data.records)


class BenchmarkPairsOptions(ComponentOptions):
    mode: Literal["ordered", "rank-bins"] = Field(
        "ordered",
        description="ordered: every within-prompt pair the oracle orders "
        "(TestGenPair); rank-bins: one pair per pair of oracle rank bins",
    )
    bins: int = Field(4, ge=2, description="rank-bins: oracle rank bins per prompt (bin 1 = best)")
    seed: int = Field(0, ge=0, description="rank-bins: seeds the pick within each bin")


class BenchmarkPairs(PairSource[BenchmarkPairsOptions]):
    """Pairs from the recipe's benchmark, ordered by the oracle: all of them, or across rank
    bins."""

    name = "benchmark-pairs"
    Options = BenchmarkPairsOptions
    needs_benchmark = True

    def planned_size(self, prompts: int, per_prompt: int) -> int:
        """Every ordered pair of a prompt's responses, or one per pair of rank bins: fewer
        where the oracle ties."""
        if self.options.mode == "ordered":
            return prompts * (per_prompt * (per_prompt - 1) // 2)
        return prompts * (self.options.bins * (self.options.bins - 1) // 2)

    def load_pairs(self, benchmark: BenchmarkData | None) -> PairLoad:
        if benchmark is None:
            raise BadInput(
                "needs a benchmark ([prompts], [responses] and [oracle], or [benchmark])"
            )
        pairs: list[SourcedPair] = []
        rejected: list[RejectedRecord] = []
        for prompt, responses, oracle in zip(
            benchmark.prompts, benchmark.responses, benchmark.oracle, strict=True
        ):
            if self.options.mode == "ordered":
                pairs += self._ordered(prompt, responses, oracle)
            else:
                found, ties = self._rank_bins(prompt, responses, oracle)
                pairs += found
                rejected += ties
        return PairLoad(pairs, rejected, len(pairs) + len(rejected))

    @staticmethod
    def _ordered(prompt, responses, oracle) -> list[SourcedPair]:
        """TestGenPair (RETA paper, arXiv 2504.14838, App. A.1): every pair the oracle orders,
        better one chosen."""
        return [
            SourcedPair(
                prompt,
                responses[a],
                responses[b],
                None,
                {"oracle_gap": float(oracle[a] - oracle[b])},
            )
            for i, j in combinations(range(len(responses)), 2)
            for a, b in ((i, j), (j, i))
            if oracle[a] > oracle[b]
        ]

    def _rank_bins(
        self, prompt, responses, oracle
    ) -> tuple[list[SourcedPair], list[RejectedRecord]]:
        """Rethinking RM Evaluation (arXiv 2410.05584), Fig. 4: sort by oracle score, split into
        bins, draw the chosen response from bin i and the rejected one from a worse bin j, for every
        i < j; the subset names the
        bins, so per-subset accuracy is the figure's grid."""
        bins = self.options.bins
        if len(responses) < bins:
            raise BadInput(
                f"more bins than the {len(responses)} responses of prompt {prompt.id}",
                field="bins",
                value=bins,
            )
        best_first = np.argsort(-oracle, kind="stable")
        members = np.array_split(best_first, bins)
        # Seeded per prompt, so a prompt's pairs do not depend on which prompts precede it.
        rng = np.random.default_rng(
            [self.options.seed, int(content_key("rank-bins", prompt.id), 16)]
        )
        pairs, ties = [], []
        for i, j in combinations(range(bins), 2):
            a, b = int(rng.choice(members[i])), int(rng.choice(members[j]))
            subset = f"bin {i + 1} > bin {j + 1}"
            if oracle[a] > oracle[b]:
                pairs.append(
                    SourcedPair(
                        prompt,
                        responses[a],
                        responses[b],
                        subset,
                        {"oracle_gap": float(oracle[a] - oracle[b])},
                    )
                )
            else:  # equal oracle scores across bins: no preference to audit
                ties.append(RejectedRecord(f"prompt {prompt.id}", "oracle tie", "subset", subset))
        return pairs, ties


NestedPairSource = Annotated[NestedComponent, Nested("prompt_source")]


class CombinedPairsOptions(ComponentOptions):
    sources: list[NestedPairSource] = Field(
        min_length=1,
        description="pair source tables (each with its own file and subset), read in this order",
    )
    sample: int | None = Field(
        None, ge=1, description="pairs drawn from each source, seeded (default: every pair)"
    )
    seed: int = Field(0, ge=0, description="seeds the sample")
    data: str = Field(
        "",
        description="where the data came from (a suite's pinned source and "
        "version), kept with the run",
    )

    @field_validator("sources")
    @classmethod
    def _file_sources(cls, sources: list[NestedComponent]) -> list[NestedComponent]:
        for source in sources:
            if not issubclass(source.cls, PairSource) or source.cls.needs_benchmark:
                raise ValueError(f"not a pair source that reads its own data: {source.name!r}")
        return sources


class CombinedPairs(PairSource[CombinedPairsOptions]):
    """Several pair sources as one pair set (each file its own subsets), optionally sampled."""

    name = "combined-pairs"
    Options = CombinedPairsOptions

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.parts = [source.build() for source in self.options.sources]

    def load_pairs(self, benchmark: BenchmarkData | None) -> PairLoad:
        pairs: list[SourcedPair] = []
        rejected: list[RejectedRecord] = []
        records = 0
        for index, source in enumerate(self.parts):
            # a file source as built in (not a subclass's own load_pairs) keys only its sample
            if isinstance(source, _PairFile) and type(source).load_pairs is _PairFile.load_pairs:
                loaded = source.load_kept(partial(self._kept, index=index))
                pairs += loaded.pairs
            else:
                loaded = source.load_pairs(None)
                kept = self._kept(len(loaded.pairs), index)
                pairs += loaded.pairs if kept is None else [loaded.pairs[i] for i in kept]
            rejected += loaded.rejected
            records += loaded.records
        return PairLoad(pairs, rejected, records)

    def sources(self) -> tuple[Source, ...]:
        return tuple(source for part in self.parts for source in part.sources())

    def _kept(self, size: int, index: int) -> list[int] | None:
        """The positions of ``sample`` of a source's ``size`` pairs, in file order (None: all);
        seeded by the source's position, so each source's draw does not depend on the
        others' sizes."""
        k = self.options.sample
        if k is None or k >= size:
            return None
        rng = np.random.default_rng([self.options.seed, index])
        return [int(i) for i in sorted(rng.choice(size, size=k, replace=False))]


@hookimpl
def register_prompt_sources(register: Any) -> None:
    for cls in (
        PairsFile,
        HHPairs,
        RMBenchPairs,
        LLMBarPairs,
        JudgeBenchPairs,
        RewardBench2Pairs,
        BenchmarkPairs,
        CombinedPairs,
    ):
        register(cls)
