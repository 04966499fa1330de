"""Built-in prompt samplers: all, random, stratified and k-DPP (RETA paper Sec. 3.3)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.benchmark.sampling import kdpp, random_indices, stratified_indices
from rmaudit.components import ComponentOptions, NoOptions, Prompt, PromptSampler
from rmaudit.errors import BadInput


class SampleSize(ComponentOptions):
    k: int = Field(gt=0, description="how many prompts to keep")
    seed: int = 0


def _check_k(k: int, pool: int) -> None:
    if k > pool:
        raise BadInput(f"k larger than the pool of {pool} prompts", field="k", value=k)


class AllPrompts(PromptSampler[NoOptions]):
    """Keep every prompt of the pool, in source order."""

    name = "all"

    def sample(self, prompts: Sequence[Prompt], embeddings: np.ndarray | None) -> list[int]:
        return list(range(len(prompts)))


class RandomPrompts(PromptSampler[SampleSize]):
    """k prompts uniformly at random without replacement."""

    name = "random"
    Options = SampleSize

    def sample(self, prompts: Sequence[Prompt], embeddings: np.ndarray | None) -> list[int]:
        _check_k(self.options.k, len(prompts))
        return [int(i) for i in random_indices(len(prompts), self.options.k, self.options.seed)]


class StratifiedOptions(SampleSize):
    field: str = Field("topic", description="prompt metadata field that defines the strata")


class StratifiedPrompts(PromptSampler[StratifiedOptions]):
    """k prompts allocated to strata (a metadata field) in proportion to their size."""

    name = "stratified"
    Options = StratifiedOptions

    def sample(self, prompts: Sequence[Prompt], embeddings: np.ndarray | None) -> list[int]:
        _check_k(self.options.k, len(prompts))
        groups = [str(p.meta.get(self.options.field, "")) for p in prompts]
        return [int(i) for i in stratified_indices(groups, self.options.k, self.options.seed)]


class KdppOptions(SampleSize):
    scale: float | None = Field(None, gt=0, description="λ in the kernel λEEᵀ (default: automatic)")


class KdppPrompts(PromptSampler[KdppOptions]):
    """k diverse, representative prompts drawn exactly from the k-DPP with kernel λEEᵀ."""

    name = "kdpp"
    Options = KdppOptions
    needs_embeddings = True

    def check_pool(self, pool_size: int, dims: int | None = None) -> None:
        super().check_pool(pool_size)
        if dims is not None:
            self._check_dims(dims)

    def sample(self, prompts: Sequence[Prompt], embeddings: np.ndarray | None) -> list[int]:
        _check_k(self.options.k, len(prompts))
        assert embeddings is not None, "needs_embeddings: the stage embeds the pool"
        self._check_dims(embeddings.shape[1])
        chosen = kdpp(embeddings, self.options.k, scale=self.options.scale, seed=self.options.seed)
        return [int(i) for i in chosen]

    def _check_dims(self, dims: int) -> None:
        if dims < self.options.k:
            raise BadInput(
                f"a k-DPP needs embeddings of at least k dimensions, the embedder gives "
                f"{dims}; raise prompts.embedder.dims or lower k",
                field="k",
                value=self.options.k,
            )


@hookimpl
def register_prompt_samplers(register):
    for cls in (AllPrompts, RandomPrompts, StratifiedPrompts, KdppPrompts):
        register(cls)
