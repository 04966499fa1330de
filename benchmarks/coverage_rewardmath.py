"""Coverage of the ± and intervals the RewardMATH suites print (docs/rewardmath.md), on
simulated models of a known truth: the one-to-many accuracy, with ties, the tie rate and the
MRR, the pairwise accuracy, RETA(1/10) (RETA(1/2) at two solutions) and BoN@4.

Each data set: ``problems`` problems of ``solutions`` solutions, the first correct.  A
classifier scores the correct solution d + e and each incorrect one e' (e, e' ~ N(0, 1), d =
μ + u with u ~ N(0, σ_u²) a problem's difficulty); a rating judge rates the same scores
rounded to the integers 1–10 (ties); a pairwise judge beats each incorrect solution with
probability Φ(d) apart, scored as RewardMATH scores it (1 + wins, an incorrect 1 or 11).
Each figure's truth is its mean per problem over 400,000 problems.  Printed for each figure:
the share of data sets whose value ± 1.96·± covers the truth, then that of the percentile
bootstrap's 95% interval.

    python benchmarks/coverage_rewardmath.py [--datasets 1000] [--out FILE]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from _smoke import parse_args, print_table
from scipy.special import comb, ndtr

from rmaudit.metrics import MetricResult, best_of_n, pairwise_accuracy, reta
from rmaudit.metrics.one_to_many import one_to_many

FIGURES = ("acc", "acc w/ tie", "tie rate", "MRR", "pairwise acc", "RETA", "BoN@4")


@dataclass(frozen=True)
class World:
    name: str
    problems: int
    kind: str  # "classifier", "rating" or "pairwise"
    mu: float
    solutions: int = 10
    sd_problem: float = 1.0


WORLDS = (
    World("classifier, RewardMATH size (483 × 10), acc ≈ 0.4", 483, "classifier", 1.5),
    World("classifier, 483 × 10, acc ≈ 0.1", 483, "classifier", 0.3),
    World("rating judge 1–10 (ties), 483 × 10", 483, "rating", 1.5),
    World("pairwise judge, 483 × 10", 483, "pairwise", 1.0),
    World("classifier, 30 problems × 10", 30, "classifier", 1.5),
    World("rating judge, 30 problems × 10", 30, "rating", 1.5),
    World("classifier, RewardBench math size (447 × 2)", 447, "classifier", 1.5, solutions=2),
)


def scores(world: World, rng: np.random.Generator, problems: int) -> np.ndarray:
    """(problems × solutions) scores, the correct solution first."""
    d = world.mu + rng.normal(0, world.sd_problem, problems)
    if world.kind == "pairwise":
        won = rng.random((problems, world.solutions - 1)) < ndtr(d)[:, None]
        lost = float(world.solutions + 1)
        return np.column_stack([1.0 + won.sum(axis=1), np.where(won, 1.0, lost)])
    found = rng.normal(0, 1, (problems, world.solutions))
    found[:, 0] += d
    if world.kind == "rating":
        found = np.clip(np.round(2 * found + 5), 1, 10)
    return found


def estimates(world: World, found: np.ndarray) -> dict[str, MetricResult]:
    oracle = np.zeros(world.solutions)
    oracle[0] = 1.0
    judged = [oracle] * len(found)
    pools = list(found)
    figures = one_to_many(judged, pools)
    eta = 1 / world.solutions
    return {
        "acc": figures.accuracy,
        "acc w/ tie": figures.accuracy_with_ties,
        "tie rate": figures.tie_rate,
        "MRR": figures.reciprocal_rank,
        "pairwise acc": pairwise_accuracy(judged, pools),
        "RETA": reta(judged, pools, eta, n=world.solutions),
        "BoN@4": best_of_n(judged, pools, min(4, world.solutions)),
    }


def truth(world: World, rng: np.random.Generator) -> dict[str, float]:
    """Each figure's mean over 1,000,000 problems, per problem from its definition (ties at
    random where the figure breaks them), not through rmaudit's estimators."""
    found = scores(world, rng, 1_000_000)
    right, rest = found[:, :1], found[:, 1:]
    above = (rest > right).sum(axis=1)
    tied = (rest == right).sum(axis=1)
    below = rest.shape[1] - above - tied
    strict, ties = above + tied == 0, above == 0
    n, k = world.solutions, min(4, world.solutions)
    # the correct solution in a random k-subset, none above it there, j of those tied with it
    bon = sum(comb(tied, j) * comb(below, k - 1 - j) / (1 + j) for j in range(k)) / comb(n, k)
    return {
        "acc": float(strict.mean()),
        "acc w/ tie": float(ties.mean()),
        "tie rate": float((ties & ~strict).mean()),
        "MRR": float((1 / (1 + above + tied)).mean()),
        "pairwise acc": float(((below + tied / 2) / rest.shape[1]).mean()),
        "RETA": float((np.where(ties, 1 / (1 + tied), 0.0) * n).mean()),
        "BoN@4": float(bon.mean()),
    }


def coverage(world: World, datasets: int, seed: int) -> dict[str, tuple[float, float]]:
    rng = np.random.default_rng(seed)
    want = truth(world, rng)
    hits = {name: [0, 0] for name in FIGURES}
    for _ in range(datasets):
        for name, result in estimates(world, scores(world, rng, world.problems)).items():
            half = 1.96 * result.stderr
            hits[name][0] += result.value - half <= want[name] <= result.value + half
            hits[name][1] += result.ci_low <= want[name] <= result.ci_high
    return {name: (z / datasets, b / datasets) for name, (z, b) in hits.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--out", help="write the Markdown table here too")
    args = parse_args(parser, {"datasets": 3})
    started = time.perf_counter()
    lines = [
        "| world | " + " | ".join(FIGURES) + " |",
        "|---|" + "---:|" * len(FIGURES),
    ]
    for i, world in enumerate(WORLDS):
        found = coverage(world, args.datasets, seed=i)
        cells = " | ".join(f"{z:.3f} / {b:.3f}" for z, b in (found[f] for f in FIGURES))
        lines.append(f"| {world.name} | {cells} |")
        print(lines[-1], flush=True)
    print_table(lines, args.datasets, started, args.out)


if __name__ == "__main__":
    main()
