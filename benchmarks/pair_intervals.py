"""Coverage of the prompt-clustered bootstrap intervals of ECE, BT-ECE, AUROC and FPR@95
(rmaudit.metrics.cluster_bootstrap) in simulation with known truth.

    python benchmarks/pair_intervals.py [--replicates 1000] [--pairs 200] [--draws 200]
        [--jobs 1] [--out benchmarks/pair_intervals.md]

World: a pair's RM margin m = L(chosen) − L(rejected) ~ N(0.8, 1.5²) before the truth is
known; the preference holds with probability σ(1.5·m) (an RM less confident than it should
be), and where it does not the chosen and rejected logits swap.  The shifted copy of a pair
has its logits shrunk by 0.6 plus N(0, 0.5²) noise (the OOD set).  The truths (population
ECE, BT-ECE, AUROC, FPR@95) come from 2,000,000 simulated pairs.  Pairs are independent (one
per prompt, as in HH-RLHF).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _smoke import parse_args  # noqa: E402

from rmaudit.metrics import auroc, bt_ece, ece, energy_score, fpr_at_95_tpr  # noqa: E402
from rmaudit.metrics.cluster_bootstrap import cluster_bootstrap  # noqa: E402

Pairs = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def draw(rng: np.random.Generator, pairs: int) -> Pairs:
    margin = rng.normal(0.8, 1.5, pairs)
    base = rng.normal(0.0, 1.0, pairs)
    holds = rng.random(pairs) < 1.0 / (1.0 + np.exp(-1.5 * margin))
    chosen = np.where(holds, base + margin, base)
    rejected = np.where(holds, base, base + margin)
    noise = rng.normal(0.0, 0.5, (2, pairs))
    return chosen, rejected, 0.6 * chosen + noise[0], 0.6 * rejected + noise[1]


STATISTICS: dict[str, Callable[..., float]] = {
    "ECE": lambda c, r, sc, sr: ece(c, r).value,
    "BT-ECE": lambda c, r, sc, sr: bt_ece(c, r).value,
    "AUROC": lambda c, r, sc, sr: auroc(-energy_score(c, r), -energy_score(sc, sr)),
    "FPR@95": lambda c, r, sc, sr: fpr_at_95_tpr(-energy_score(c, r), -energy_score(sc, sr)),
}


def covering(truth: dict, replicates: int, pairs: int, draws: int, seed: int) -> dict:
    """How many of ``replicates`` data sets' intervals hold each truth."""
    rng = np.random.default_rng(seed)
    covered = dict.fromkeys(truth, 0)
    for _ in range(replicates):
        data = draw(rng, pairs)
        for name, f in STATISTICS.items():
            interval = cluster_bootstrap(
                lambda i, f=f, data=data: f(*(a[i] for a in data)), pairs, draws=draws
            )
            covered[name] += interval.ci_low <= truth[name] <= interval.ci_high
    return covered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("pair_intervals.md"))
    args = parse_args(parser, {"replicates": 3, "draws": 20, "out": None})
    started = time.perf_counter()
    population = draw(np.random.default_rng(12345), 2_000_000)
    truth = {name: f(*population) for name, f in STATISTICS.items()}
    shares = [len(part) for part in np.array_split(np.arange(args.replicates), args.jobs)]
    with ProcessPoolExecutor(args.jobs) as pool:
        counts = list(
            pool.map(
                covering,
                [truth] * args.jobs,
                shares,
                [args.pairs] * args.jobs,
                [args.draws] * args.jobs,
                range(args.jobs),
            )
        )
    covered = {name: sum(c[name] for c in counts) for name in truth}
    rows = [
        f"| {name} | {truth[name]:.4f} | {covered[name] / args.replicates:.3f} |" for name in truth
    ]
    print("\n".join(rows))
    table = "\n".join(
        [
            "# Bootstrap intervals of ECE, BT-ECE, AUROC and FPR@95: coverage",
            "",
            f"`python benchmarks/pair_intervals.py --replicates {args.replicates} --pairs "
            f"{args.pairs} --draws {args.draws} --jobs {args.jobs}` "
            f"({time.perf_counter() - started:.0f} s): "
            f"the share of {args.replicates} data sets of {args.pairs} pairs whose 95% "
            "percentile bootstrap interval (resampling prompts) holds the population value.",
            "",
            "| statistic | population value | coverage |",
            "|---|---:|---:|",
            *rows,
            "",
        ]
    )
    if args.out is not None:  # --smoke writes nothing
        args.out.write_text(table, encoding="utf-8")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
