"""Coverage of the ``oracle-correlation`` interval (the pooled within-prompt correlation of a
model's scores with the oracle's labels, docs/budget.md) in simulation with a known truth.

Each data set: ``prompts`` prompts of ``per_prompt`` responses.  A response's quality is
u ~ N(0, s_q²), with a prompt scale s_q ~ LogNormal(0, 0.5) (prompts differ in spread) and a
prompt leniency L_q ~ N(0, 1); the oracle's label is J = L_q + u (``rounded``: to whole numbers
in 1..10: 5.5 + 1.5·J), a rating x = ρ·u + √(1 − ρ²)·s_q·e with e ~ N(0, 1)
(so the within-prompt correlation is ρ on every prompt before rounding).  The truth is the
population value of the pooled within-prompt correlation: ρ, or with rounding its value on
one data set of 200,000 prompts.

    python benchmarks/coverage_oracle_correlation.py [--datasets 1000] [--out FILE]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from _smoke import parse_args, print_table

from rmaudit.metrics.oracle_correlation import within_prompt_correlation


@dataclass(frozen=True)
class World:
    prompts: int
    per_prompt: int
    rho: float
    rounded: bool = False


WORLDS = tuple(
    World(prompts, per_prompt, rho, rounded)
    for prompts, per_prompt in ((30, 4), (30, 16), (100, 11), (300, 16))
    for rho in (0.3, 0.7, 0.9)
    for rounded in (False, True)
)


def dataset(world: World, rng: np.random.Generator, prompts: int | None = None):
    k, n = prompts or world.prompts, world.per_prompt
    scale = rng.lognormal(0, 0.5, (k, 1))
    u = scale * rng.normal(size=(k, n))
    labels = rng.normal(size=(k, 1)) + u
    rating = world.rho * u + np.sqrt(1 - world.rho**2) * scale * rng.normal(size=(k, n))
    if world.rounded:
        labels = np.clip(np.round(5.5 + 1.5 * labels), 1, 10)
    return list(labels), list(rating)


def truth(world: World, rng: np.random.Generator, prompts: int) -> float:
    if not world.rounded:
        return world.rho
    labels, rating = dataset(world, rng, prompts=prompts)
    return within_prompt_correlation(labels, rating).value


def coverage(world: World, datasets: int, seed: int, truth_prompts: int) -> float:
    rng = np.random.default_rng(seed)
    want = truth(world, rng, truth_prompts)
    hits = 0
    for _ in range(datasets):
        found = within_prompt_correlation(*dataset(world, rng))
        hits += found.ci_low <= want <= found.ci_high
    return hits / datasets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--out", help="write the Markdown table here too")
    parser.add_argument("--truth-prompts", type=int, default=200_000)
    args = parse_args(parser, {"datasets": 5, "truth_prompts": 1000})
    started = time.perf_counter()
    lines = ["| prompts × responses | ρ | labels | coverage |", "|---|---:|---|---:|"]
    for i, world in enumerate(WORLDS):
        found = coverage(world, args.datasets, seed=i, truth_prompts=args.truth_prompts)
        labels = "whole 1–10" if world.rounded else "continuous"
        lines.append(
            f"| {world.prompts} × {world.per_prompt} | {world.rho} | {labels} | {found:.3f} |"
        )
        print(lines[-1], flush=True)
    print_table(lines, args.datasets, started, args.out)


if __name__ == "__main__":
    main()
