"""Coverage of the ± of the step metrics (docs/prm.md): PRMBench's PRMScore (over every step
and of one error class), ProcessBench's F1 of one split and its average over four, the AUROC
of each step aggregation, and the paired difference of two PRMs' PRMScore — each value
± 1.96·stderr, the stderr linearised and clustered by problem (rmaudit.metrics.process).

Each data set: problems with a shared difficulty d ~ N(0, 1); each problem has 1 to
``2·per_problem − 1`` solutions (mean ``per_problem``); a solution has 3 to 20 steps, with a
solution effect e ~ N(0, 0.5²).  PRMBench-shaped: 9 classes, a solution's class drawn
uniformly, 8 of them marking each step erroneous with probability 0.17, the 9th
(multi_solutions) none.  ProcessBench-shaped: half the solutions have a first wrong step
(uniform), whose final answer is correct with probability 0.2, the others always.  A PRM
scores step k of a solution σ(1.2·valid_k − 0.6 + 0.8·d + e + ε), ε ~ N(0, 1) (a second PRM,
for the paired difference, shares d and e with its own ε and 1.0 for 1.2); for ProcessBench
the steps after the first wrong one score as if valid.  The truth is each number's value on
one data set of ``--truth-problems`` problems (60,000: its own error is far below the widths
measured).

    python benchmarks/coverage_prm.py [--datasets 1000] [--out FILE]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from _smoke import parse_args, print_table

from rmaudit.metrics.process import AGGREGATIONS, aggregate, auroc, first_error_scores, step_f1
from rmaudit.metrics.process.linearized import LinearizedEstimate, weighted_sum

CLASSES = 9
THRESHOLD = np.array([0.5])


@dataclass
class Solutions:
    """One simulated data set: per solution its problem, class, step scores of two PRMs and
    labels."""

    problem: np.ndarray
    subset: np.ndarray
    scores: list[np.ndarray]
    other: list[np.ndarray]
    erroneous: list[tuple[int, ...]]
    first_error: np.ndarray
    correct_answer: np.ndarray
    problems: int


def simulate(problems: int, per_problem: int, rng: np.random.Generator, shape: str) -> Solutions:
    counts = rng.integers(1, 2 * per_problem, problems)
    problem = np.repeat(np.arange(problems), counts)
    n = problem.size
    base = rng.normal(0, 1, problems)[problem] + rng.normal(0, 0.5, n)
    lengths = rng.integers(3, 21, n)
    subset = rng.integers(0, CLASSES, n)
    owner = np.repeat(np.arange(n), lengths)
    index = np.arange(owner.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    if shape == "prmbench":
        wrong = (rng.random(owner.size) < 0.17) & (subset[owner] < CLASSES - 1)
    else:
        first = np.where(rng.random(n) < 0.5, (rng.random(n) * lengths).astype(int), -1)
        wrong = index == first[owner]
    signal = 0.8 * base[owner] + rng.normal(0, 1, (2, owner.size))
    mine = 1 / (1 + np.exp(-(1.2 * ~wrong - 0.6 + signal[0])))
    theirs = 1 / (1 + np.exp(-(1.0 * ~wrong - 0.5 + signal[1])))
    cuts = np.cumsum(lengths)[:-1]
    erroneous = [tuple(np.flatnonzero(w).tolist()) for w in np.split(wrong, cuts)]
    first_error = np.array([e[0] if e else -1 for e in erroneous])
    correct = (first_error == -1) | (rng.random(n) < 0.2)
    return Solutions(
        problem,
        subset,
        np.split(mine, cuts),
        np.split(theirs, cuts),
        erroneous,
        first_error,
        correct,
        problems,
    )


def prmbench_numbers(data: Solutions) -> dict[str, LinearizedEstimate]:
    def prm_score(
        kept: np.ndarray, scores: list[np.ndarray], negative: bool = True
    ) -> LinearizedEstimate:
        found = step_f1(
            [scores[i] for i in kept],
            [data.erroneous[i] for i in kept],
            data.problem[kept],
            data.problems,
            THRESHOLD,
            negative=negative,
        )
        return found.prm_score

    every = np.arange(data.problem.size)
    first_class = np.flatnonzero(data.subset == 0)
    multi = np.flatnonzero(data.subset == CLASSES - 1)
    mine, theirs = prm_score(every, data.scores), prm_score(every, data.other)
    return {
        "PRMScore, every step": mine,
        "PRMScore, one error class": prm_score(first_class, data.scores),
        "PRMScore, multi_solutions (F1)": prm_score(multi, data.scores, negative=False),
        "PRMScore, paired difference of two PRMs": weighted_sum([1, -1], [mine, theirs]),
    }


def processbench_numbers(data: Solutions) -> dict[str, LinearizedEstimate]:
    splits = [np.flatnonzero(data.subset % 4 == s) for s in range(4)]
    f1 = [
        first_error_scores(
            [data.scores[i] for i in kept],
            data.first_error[kept],
            data.problem[kept],
            data.problems,
            THRESHOLD,
        ).f1
        for kept in splits
    ]
    found = {"F1, one split": f1[0], "average F1 of four splits": weighted_sum([0.25] * 4, f1)}
    for how in AGGREGATIONS:
        found[f"AUROC, {how}"] = auroc(
            aggregate(data.scores, how), data.correct_answer, data.problem, data.problems
        )
    return found


NUMBERS = {"prmbench": prmbench_numbers, "processbench": processbench_numbers}


def value(estimate: LinearizedEstimate) -> float:
    return float(np.ravel(estimate.value)[0])


def coverage(shape: str, problems: int, per_problem: int, datasets: int, truth: dict, seed: int):
    rng = np.random.default_rng(seed)
    hits = {name: 0 for name in truth}
    widths = {name: [] for name in truth}
    for _ in range(datasets):
        for name, estimate in NUMBERS[shape](simulate(problems, per_problem, rng, shape)).items():
            low, high = (float(np.ravel(x)[0]) for x in estimate.interval())
            hits[name] += low <= truth[name] <= high
            widths[name].append(high - low)
    return {name: (hits[name] / datasets, float(np.nanmean(widths[name]))) for name in truth}


#: (shape, problems, solutions a problem): PRMBench's size (3,013 solutions of 307 problems),
#: one of its classes (~35 problems' worth), ProcessBench's splits (400 and 1,000 solutions)
SIZES = (
    ("prmbench", 307, 10),
    ("prmbench", 60, 10),
    ("prmbench", 30, 10),
    ("processbench", 400, 2),
    ("processbench", 100, 2),
    ("processbench", 40, 2),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--truth-problems", type=int, default=60_000)
    parser.add_argument("--out", help="write the Markdown table here too")
    args = parse_args(parser, {"datasets": 3, "truth_problems": 500})
    started = time.perf_counter()
    lines = [
        "| number | problems × solutions | truth | coverage | mean width |",
        "|---|---|---:|---:|---:|",
    ]
    truths = {}
    for i, (shape, problems, per_problem) in enumerate(SIZES):
        if shape not in truths:
            big = simulate(args.truth_problems, per_problem, np.random.default_rng(10_000), shape)
            truths[shape] = {name: value(e) for name, e in NUMBERS[shape](big).items()}
        found = coverage(shape, problems, per_problem, args.datasets, truths[shape], seed=i)
        for name, (covered, width) in found.items():
            mark = "" if 0.93 <= covered <= 0.97 else " ≈"
            lines.append(
                f"| {name} | {problems} × {per_problem} ({shape}) | {truths[shape][name]:.4f} "
                f"| {covered:.3f}{mark} | {width:.4f} |"
            )
            print(lines[-1], flush=True)
    print_table(lines, args.datasets, started, args.out)


if __name__ == "__main__":
    main()
