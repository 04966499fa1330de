"""The parity section's accuracy difference in simulation with known truth
(rmaudit.metrics.parity): how often its interval — Tango's score interval for paired
proportions — holds the true difference of a served RM's pair accuracy and its checkpoint's,
beside Newcombe's method 10 (the hybrid Wilson interval, tried first) and the paired t-interval
rmaudit compare gives other differences (rmaudit.metrics.paired.paired_difference, clustered by
prompt), where the two scorings disagree on few pairs.

    python benchmarks/coverage_parity.py [--datasets 2000] [--out benchmarks/coverage_parity.md]

World: P pairs on prompts of 1 or 2 pairs (LLMBar's shape: its Natural subset has two per
prompt); the checkpoint gets pair i of prompt q right when 0.5 + u_q + e_i > 0, u ~ N(0, 0.8²),
e ~ N(0, 1) (accuracy ≈ 0.65); the server flips the checkpoint's preference on a right pair
with probability f and on a wrong one with f/2 (it loses more than it gains).  The true
difference is f/2·(1 − a) − f·a with a the checkpoint's accuracy in the world (1,000,000 pairs).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _smoke import parse_args, print_table  # noqa: E402

from rmaudit.metrics.paired import paired_difference  # noqa: E402
from rmaudit.metrics.parity import paired_accuracy_difference  # noqa: E402
from rmaudit.metrics.preference.accuracy import wilson_interval  # noqa: E402


@dataclass(frozen=True)
class World:
    pairs: int
    flip: float


WORLDS = tuple(
    World(pairs, flip) for pairs in (100, 419, 2000) for flip in (0.0, 0.002, 0.01, 0.05, 0.2)
)


def draw(world: World, rng: np.random.Generator, pairs: int) -> tuple[np.ndarray, ...]:
    """(checkpoint logits, served logits, prompt of each pair) of ``pairs`` pairs."""
    sizes = 1 + (rng.random(pairs) < 0.5)  # about half the prompts hold two pairs
    prompts = np.repeat(np.arange(pairs), sizes)[:pairs]
    latent = 0.5 + rng.normal(0, 0.8, pairs)[prompts] + rng.normal(0, 1, pairs)
    right = latent > 0
    flip = rng.random(pairs) < np.where(right, world.flip, world.flip / 2)
    checkpoint = np.where(right, 1.0, -1.0)
    served = np.where(flip, -checkpoint, checkpoint)
    return checkpoint, served, prompts


def truth(world: World, rng: np.random.Generator) -> float:
    checkpoint, _, _ = draw(world, rng, 1_000_000)
    accuracy = float(np.mean(checkpoint > 0))
    return world.flip / 2 * (1 - accuracy) - world.flip * accuracy


def newcombe(served: np.ndarray, checkpoint: np.ndarray) -> tuple[float, float]:
    """Newcombe's method 10 (Statistics in Medicine 17:2635, 1998): each accuracy's Wilson
    interval, combined with the phi coefficient of the 2×2 table of right and wrong."""
    right_s, right_c = served > 0, checkpoint > 0
    n = len(served)
    a, b = int(np.sum(right_s & right_c)), int(np.sum(right_s & ~right_c))
    c = int(np.sum(~right_s & right_c))
    d = n - a - b - c
    p1, p2 = (a + b) / n, (a + c) / n
    (l1, u1), (l2, u2) = ((float(x) for x in wilson_interval(p, n)) for p in (p1, p2))
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / margins**0.5 if margins else 0.0
    below = max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0) ** 0.5
    above = max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0) ** 0.5
    return p1 - p2 - below, p1 - p2 + above


def coverage(world: World, datasets: int, seed: int) -> tuple[float, float, float, float]:
    """(Tango's coverage, Newcombe's, the paired t-interval's, the mean flipped pairs)."""
    rng = np.random.default_rng(seed)
    want = truth(world, rng)
    tango = hybrid = t_interval = flips = 0
    for _ in range(datasets):
        checkpoint, served, prompts = draw(world, rng, world.pairs)
        found = paired_accuracy_difference(served, checkpoint)
        tango += found.low <= want <= found.high
        low, high = newcombe(served, checkpoint)
        hybrid += low <= want <= high
        paired = paired_difference(
            (served > 0).astype(float), (checkpoint > 0).astype(float), clusters=prompts
        )
        t_interval += paired.ci_low <= want <= paired.ci_high
        flips += found.gained + found.lost
    return tango / datasets, hybrid / datasets, t_interval / datasets, flips / datasets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=2000)
    parser.add_argument("--out", default=None, help="write the Markdown table here")
    args = parse_args(parser, {"datasets": 20})
    started = time.perf_counter()
    lines = [
        "| pairs | flip rate f | flipped pairs (mean) | Tango (rmaudit) | Newcombe 10 | paired t |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for i, world in enumerate(WORLDS):
        tango, hybrid, t_interval, flips = coverage(world, args.datasets, seed=i)
        lines.append(
            f"| {world.pairs} | {world.flip:g} | {flips:.1f} | {tango:.3f} | {hybrid:.3f} | "
            f"{t_interval:.3f} |"
        )
        print(lines[-1], flush=True)
    print_table(lines, args.datasets, started, args.out)


if __name__ == "__main__":
    main()
