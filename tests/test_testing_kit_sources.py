"""The conformance kit's checks of sources, samplers and embedders catch each broken contract
and pass a conforming component; one check runs alone by its name.

Each broken component below breaks exactly one contract; the kit must name that contract.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rmaudit.components import (
    BenchmarkContent,
    BenchmarkSource,
    Embedder,
    LabelledSolution,
    PairLoad,
    PairSource,
    PromptSampler,
    PromptSource,
    Solution,
    SolutionSource,
)
from rmaudit.errors import BadInput
from rmaudit.testing import ConformanceError, check_component, check_names, run_check
from rmaudit.testing.conformance import kind_of

_count = itertools.count()


class _Prompts(PromptSource):
    """Three fixed prompts."""

    name = "three-prompts"

    def load(self):
        return [(f"prompt {i}", {"i": i}) for i in range(3)]


class _Drifting(_Prompts):
    """A new prompt each time it loads: a rerun would store another benchmark."""

    name = "drifting"

    def load(self):
        return [(f"prompt {next(_count)}", {})]


class _UnstorableMeta(_Prompts):
    """Metadata the store cannot write as JSON."""

    name = "unstorable-meta"

    def load(self):
        return [("prompt", {"tags": {"a", "b"}})]


class _Pairs(PairSource):
    """Two pairs of one prompt."""

    name = "two-pairs"

    def load_pairs(self, benchmark):
        return PairLoad(
            [self.text_pair("Q?", "right", "wrong"), self.text_pair("Q?", "good", "bad")],
            records=2,
        )


class _MisKeyed(_Pairs):
    """A pair whose prompt id is not its text's."""

    name = "mis-keyed"

    def load_pairs(self, benchmark):
        pair = self.text_pair("Q?", "right", "wrong")
        prompt = type(pair.prompt)("not-its-key", pair.prompt.text, {})
        return PairLoad([type(pair)(prompt, pair.chosen, pair.rejected)], records=1)


class _OtherPrompts(_Pairs):
    """Gives prompts its pairs do not have."""

    name = "other-prompts"

    def load(self):
        return [("another prompt", {})]


class _Solutions(SolutionSource):
    """One solution, its second step wrong."""

    name = "one-solution"

    def load_solutions(self):
        solution = Solution("1 + 1?", ("1 + 1 = 2", "so 3"))
        return [LabelledSolution("s1", solution, "math", erroneous=(1,), first_error=1)]


class _MarksAStepItLacks(_Solutions):
    name = "marks-a-step-it-lacks"

    def load_solutions(self):
        solution = Solution("1 + 1?", ("1 + 1 = 2",))
        return [LabelledSolution("s1", solution, "math", erroneous=(4,), first_error=4)]


class _UnstorableBenchmark(BenchmarkSource):
    """A record with one response (a benchmark file's prompt needs two)."""

    name = "unstorable-benchmark"

    def load(self):
        header = {"title": "t", "policy_key": "p", "oracle_key": "o"}
        response = {"text": "only", "sample_index": 0, "label": {"score": 1.0}}
        return BenchmarkContent(header, [{"prompt": {"text": "Q?"}, "responses": [response]}])


class _FirstTwo(PromptSampler):
    """The first two prompts; its pool check accepts one prompt it cannot draw two from."""

    name = "first-two"

    def planned_size(self, pool_size):
        return min(2, pool_size)

    def sample(self, prompts, embeddings):
        if len(prompts) < 2:
            raise BadInput("needs two prompts")
        return [0, 1]


class _Repeats(_FirstTwo):
    name = "repeats"

    def sample(self, prompts, embeddings):
        return [0, 0]


class _Length(Embedder):
    """Each text's length and word count."""

    name = "length-embedder"

    def embed(self, texts):
        return np.array([[len(t), len(t.split())] for t in texts], float)


class _Narrower(_Length):
    def max_dims(self, count):
        return 1


class _NaNs(_Length):
    name = "nans"

    def embed(self, texts):
        return np.full((len(texts), 2), np.nan)


class _EmptyCrash(_Length):
    name = "empty-crash"

    def embed(self, texts):
        return np.array([[1.0 / len(t)] for t in texts])


def test_conforming_sources_samplers_and_embedders_pass():
    for component in (_Prompts, _Pairs, _Solutions, _Length):
        check_component(component)


@pytest.mark.parametrize(
    ("component", "contract"),
    [
        (_Drifting, "determinism"),
        (_UnstorableMeta, "cannot write as JSON"),
        (_MisKeyed, "prompt id is not its text's"),
        (_OtherPrompts, "distinct prompts of its items"),
        (_MarksAStepItLacks, "marks a step it does not have"),
        (_UnstorableBenchmark, "would not be stored"),
        (_FirstTwo, "check_pool accepted a pool of 1"),
        (_Repeats, "distinct indices"),
        (_Narrower, "max_dims said at most 1"),
        (_NaNs, "one finite row per text"),
        (_EmptyCrash, "an empty text"),
    ],
)
def test_catches_broken_sources_samplers_and_embedders(component, contract):
    with pytest.raises(ConformanceError, match=contract):
        check_component(component)


def test_each_check_runs_alone_by_its_name():
    assert kind_of(_Pairs) == "pair_source" and kind_of(_Solutions) == "solution_source"
    assert check_names(_Pairs) == ("options", "identity", "determinism", "well_formed", "prompts")
    run_check(_Pairs, "well_formed")
    run_check(_OtherPrompts, "well_formed")  # its pairs are well formed: only prompts fails
    with pytest.raises(ConformanceError, match="distinct prompts"):
        run_check(_OtherPrompts, "prompts")
