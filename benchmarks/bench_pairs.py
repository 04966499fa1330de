"""Every preference-pair metric on 100,000 pairs (target: under 1 s in all).

Workload: an in-distribution set of n pairs (chosen ~ N(1, 1.5²), rejected ~ N(0, 1.5²),
rounded to 0.01 so ties occur) with 23 subset labels (RewardBench's) and RM-Bench style
indices, and a shifted set of n pairs with compressed logits.  Timed: accuracy (both tie
policies, with their Wilson CIs), per-subset accuracy, the RewardBench section score,
the RM-Bench style matrix and difficulty, MSP confidence, ECE (10 bins), the Bradley-Terry ECE,
energy scores of both sets, and AUROC and FPR@95 for the energy and the MSP detectors.

    python benchmarks/bench_pairs.py [--pairs 100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from _smoke import parse_args

from rmaudit.metrics import (
    REWARDBENCH,
    accuracy,
    auroc,
    bt_ece,
    confidence,
    ece,
    energy_score,
    fpr_at_95_tpr,
    section_score,
    style_accuracy_matrix,
    style_difficulty,
    subset_accuracy,
)


def workload(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    chosen = np.round(rng.normal(1.0, 1.5, n), 2)
    rejected = np.round(rng.normal(0.0, 1.5, n), 2)
    names = [
        s
        for name in ("Chat", "Chat Hard", "Safety", "Reasoning")
        for s in REWARDBENCH.sections[name]
    ]
    subsets = np.array(names)[rng.integers(len(names), size=n)]
    styles = rng.integers(3, size=(2, n))
    shifted = (0.3 * rng.normal(1.0, 1.5, n), 0.3 * rng.normal(0.0, 1.5, n))
    return chosen, rejected, subsets, styles, shifted


def run_all(chosen, rejected, subsets, styles, shifted) -> dict[str, float]:
    timings: dict[str, float] = {}

    def timed(name, call):
        start = time.perf_counter()
        value = call()
        timings[name] = time.perf_counter() - start
        return value

    timed(
        "accuracy (loss + half)",
        lambda: (accuracy(chosen, rejected), accuracy(chosen, rejected, ties="half")),
    )
    per_subset = timed(
        "subset accuracy (23 subsets)", lambda: subset_accuracy(chosen, rejected, subsets)
    )
    timed("section score (RewardBench)", lambda: section_score(per_subset, "rewardbench"))
    timed(
        "RM-Bench style matrix + difficulty",
        lambda: style_difficulty(style_accuracy_matrix(chosen, rejected, styles[0], styles[1])),
    )
    timed("confidence (MSP)", lambda: confidence(chosen, rejected))
    timed("ECE (10 bins)", lambda: ece(chosen, rejected))
    timed("BT ECE (10 margin bins)", lambda: bt_ece(chosen, rejected))
    energies = timed(
        "energy (ID + shifted)", lambda: (energy_score(chosen, rejected), energy_score(*shifted))
    )
    timed(
        "AUROC + FPR@95 (energy)",
        lambda: (auroc(-energies[0], -energies[1]), fpr_at_95_tpr(-energies[0], -energies[1])),
    )
    timed(
        "AUROC + FPR@95 (MSP)",
        lambda: (
            auroc(confidence(chosen, rejected), confidence(*shifted)),
            fpr_at_95_tpr(confidence(chosen, rejected), confidence(*shifted)),
        ),
    )
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parse_args(parser, {"pairs": 2000, "repeats": 1})
    data = workload(args.pairs)
    runs = [run_all(*data) for _ in range(args.repeats)]
    totals = sorted(sum(run.values()) for run in runs)
    best = min(runs, key=lambda run: sum(run.values()))
    print(
        f"{args.pairs:,} pairs, {platform.python_implementation()} {platform.python_version()}, "
        f"numpy {np.__version__}"
    )
    for name, seconds in best.items():
        print(f"  {name:38} {seconds * 1000:8.1f} ms")
    print(
        f"total: best {totals[0]:.3f} s, median {totals[len(totals) // 2]:.3f} s "
        f"over {args.repeats} runs (target < 1 s)"
    )


if __name__ == "__main__":
    main()
