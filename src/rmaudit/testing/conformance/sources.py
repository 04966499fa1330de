"""Conformance checks of the sources: prompt sources, pair sources, solution sources and
benchmark sources (the contracts are listed in :mod:`rmaudit.testing.conformance`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rmaudit.benchmark.header import check_header
from rmaudit.benchmark.portable_read import check_prompt_record
from rmaudit.components import (
    BenchmarkContent,
    BenchmarkData,
    BenchmarkSource,
    PairLoad,
    PairSource,
    PromptSource,
    SolutionSource,
)
from rmaudit.components.keys import prompt_id
from rmaudit.errors import BadInput
from rmaudit.testing.samples import sample_prompts, sample_responses

from ._common import Checks, ConformanceError, describe, instance
from .items import run_checks


@dataclass(frozen=True)
class SourceSubject:
    """What a source's checks share: the source, what it gives (``load``: read from an
    instance), and the problem with what was given, if any (``problem``: None when it is
    what the stages store)."""

    component: Any
    load: Callable[[Any], Any]
    problem: Callable[[Any], str | None]


def _determinism(subject: SourceSubject) -> None:
    component = subject.component
    if subject.load(component) != subject.load(type(component)(component.options)):
        raise ConformanceError(
            f"{describe(component)}: determinism: a fresh instance with the same options "
            "gave other items (a rerun would store another benchmark)"
        )


def _well_formed(subject: SourceSubject) -> None:
    problem = subject.problem(subject.load(subject.component))
    if problem is not None:
        raise ConformanceError(f"{describe(subject.component)}: {problem}")


def _its_prompts(subject: SourceSubject) -> None:
    """As a prompt source, a pair or solution source gives the distinct prompts of its
    items, in their order (what ``[prompts.source]`` draws from)."""
    component, loaded = subject.component, subject.load(subject.component)
    if getattr(component, "needs_benchmark", False):
        return
    texts = (
        [p.prompt.text for p in loaded.pairs]
        if isinstance(loaded, PairLoad)
        else [s.solution.question for s in loaded]
    )
    if [text for text, _ in component.load()] != list(dict.fromkeys(texts)):
        raise ConformanceError(
            f"{describe(component)}: load() should give the distinct prompts of its items, "
            "in their order"
        )


def _stored_meta(meta: Any) -> str | None:
    if not isinstance(meta, dict):
        return f"expected a dict of metadata, got {meta!r}"
    try:
        json.dumps(meta, sort_keys=True)  # as the store writes it
    except (TypeError, ValueError) as error:
        return f"metadata the store cannot write as JSON ({error}): {meta!r}"
    return None


def _prompt_problem(loaded: Any) -> str | None:
    if not isinstance(loaded, list) or not loaded:
        return f"load() should return a non-empty list of (text, meta), got {loaded!r}"
    for text, meta in loaded:
        if not isinstance(text, str) or not text:
            return f"load() gave a prompt that is not a non-empty text: {text!r}"
        if problem := _stored_meta(meta):
            return problem
    return None


def _pair_problem(loaded: Any) -> str | None:
    if not isinstance(loaded, PairLoad) or not loaded.pairs:
        return f"load_pairs should return a PairLoad with pairs, got {loaded!r}"
    if loaded.records < len(loaded.rejected):
        return f"load_pairs saw {loaded.records} records but rejected {len(loaded.rejected)}"
    for pair in loaded.pairs:
        prompt, answers = pair.prompt, (pair.chosen, pair.rejected)
        if prompt.id != prompt_id(prompt.text) or any(r.prompt_id != prompt.id for r in answers):
            return f"a pair's prompt id is not its text's, or not its responses': {pair!r}"
        if pair.chosen.id == pair.rejected.id:
            return f"a pair's chosen and rejected responses are one response: {pair!r}"
        if problem := _stored_meta(pair.meta) or _stored_meta(prompt.meta):
            return problem
    return None


def _solution_problem(loaded: Any) -> str | None:
    if not isinstance(loaded, list) or not loaded:
        return f"load_solutions should return a non-empty list, got {loaded!r}"
    for s in loaded:
        steps = s.solution.steps
        if not isinstance(steps, tuple) or not all(isinstance(t, str) for t in steps):
            return f"a solution's steps should be a tuple of texts, got {steps!r}"
        marked = sorted(s.erroneous)
        if any(not 0 <= i < len(steps) for i in marked) or not -1 <= s.first_error < len(steps):
            return f"solution {s.ref!r} marks a step it does not have: {s!r}"
        if marked and s.first_error != marked[0]:
            return f"solution {s.ref!r}: first_error {s.first_error} is not its first erroneous"
        if problem := _stored_meta(s.meta):
            return problem
    return None


def _benchmark_problem(loaded: Any) -> str | None:
    if not isinstance(loaded, BenchmarkContent) or not loaded.records:
        return f"load() should return a BenchmarkContent with records, got {loaded!r}"
    try:
        header = check_header(loaded.header, "the header")
        for position, record in enumerate(loaded.records):
            check_prompt_record(record, f"record {position}", budgeted="design" in header)
    except BadInput as error:
        return f"what it read would not be stored: {error.one_line()}"
    return None


def sample_benchmark_data() -> BenchmarkData:
    """The sample prompts and responses as a stored benchmark (for a pair source that needs
    one), each response's oracle score its length."""
    prompts = tuple(sample_prompts())
    responses = tuple(tuple(sample_responses([p])) for p in prompts)
    oracle = tuple(np.array([len(r.text) / 10 for r in rs]) for rs in responses)
    return BenchmarkData(prompts, responses, oracle)


#: the checks of a source, by name (a pair or solution source's also ``prompts``)
SOURCE_CHECKS: Checks = {"determinism": _determinism, "well_formed": _well_formed}
ITEM_SOURCE_CHECKS: Checks = {**SOURCE_CHECKS, "prompts": _its_prompts}


def check_source(
    source: PromptSource | BenchmarkSource | type[Any], *, only: str | None = None
) -> None:
    """A prompt, pair, solution or benchmark source: the same items from a fresh instance,
    items the stages can store, and a pair or solution source's prompts those of its items."""
    component = instance(source)
    checks = SOURCE_CHECKS
    if isinstance(component, SolutionSource):
        subject = SourceSubject(component, lambda c: c.load_solutions(), _solution_problem)
        checks = ITEM_SOURCE_CHECKS
    elif isinstance(component, PairSource):
        benchmark = sample_benchmark_data() if component.needs_benchmark else None
        subject = SourceSubject(component, lambda c: c.load_pairs(benchmark), _pair_problem)
        checks = ITEM_SOURCE_CHECKS
    elif isinstance(component, BenchmarkSource):
        subject = SourceSubject(component, lambda c: c.load(), _benchmark_problem)
    else:
        subject = SourceSubject(component, lambda c: c.load(), _prompt_problem)
    run_checks(component, subject, checks, only)
