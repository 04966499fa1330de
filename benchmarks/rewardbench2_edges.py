"""RewardBench 2's intervals at the edge, in simulation with a known truth: how often each
number's 95% interval, as ``rmaudit.metrics.rewardbench2`` computes it, holds the population
value for a model that is nearly perfect (true subset accuracies 0.99-0.9999), where a ± over
rows shrinks towards 0 and a bootstrap over them collapses to a point.

    python benchmarks/rewardbench2_edges.py [--datasets 1000] [--out FILE]

(figures: benchmarks/README.md, "RewardBench 2").

The world is ``benchmarks/rewardbench2.py``'s (RewardBench 2's sizes; latent qualities, noise
0.7), with models whose advantage δ on a correct completion is large: best-of-4 δ 5.3, 5.8,
6.8 and 8 (true accuracies about 0.990, 0.995, 0.999 and 0.9999), Ties δ 6.5 to 12 (Ties
about 0.96 to 1.0099 of its 1.01), and one 1-10 rating model (its ties at the top, a rating
of 10, share the credit).  Each cell: the share of data sets in which value ± 1.96·± holds the
truth / the 95% interval holds it / rmaudit marks the ± approximate (≈).  Where the ± is
marked the output tells the reader to cite the interval, so the interval's coverage is the one
that must hold.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _smoke import parse_args, print_table  # noqa: E402
from rewardbench2 import QUESTIONS, SIZES, latent, numbers, rows, scored, truth  # noqa: E402

from rmaudit.metrics.rewardbench2 import rewardbench2_score  # noqa: E402

#: (name, best-of-4 δ, Ties δ, 1-10 ratings)
MODELS = (
    ("0.990", 5.3, 6.5, False),
    ("0.995", 5.8, 7.5, False),
    ("0.999", 6.8, 10.0, False),
    ("0.9999", 8.0, 12.0, False),
    ("ratings, δ 5.8", 5.8, 7.5, True),
)
NAMES = (*SIZES, "Ties", "final")


def truths(delta: tuple[float, float], rating: bool, size: int) -> dict[str, float]:
    big = latent(np.random.default_rng(99), {k: size for k in SIZES}, size)
    return truth(scored(big, delta, rating, np.random.default_rng(100)))


def measure(
    delta: tuple[float, float], rating: bool, datasets: int, scale: float, seed: int, size: int
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Per number: the shares (± holds, interval holds, ± marked ≈); and the truths."""
    sizes = {k: max(8, round(n * scale)) for k, n in SIZES.items()}
    questions = max(8, round(QUESTIONS * scale))
    true = truths(delta, rating, size)
    rng = np.random.default_rng(seed)
    hits = {n: np.zeros(3) for n in NAMES}
    for _ in range(datasets):
        world = latent(rng, sizes, questions)
        score = rewardbench2_score(
            rows(scored(world, delta, rating, rng)), seed=int(rng.integers(1 << 30))
        )
        found = numbers(score)
        marked = {s.subset: bool(s.approximate) for s in score.subsets}
        assert score.final is not None
        marked["final"] = bool(score.final.approximate)
        for n in NAMES:
            value, stderr, low, high = found[n]
            hits[n] += (abs(value - true[n]) <= 1.96 * stderr, low <= true[n] <= high, marked[n])
    return {n: hits[n] / datasets for n in NAMES}, true


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--truth", type=int, default=400_000, help="rows for the truths")
    parser.add_argument("--scale", type=float, default=1.0, help="sizes, × RewardBench 2's")
    parser.add_argument("--out", help="write the Markdown table here too")
    args = parse_args(parser, {"datasets": 2, "truth": 2000, "out": None})
    started = time.perf_counter()
    lines = [
        f"| model (true accuracy) | {' | '.join(NAMES)} | truths: Ties, final |",
        "|---|" + "---:|" * (len(NAMES) + 1),
    ]
    for i, (name, best, ties, rating) in enumerate(MODELS):
        shares, true = measure((best, ties), rating, args.datasets, args.scale, i, args.truth)
        cells = " | ".join(
            f"{shares[n][0]:.3f} / {shares[n][1]:.3f} / {shares[n][2]:.2f}" for n in NAMES
        )
        lines.append(f"| {name} | {cells} | {true['Ties']:.4f}, {true['final']:.4f} |")
        print(lines[-1], flush=True)
    print_table(lines, args.datasets, started, args.out)


if __name__ == "__main__":
    main()
