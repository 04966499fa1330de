"""A run's provenance as the run records it: every part's sources, from the recipe's built
components (files with their SHA-256, models with their revision, or the simulated world).
Stored per run (``run_sources``); :mod:`rmaudit.results.provenance` reads it back."""

from __future__ import annotations

from typing import Any

from rmaudit.components import BenchmarkContent, Component, Provenance, Source
from rmaudit.recipe import Recipe


def _component_sources(part: str, entry: str, component: Component, role: str) -> list[Provenance]:
    if component.simulated:
        return [Provenance(part, entry, True, Source(role, "simulated", component.name))]
    own = getattr(component, "sources", lambda: ())()
    if own:
        return [Provenance(part, entry, False, s) for s in own]
    model = getattr(component.options, "model", None)
    if isinstance(model, str):
        revision = getattr(component.options, "revision", None) or ""
        return [Provenance(part, entry, False, Source(role, "model", model, str(revision)))]
    return [Provenance(part, entry, False, Source(role, "component", component.name))]


def run_provenance(
    recipe: Recipe,
    components: dict[str, Component],
    content: BenchmarkContent | None,
    imported_header: dict[str, Any] | None = None,
) -> list[Provenance]:
    """Every part's sources, from the recipe's built components and what a benchmark source
    read (``content``), or the header of an imported rmaudit benchmark file."""
    found: list[Provenance] = []

    def add(part: str, spec, role: str) -> None:
        if spec is not None:
            found.extend(_component_sources(part, spec.field, components[spec.field], role))

    if content is not None:
        for source in content.sources:
            part = "oracle" if source.role == "labels" else "responses"
            found.append(Provenance(part, "benchmark", False, source))
    elif recipe.benchmark_file is not None:
        from rmaudit.components.options import file_source

        simulated = bool((imported_header or {}).get("simulated"))
        found.append(
            Provenance(
                "responses",
                "benchmark",
                simulated,
                file_source("prompts and responses", recipe.benchmark_file),
            )
        )
        found.append(
            Provenance(
                "oracle",
                "benchmark",
                simulated,
                file_source(
                    "labels",
                    recipe.benchmark_file,
                    f"rmaudit benchmark {recipe.benchmark_file.name}",
                ),
            )
        )
    add("prompts", recipe.source, "prompts")
    add("responses", recipe.policy, "responses")
    add("oracle", recipe.oracle, "labels")
    add("pairs", recipe.pair_source, "pairs")
    add("solutions", recipe.solution_source, "solutions")
    for spec in (*recipe.reward_models, *recipe.process_reward_models):
        found.extend(_component_sources("RMs", spec.label, components[spec.field], "scores"))
    return found
