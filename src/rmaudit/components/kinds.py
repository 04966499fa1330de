"""The base class of every plugin kind but metrics, and what they share (:class:`Component`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any, ClassVar, Generic, TypeVar, cast

import numpy as np
from pydantic import BaseModel, ConfigDict

from rmaudit.errors import BadInput
from rmaudit.store.verdicts import PairVerdict

from .judging import PairShown
from .keys import content_key, prompt_id, text_response_id
from .options import component_identity
from .records import (
    BenchmarkContent,
    BenchmarkData,
    Generation,
    OracleLabel,
    PairLoad,
    Prompt,
    Response,
    Source,
    SourcedPair,
)


class NoOptions(BaseModel):
    """Options model of a component that takes none."""

    model_config = ConfigDict(extra="forbid")


class ComponentOptions(BaseModel):
    """Base for option models: unknown options are errors, not silently ignored.  Each
    model's validator is built when first used, not when its plugin is imported: a run
    validates the options of its recipe's components only."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


#: A component's options model: ``class Mine(RewardModel[MineOptions])`` types ``self.options``.
OptionsT = TypeVar("OptionsT", bound=BaseModel)


class Component(Generic[OptionsT]):
    kind: ClassVar[str] = ""
    name: ClassVar[str] = ""
    #: Bump when a change of code changes outputs, so stored results are not reused.
    version: ClassVar[int] = 1
    #: True for the offline simulated world; every output that uses one says so.  Not a
    #: ClassVar: an instance may set it (an ensemble whose members are simulated).
    simulated: bool = False
    #: Installed distributions whose bundled data decides the outputs (e.g. wordfreq's word
    #: lists): their versions are part of the identity.
    data_packages: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type[BaseModel]] = NoOptions

    def __init__(self, options: OptionsT | None = None) -> None:
        # ``Options`` is the class that ``OptionsT`` names (a ClassVar cannot hold a TypeVar)
        self.options: OptionsT = options if options is not None else cast(OptionsT, self.Options())

    @classmethod
    def summary(cls) -> str:
        """The class docstring's first paragraph on one line (a first sentence that wraps
        is not cut at the line's end)."""
        first = (cls.__doc__ or "").strip().split("\n\n", 1)[0]
        return " ".join(first.split())

    def identity(self) -> dict[str, Any]:
        """Kind, name, version and options, as the option fields declare them
        (:mod:`rmaudit.components.options`: operational options left out, hashed files, nested
        components)."""
        return component_identity(type(self), self.options)

    def preferred_batch_items(self) -> int | None:
        """How many items a stage should hand each call of ``generate``, ``label`` or
        ``score``; None (the default): the recipe's ``batch_size``.  Larger calls let a
        component overlap its own preparation (tokenising) with its compute across more
        items — a GPU model wants thousands; smaller ones commit work more often, so a killed
        run loses less.  Asked only when the stage has work, so it may look at the device."""
        return None

    def check_ready(self) -> None:
        """Raise ``BadInput`` for what would fail once the component is used (a model id the
        hub does not have), in the plan before a run writes anything.  Asked only when the
        component's stage has work, and not by ``--dry-run``, which stays offline."""

    @cached_property
    def key(self) -> str:
        """Content key of this component: same identity, same key, across runs.  Computed
        once per instance: the identity may hash data files or read package metadata."""
        return content_key(self.identity())


class PromptSource(Component[OptionsT]):
    """Where candidate prompts come from."""

    kind = "prompt_source"

    def load(self) -> list[tuple[str, dict[str, Any]]]:
        """Return (text, meta) pairs; the host derives prompt ids from the texts."""
        raise NotImplementedError


class PairSource(PromptSource[OptionsT]):
    """A preference-pair dataset: (prompt, chosen, rejected) triples, optionally by subset.

    Preference-pair datasets are prompt sources (docs/architecture.md, "Plugin kinds"), so a
    pair source is one (registered through ``register_prompt_sources``): in
    ``[prompts.source]`` it gives the distinct prompts of its pairs, in ``[pairs.source]`` the
    pairs themselves.  A source with ``needs_benchmark = True`` derives its pairs from the
    recipe's benchmark and has no prompts of its own.
    """

    needs_benchmark: ClassVar[bool] = False

    def load_pairs(self, benchmark: BenchmarkData | None) -> PairLoad:
        """The pairs; ``benchmark`` is the recipe's benchmark for sources that need one."""
        raise NotImplementedError

    def planned_size(self, prompts: int, per_prompt: int) -> int | None:
        """For a source that needs the benchmark: at most how many pairs it derives from one
        of ``prompts`` × ``per_prompt`` responses, so a plan can count them (and their shift
        sweep and scores) before the benchmark is built; None when it cannot tell."""
        return None

    def load(self) -> list[tuple[str, dict[str, Any]]]:
        if self.needs_benchmark:
            raise BadInput(
                f"{self.name!r} derives pairs from a benchmark; it has no prompts "
                f"of its own (use it under [pairs.source])"
            )
        prompts: dict[str, dict[str, Any]] = {}  # text → meta of its first pair, in file order
        for pair in self.load_pairs(None).pairs:
            prompts.setdefault(pair.prompt.text, {"subset": pair.subset} if pair.subset else {})
        return list(prompts.items())

    @staticmethod
    def text_pair(
        prompt: str,
        chosen: str,
        rejected: str,
        subset: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> SourcedPair:
        """A pair of texts with content-addressed ids: the prompt by its text, each response
        by its prompt and its text (the same text under the same prompt is one response,
        scored once, whichever file or line it came from)."""
        pid = prompt_id(prompt)
        return SourcedPair(
            Prompt(pid, prompt),
            Response(text_response_id(pid, chosen), pid, None, chosen),
            Response(text_response_id(pid, rejected), pid, None, rejected),
            subset,
            dict(meta or {}),
        )


class Embedder(Component[OptionsT]):
    """Turns prompt texts into vectors for diversity-aware sampling."""

    kind = "embedder"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), d)."""
        raise NotImplementedError

    def embed_prompts(self, prompts: Sequence[Prompt]) -> np.ndarray:
        """Embed prompts; multi-turn prompt sets are embedded turn by turn, concatenated.

        When every prompt has ``meta["turns"]`` (its user turns, as MT-bench prompt sets
        have) with the same number of turns, row q is [embed(turn 1 of q), embed(turn 2 of
        q), ...], as the RETA paper does for k-DPP on MT-bench (App. A.2).  Otherwise the
        prompt texts are embedded.
        """
        if turns := _shared_turns(prompts):
            return np.hstack(
                [np.asarray(self.embed([t[i] for t in turns])) for i in range(len(turns[0]))]
            )
        return self.embed([p.text for p in prompts])

    def estimate_cost(self, texts: Sequence[str]) -> float | None:
        """Estimated USD to embed ``texts`` (for ``--dry-run``); None when free or unknown."""
        return None

    def max_dims(self, count: int) -> int | None:
        """The most columns ``embed`` returns for ``count`` texts, when known without
        embedding them (the plan before a run checks the sampler against it); None if not."""
        return None

    def max_prompt_dims(self, prompts: Sequence[Prompt]) -> int | None:
        """The most columns ``embed_prompts`` returns for ``prompts``, from ``max_dims``."""
        dims = self.max_dims(len(prompts))
        turns = _shared_turns(prompts)
        return dims if dims is None or not turns else dims * len(turns[0])


def _shared_turns(prompts: Sequence[Prompt]) -> list[list[str]] | None:
    """Every prompt's user turns when all have the same number (more than one), else None."""
    turns: list[Any] = [p.meta.get("turns") for p in prompts]
    if prompts and all(isinstance(t, list) and len(t) == len(turns[0]) > 1 for t in turns):
        return turns
    return None


class PromptSampler(Component[OptionsT]):
    """Chooses which prompts of the pool enter the benchmark."""

    kind = "prompt_sampler"
    needs_embeddings: ClassVar[bool] = False

    def sample(self, prompts: Sequence[Prompt], embeddings: np.ndarray | None) -> list[int]:
        """Return the indices (into ``prompts``) of the chosen prompts."""
        raise NotImplementedError

    def planned_size(self, pool_size: int) -> int:
        """How many prompts ``sample`` will keep from a pool of ``pool_size`` (for plans)."""
        k = getattr(self.options, "k", None)
        return pool_size if k is None else min(k, pool_size)

    def check_pool(self, pool_size: int, dims: int | None = None) -> None:
        """Refuse a pool ``sample`` cannot draw from (``k`` larger than it), in the plan that
        precedes every run: before anything is stored.  ``dims``: the most columns the
        recipe's embedder gives for the pool, when the sampler needs embeddings and the
        embedder knows (:meth:`Embedder.max_prompt_dims`)."""
        k = getattr(self.options, "k", None)
        if k is not None and k > pool_size:
            raise BadInput(f"k larger than the pool of {pool_size} prompts", field="k", value=k)


class ReferencePolicy(Component[OptionsT]):
    """Writes the candidate responses the oracle labels and the RMs score."""

    kind = "reference_policy"

    def generate(self, batch: Sequence[tuple[Prompt, int]]) -> list[Generation]:
        """One generation per (prompt, sample index)."""
        raise NotImplementedError


class Oracle(Component[OptionsT]):
    """The trusted judge whose scores are the ground truth of the benchmark."""

    kind = "oracle"

    def calls_per_label(self) -> int:
        """How many requests one label costs (for ``--dry-run`` plans)."""
        return 1

    def estimate_cost(self, prompts: Sequence[Prompt], labels: int) -> float | None:
        """Estimated USD for ``labels`` labels of responses to prompts like ``prompts`` (a
        sample that sets the average length), for ``--dry-run``; None when free or unknown."""
        return None

    def label(self, batch: Sequence[tuple[Prompt, Response]]) -> list[OracleLabel]:
        raise NotImplementedError

    def check_prompts(self, prompts: Sequence[Prompt]) -> None:
        """Raise ``BadInput`` for a prompt the oracle cannot judge (one without the reference
        answer its template shows), in the plan before a run writes anything; asked only
        when the labels stage has work."""

    def sources(self) -> tuple[Source, ...]:
        """Where the labels come from (a labels file, a judge model), for the run's provenance."""
        return ()


class BenchmarkSource(Component[OptionsT]):
    """A labelled benchmark assembled from files made elsewhere (``[benchmark] name = ...``):
    prompts, their responses and the oracle's scores, with no policy or oracle to run."""

    kind = "benchmark_source"

    def load(self) -> BenchmarkContent:
        raise NotImplementedError


class RewardModel(Component[OptionsT]):
    """The model under audit: one real-valued score per (prompt, response)."""

    kind = "reward_model"

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        raise NotImplementedError

    def judges_pairs(self) -> bool:
        """True for a pairwise judge: the run hands it preference pairs, each in both orders,
        through :meth:`judge_pairs` instead of responses through :meth:`score`."""
        return False

    def judge_pairs(self, batch: Sequence[PairShown]) -> list[PairVerdict]:
        """One verdict per pair as shown (docs/judges.md); only when :meth:`judges_pairs`."""
        raise NotImplementedError

    def check_pairs(self, shown: Sequence[PairShown]) -> None:
        """Raise ``BadInput`` for what ``judge_pairs`` could not judge (verdicts recorded
        elsewhere that miss a pair), given every pair of the run in both orders, in the plan
        before a run writes anything (shifted copies aside); asked only when the stage has
        work."""
        return None

    def check_items(self, items: Sequence[tuple[Prompt, Response]]) -> None:
        """Raise ``BadInput`` for items ``score`` would refuse without any work (a scores file
        without their rows), in the plan before a run writes anything; asked only when the
        stage has work, with the items the plan knows (not shifted copies still to be made)."""

    def check_response_ids(self, ids: Sequence[str]) -> None:
        """Raise ``BadInput`` for responses ``score`` would refuse knowing their ids alone (a
        scores file keyed by rmaudit's response ids without their rows): asked in the same
        plan when some responses the stage will score are not made yet — a policy's, whose ids
        the plan knows before their texts — with the ids of every response it will score."""

    def sources(self) -> tuple[Source, ...]:
        """Where the scores come from (a scores file, a model id and revision), for the run's
        provenance; empty for a component that computes them itself."""
        return ()

    def report(self) -> dict[str, Any]:
        """Facts about the scoring so far worth showing after a run (e.g. how many inputs
        were truncated), as label → value; empty when there is nothing to say."""
        return {}


class ShiftPerturber(Component[OptionsT]):
    """Moves text away from the training distribution (RMs Under Distribution Shift, arXiv
    2311.14743)."""

    kind = "shift_perturber"

    def perturb(self, text: str, *, seed: int) -> str:
        raise NotImplementedError

    def perturb_batch(self, texts: Sequence[str], *, seed: int) -> list[str]:
        """``perturb`` of each text; override to batch model calls or requests.  Each text's
        result must not depend on the other texts of the batch."""
        return [self.perturb(text, seed=seed) for text in texts]
