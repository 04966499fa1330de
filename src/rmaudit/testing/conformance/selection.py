"""Conformance checks of what selects the benchmark's prompts: prompt samplers and embedders
(the contracts are listed in :mod:`rmaudit.testing.conformance`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rmaudit.components import Embedder, Prompt, PromptSampler
from rmaudit.errors import BadInput
from rmaudit.testing.samples import sample_prompts

from ._common import Checks, ConformanceError, describe, instance, short, valid_or_refused
from .items import run_checks


@dataclass(frozen=True)
class SelectionSubject:
    """What a sampler's or an embedder's checks share: the component, the pool of prompts it
    is checked on, their embeddings (a sampler's, where it needs them) and how close two
    embeddings must be."""

    component: Any
    prompts: tuple[Prompt, ...]
    embeddings: np.ndarray | None = None
    rtol: float = 1e-6
    atol: float = 1e-9

    def sample(self, sampler: PromptSampler | None = None, size: int | None = None) -> list[int]:
        """The indices the sampler draws from the first ``size`` prompts of the pool."""
        size = len(self.prompts) if size is None else size
        vectors = None if self.embeddings is None else self.embeddings[:size]
        return list((sampler or self.component).sample(self.prompts[:size], vectors))


def _indices(subject: SelectionSubject) -> None:
    """Distinct indices into the pool, as many as ``planned_size`` says (what a plan counts)."""
    chosen, planned = subject.sample(), subject.component.planned_size(len(subject.prompts))
    if len(set(chosen)) != len(chosen) or not all(
        isinstance(i, int | np.integer) and 0 <= i < len(subject.prompts) for i in chosen
    ):
        raise ConformanceError(
            f"{describe(subject.component)}: sample should give distinct indices into the "
            f"pool of {len(subject.prompts)}, got {chosen!r}"
        )
    if len(chosen) != planned:
        raise ConformanceError(
            f"{describe(subject.component)}: sample chose {len(chosen)} prompts, but "
            f"planned_size said {planned}"
        )


def _sampler_determinism(subject: SelectionSubject) -> None:
    fresh = type(subject.component)(subject.component.options)
    if subject.sample(fresh) != subject.sample():
        raise ConformanceError(
            f"{describe(subject.component)}: determinism: a fresh instance with the same options "
            "chose other prompts"
        )


def _pool_check(subject: SelectionSubject) -> None:
    """Every pool ``check_pool`` accepts (in the plan, before anything is written), ``sample``
    draws from; the others it refuses with ``BadInput``."""
    label, dims = describe(subject.component), None
    if subject.embeddings is not None:
        dims = subject.embeddings.shape[1]
    for size in range(1, len(subject.prompts) + 1):
        try:
            subject.component.check_pool(size, dims)
        except BadInput:
            continue
        try:
            subject.sample(size=size)
        except BadInput as error:
            raise ConformanceError(
                f"{label}: check_pool accepted a pool of {size} prompts that sample then "
                f"refused ({error.one_line()}): the run would fail after its plan"
            ) from None


SAMPLER_CHECKS: Checks = {
    "indices": _indices,
    "determinism": _sampler_determinism,
    "pool_check": _pool_check,
}


def _embedded(subject: SelectionSubject, embedder: Embedder | None = None) -> np.ndarray:
    texts = [p.text for p in subject.prompts]
    return np.asarray((embedder or subject.component).embed(texts), dtype=float)


def _shape(subject: SelectionSubject) -> None:
    """One finite row per text, no wider than ``max_dims`` says (what the plan checks a
    k-DPP's k against)."""
    vectors, label = _embedded(subject), describe(subject.component)
    if vectors.ndim != 2 or len(vectors) != len(subject.prompts) or not np.isfinite(vectors).all():
        raise ConformanceError(
            f"{label}: embed should give one finite row per text ({len(subject.prompts)}), got "
            f"{short(vectors)}"
        )
    most = subject.component.max_dims(len(subject.prompts))
    if most is not None and vectors.shape[1] > most:
        raise ConformanceError(
            f"{label}: embed gave {vectors.shape[1]} columns, max_dims said at most {most}"
        )


def _embedder_determinism(subject: SelectionSubject) -> None:
    fresh = type(subject.component)(subject.component.options)
    first, again = _embedded(subject), _embedded(subject, fresh)
    if first.shape != again.shape or not np.allclose(
        first, again, rtol=subject.rtol, atol=subject.atol
    ):
        raise ConformanceError(
            f"{describe(subject.component)}: determinism: a fresh instance with the same options "
            f"embedded the texts otherwise: {short(first)} vs {short(again)}"
        )


def _empty_embedding(subject: SelectionSubject) -> None:
    texts = ["", *(p.text for p in subject.prompts)]
    valid_or_refused(
        describe(subject.component), "an empty text", lambda: subject.component.embed(texts)
    )


EMBEDDER_CHECKS: Checks = {
    "shape": _shape,
    "determinism": _embedder_determinism,
    "empty_text": _empty_embedding,
}


def check_prompt_sampler(
    sampler: PromptSampler | type[PromptSampler],
    prompts: Sequence[Prompt] | None = None,
    *,
    seed: int = 0,
    only: str | None = None,
) -> None:
    """The sampler on ``prompts`` (default :func:`sample_prompts`), with seeded embeddings of
    as many dimensions as prompts where it needs them: distinct indices as planned, the same
    from a fresh instance, and every pool ``check_pool`` accepts one ``sample`` draws from."""
    component, pool = instance(sampler), tuple(prompts or sample_prompts())
    vectors = np.random.default_rng(seed).normal(size=(len(pool), len(pool)))
    subject = SelectionSubject(component, pool, vectors if component.needs_embeddings else None)
    run_checks(component, subject, SAMPLER_CHECKS, only)


def check_embedder(
    embedder: Embedder | type[Embedder],
    prompts: Sequence[Prompt] | None = None,
    *,
    rtol: float = 1e-6,
    atol: float = 1e-9,
    only: str | None = None,
) -> None:
    """The embedder on ``prompts``' texts (default :func:`sample_prompts`): one finite row per
    text within ``max_dims``, the same from a fresh instance, an empty text valid or refused."""
    subject = SelectionSubject(
        instance(embedder), tuple(prompts or sample_prompts()), None, rtol, atol
    )
    run_checks(subject.component, subject, EMBEDDER_CHECKS, only)
