"""Coverage of the prompt-clustered bootstrap intervals of ECE, BT-ECE, AUROC and FPR@95, and
of the shift curves' ECE, AUROC and FPR@95 points (rmaudit.metrics.cluster_bootstrap), in
simulation with known truth.

    python benchmarks/pair_intervals.py [--replicates 1000] [--pairs 200] [--draws 500]
        [--population 2000000] [--jobs 1] [--out benchmarks/pair_intervals.md]

World: a pair's RM margin m = L(chosen) − L(rejected) ~ N(0.8, 1.5²) before the truth is
known; the preference holds with probability σ(k·m) and where it does not the chosen and
rejected logits swap: k = 1.5 (an RM less confident than it should be) or k = 1 (a calibrated
RM).  Two shift levels: at p = 0.25 a pair's shifted copy has its logits shrunk by 0.6 plus
N(0, 0.5²) noise (hard to tell from the unshifted pairs: AUROC ≈ 0.56), at p = 0.75 shrunk by
0.3, moved down by 1 and N(0, 1) noise (AUROC ≈ 0.79).  Pairs are independent (one per prompt,
as in HH-RLHF).  Each interval is computed as the metrics compute it (the same resamples, the
same functions) and checked against two truths: the statistic's expected value on a data set
of this many pairs (what the interval targets; the mean over 4,000 simulated data sets) and its
population value (2,000,000 pairs, ``--population``).
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

from _smoke import parse_args, write_report  # noqa: E402

from rmaudit.metrics import auroc, bt_ece, ece, energy_score, fpr_at_95_tpr  # noqa: E402
from rmaudit.metrics.cluster_bootstrap import centred_interval, resample_counts  # noqa: E402
from rmaudit.metrics.preference.resampled import (  # noqa: E402
    resampled_auroc,
    resampled_ece,
    resampled_fpr95,
)

#: (chosen, rejected) unshifted, at p = 0.25 and at p = 0.75
Pairs = tuple[np.ndarray, ...]
WORLDS = {"under-confident RM (k = 1.5)": 1.5, "calibrated RM (k = 1)": 1.0}


def draw(rng: np.random.Generator, pairs: int, k: float) -> Pairs:
    margin = rng.normal(0.8, 1.5, pairs)
    base = rng.normal(0.0, 1.0, pairs)
    holds = rng.random(pairs) < 1.0 / (1.0 + np.exp(-k * margin))
    chosen = np.where(holds, base + margin, base)
    rejected = np.where(holds, base, base + margin)
    mild, strong = rng.normal(0.0, 0.5, (2, pairs)), rng.normal(0.0, 1.0, (2, pairs))
    return (
        chosen,
        rejected,
        0.6 * chosen + mild[0],
        0.6 * rejected + mild[1],
        0.3 * chosen - 1.0 + strong[0],
        0.3 * rejected - 1.0 + strong[1],
    )


def _detector(c: np.ndarray, r: np.ndarray) -> np.ndarray:
    return -energy_score(c, r)


Statistic = tuple[Callable[..., float], Callable[..., np.ndarray]]
#: each statistic: its value on a data set, and its values on resamples (counts per pair) as
#: the metrics compute them (BT-ECE: recomputed on each resample's pairs)
STATISTICS: dict[str, Statistic] = {
    "ECE": (lambda d: ece(d[0], d[1]).value, lambda d, w: resampled_ece(d[0], d[1], w)),
    "BT-ECE": (
        lambda d: bt_ece(d[0], d[1]).value,
        lambda d, w: np.array(
            [bt_ece(*(a[np.repeat(np.arange(w.shape[1]), row)] for a in d[:2])).value for row in w]
        ),
    ),
    "AUROC (p = 0.25; OOD detection and curve point)": (
        lambda d: auroc(_detector(d[0], d[1]), _detector(d[2], d[3])),
        lambda d, w: resampled_auroc(_detector(d[0], d[1]), _detector(d[2], d[3]), w),
    ),
    "FPR@95 (p = 0.25; OOD detection and curve point)": (
        lambda d: fpr_at_95_tpr(_detector(d[0], d[1]), _detector(d[2], d[3])),
        lambda d, w: resampled_fpr95(_detector(d[0], d[1]), _detector(d[2], d[3]), w),
    ),
    "shift curve ECE, p = 0.25": (
        lambda d: ece(d[2], d[3]).value,
        lambda d, w: resampled_ece(d[2], d[3], w),
    ),
    "shift curve ECE, p = 0.75": (
        lambda d: ece(d[4], d[5]).value,
        lambda d, w: resampled_ece(d[4], d[5], w),
    ),
    "shift curve AUROC, p = 0.75": (
        lambda d: auroc(_detector(d[0], d[1]), _detector(d[4], d[5])),
        lambda d, w: resampled_auroc(_detector(d[0], d[1]), _detector(d[4], d[5]), w),
    ),
    "shift curve FPR@95, p = 0.75": (
        lambda d: fpr_at_95_tpr(_detector(d[0], d[1]), _detector(d[4], d[5])),
        lambda d, w: resampled_fpr95(_detector(d[0], d[1]), _detector(d[4], d[5]), w),
    ),
}


def covering(
    truths: dict[str, tuple[float, float]],
    k: float,
    replicates: int,
    pairs: int,
    draws: int,
    seed: int,
) -> dict[str, tuple[int, int, list[float], list[float]]]:
    """How many of ``replicates`` data sets' intervals hold each statistic's expected value
    at ``pairs`` and its population value, and each data set's estimate and bootstrap ±."""
    rng = np.random.default_rng(seed)
    covered = {name: [0, 0] for name in truths}
    estimates: dict[str, list[float]] = {name: [] for name in truths}
    stderrs: dict[str, list[float]] = {name: [] for name in truths}
    for replicate in range(replicates):
        data = draw(rng, pairs, k)
        counts = resample_counts(pairs, draws=draws, seed=replicate)
        for name, (value, resampled) in STATISTICS.items():
            estimate = value(data)
            interval = centred_interval(estimate, resampled(data, counts), bounds=(0.0, 1.0))
            estimates[name].append(estimate)
            stderrs[name].append(interval.stderr)
            for which, truth in enumerate(truths[name]):
                covered[name][which] += interval.ci_low <= truth <= interval.ci_high
    return {name: (c[0], c[1], estimates[name], stderrs[name]) for name, c in covered.items()}


def truths(
    k: float, pairs: int, datasets: int, population_pairs: int
) -> dict[str, tuple[float, float]]:
    """Each statistic's (expected value at ``pairs``, population value)."""
    rng = np.random.default_rng(12345)
    population = draw(rng, population_pairs, k)
    sets = [draw(rng, pairs, k) for _ in range(datasets)]
    return {
        name: (float(np.mean([value(d) for d in sets])), value(population))
        for name, (value, _) in STATISTICS.items()
    }


def world_rows(name: str, k: float, args: argparse.Namespace) -> list[str]:
    truth = truths(k, args.pairs, args.truth_sets, args.population)
    shares = [len(part) for part in np.array_split(np.arange(args.replicates), args.jobs)]
    with ProcessPoolExecutor(args.jobs) as pool:
        counts = list(
            pool.map(
                covering,
                [truth] * args.jobs,
                [k] * args.jobs,
                shares,
                [args.pairs] * args.jobs,
                [args.draws] * args.jobs,
                range(1, args.jobs + 1),
            )
        )
    rows = []
    for statistic, (expected, population) in truth.items():
        at_n, at_population = (sum(c[statistic][which] for c in counts) for which in (0, 1))
        spread = np.std([e for c in counts for e in c[statistic][2]], ddof=1)
        stderr = np.mean([e for c in counts for e in c[statistic][3]])
        rows.append(
            f"| {name} | {statistic} | {expected:.4f} | {at_n / args.replicates:.3f} | "
            f"{population:.4f} | {at_population / args.replicates:.3f} | {stderr:.4f} | "
            f"{spread:.4f} |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--truth-sets", type=int, default=4000)
    parser.add_argument("--population", type=int, default=2_000_000, help="pairs of the population")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("pair_intervals.md"))
    smoke = {"replicates": 3, "draws": 20, "truth_sets": 5, "population": 20_000, "out": None}
    args = parse_args(parser, smoke)
    started = time.perf_counter()
    rows = [row for name, k in WORLDS.items() for row in world_rows(name, k, args)]
    print("\n".join(rows))
    write_report(
        args.out,
        [
            "# Bootstrap intervals of ECE, BT-ECE, AUROC, FPR@95 and the shift curves' points: "
            "coverage",
            "",
            f"`python benchmarks/pair_intervals.py --replicates {args.replicates} --pairs "
            f"{args.pairs} --draws {args.draws} --jobs {args.jobs}` "
            f"({time.perf_counter() - started:.0f} s): the share of {args.replicates} data sets "
            f"of {args.pairs} pairs whose 95% interval (a bootstrap over prompts, its percentile "
            "interval centred on the estimate) holds the statistic's expected value on a data "
            f"set of {args.pairs} pairs (what it targets; mean over {args.truth_sets} data sets) "
            f"and, for comparison, its population value ({args.population:,} pairs); and the ± "
            "(the bootstrap's standard deviation, mean over data sets) beside the estimates' "
            "standard deviation across data sets, what it estimates.",
            "",
            "| world | statistic | expected value at n | coverage | population value | "
            "coverage of it | mean ± | sd across data sets |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
            *rows,
            "",
        ],
    )


if __name__ == "__main__":
    main()
