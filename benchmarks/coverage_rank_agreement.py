"""Coverage of the rank-agreement intervals (``rmaudit compare --rank-correlation``,
docs/metrics.md "Do two benchmarks rank alike?") in simulation with a known truth.

A world holds ``models`` models with abilities θ_k ~ N(0, spread²) on benchmark A and
θ'_k = c·θ_k + √(1 − c²)·z_k on benchmark B (z_k ~ N(0, spread²)), drawn once per world.
Each unit (a pair of A, a problem of B) has a difficulty d ~ N(0, 1) shared by every model,
and model k gets it right when θ_k − d + e > 0 with e ~ N(0, 1): the units are paired across
models, as on a real benchmark.  A model's expected accuracy is Φ(θ/√2), monotone in θ, so the
truth is Spearman's ρ and Kendall's τ of (θ, θ').  A data set draws ``units_a`` and
``units_b`` fresh units; an interval covers when it holds the truth.  Beside the shipped
interval (the orderings the paired comparisons leave possible), the percentile bootstrap over
both benchmarks' units, which was tried first: it undercovers badly where models are close.

    python benchmarks/coverage_rank_agreement.py [--datasets 1000] [--out FILE]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from _smoke import parse_args, print_table
from scipy.stats import kendalltau, spearmanr

from rmaudit.metrics.rank_agreement import kendall, rank_agreement, spearman


@dataclass(frozen=True)
class World:
    models: int
    units_a: int
    units_b: int
    spread: float
    agreement: float


WORLDS = tuple(
    World(models, units_a, units_b, spread, agreement)
    for models, units_a, units_b in ((8, 447, 483), (13, 447, 483), (8, 100, 100))
    for spread in (0.15, 0.4, 0.8)
    for agreement in (0.0, 0.6, 0.95)
)


def abilities(world: World, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    theta = rng.normal(0, world.spread, world.models)
    other = world.agreement * theta + np.sqrt(1 - world.agreement**2) * rng.normal(
        0, world.spread, world.models
    )
    return theta, other


def units(theta: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    difficulty = rng.normal(size=(count, 1))
    return (theta - difficulty + rng.normal(size=(count, theta.size)) > 0).astype(float)


def bootstrap(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, resamples: int):
    """The percentile bootstrap's 95% intervals of ρ and τ, resampling both sides' units."""
    means_a = a[rng.integers(0, len(a), (resamples, len(a)))].mean(axis=1)
    means_b = b[rng.integers(0, len(b), (resamples, len(b)))].mean(axis=1)
    return [
        np.nanquantile(statistic(means_a, means_b), [0.025, 0.975])
        for statistic in (spearman, kendall)
    ]


def coverage(world: World, datasets: int, seed: int, resamples: int) -> np.ndarray:
    """Coverage of ρ and τ by the shipped interval, then by the bootstrap, and the share of
    data sets left unbounded."""
    rng = np.random.default_rng(seed)
    theta, other = abilities(world, rng)
    want = (spearmanr(theta, other).statistic, kendalltau(theta, other).statistic)
    hits = np.zeros(5)
    for _ in range(datasets):
        a, b = units(theta, world.units_a, rng), units(other, world.units_b, rng)
        found = rank_agreement(a, b)
        shipped = (found.spearman, found.kendall)
        hits[:2] += [c.ci_low <= w <= c.ci_high for c, w in zip(shipped, want, strict=True)]
        tried = bootstrap(a, b, rng, resamples)
        hits[2:4] += [lo <= w <= hi for (lo, hi), w in zip(tried, want, strict=True)]
        hits[4] += found.unbounded
    return hits / datasets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--out", help="write the Markdown table here too")
    parser.add_argument("--worlds", type=int, default=len(WORLDS), help="the first N worlds")
    args = parse_args(parser, {"datasets": 2, "resamples": 100, "worlds": 2})
    started = time.perf_counter()
    lines = [
        "| models | units A × B | spread | c | ρ | τ | ρ, bootstrap | τ, bootstrap | [−1, 1] |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for i, world in enumerate(WORLDS[: args.worlds]):
        found = coverage(world, args.datasets, seed=i, resamples=args.resamples)
        lines.append(
            f"| {world.models} | {world.units_a} × {world.units_b} | {world.spread} "
            f"| {world.agreement} | " + " | ".join(f"{x:.3f}" for x in found) + " |"
        )
        print(lines[-1], flush=True)
    print_table(lines, args.datasets, started, args.out)


if __name__ == "__main__":
    main()
