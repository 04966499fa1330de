"""Labelling on a budget, in simulation with known truth: interval coverage and width of every
label design, and the judge calls each needs for the width full labelling gives.

    python benchmarks/budget_coverage.py [--datasets 500] [--jobs 2] [--out benchmarks/budget.md]
                                          [--smoke]

The world: per prompt a leniency μ ~ N(5, 0.5²); per response a latent quality q = μ + N(0, 1)
− 0.8·max(L − 1, 0) where L ~ N(0, 1) is its length, so the longest answers are worse; a judge
sample is q + N(0, 0.5²) and a label the mean of ``samples`` of them.  RMs: ``honest``
(Y = q + N(0, 1), the guide of the rm-guided design) and ``length-biased`` (Y = q + 1.5 L: its
top picks are padded, and it is not a guide, so its estimates show what an RM added later gets).
The cheap judge is Ĵ = q + N(0, 0.8²): correlation 0.70 with a one-sample label.

Truth: for RETA and best-of-n, the expectation of the full-label estimate over prompts (the
judge's noise is independent of the RM, so it is the noise-free value, computed from q on 20,000
prompts); for pairwise accuracy, which depends on the labels' noise (a flipped pair), the same
expectation with labels of the same number of samples, on 4,000 prompts.  Every interval covers
that quantity, the one full labelling estimates (docs/budget.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from itertools import groupby
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from rmaudit.metrics import best_of_n, pairwise_accuracy, reta
from rmaudit.metrics.budget import (
    budget_best_of_n,
    budget_pairwise_accuracy,
    budget_reta_curve,
    guide_importance,
    rm_guided_inclusion,
    select,
    uniform_sample_size,
)
from rmaudit.metrics.budget.planning import Pilot, WidthTarget, design_options, loses, recommend

JUDGE_NOISE, CHEAP_NOISE = 0.5, 0.8
RMS = ("honest", "length-biased")
METRICS = ("RETA(1/4)", "RETA(1/16)", "BoN@16", "pairwise accuracy")
DESIGNS = [("full", 1.0, False)] + [
    (design, budget, cheap)
    for budget in (0.25, 0.125)
    for design in ("uniform", "rm-guided")
    for cheap in (False, True)
]


def world(rng: np.random.Generator, k: int, n: int, samples: int = 1):
    """(quality, labels, per-label sample variance, RM scores by RM, cheap predictions)."""
    leniency = rng.normal(5.0, 0.5, (k, 1))
    length = rng.normal(size=(k, n))
    quality = leniency + rng.normal(size=(k, n)) - 0.8 * np.maximum(length - 1.0, 0.0)
    draws = quality[..., None] + JUDGE_NOISE * rng.normal(size=(k, n, samples))
    labels = draws.mean(axis=2)
    variance = draws.var(axis=2, ddof=1) if samples > 1 else np.full((k, n), np.nan)
    scores = {"honest": quality + rng.normal(size=(k, n)), "length-biased": quality + 1.5 * length}
    cheap = quality + CHEAP_NOISE * rng.normal(size=(k, n))
    return quality, labels, variance, scores, cheap


def full_values(oracle, scores) -> dict[str, object]:
    return {
        "RETA(1/4)": reta(oracle, scores, 0.25, bootstrap=200),
        "RETA(1/16)": reta(oracle, scores, 1 / 16, bootstrap=200),
        "BoN@16": best_of_n(oracle, scores, 16, bootstrap=200),
    }


def truths(n: int, samples: int) -> dict[tuple[str, str], float]:
    rng = np.random.default_rng(12345)
    out = {}
    quality, labels, _, scores, _ = world(rng, 20_000, n, samples)
    for rm in RMS:
        for name, result in full_values(list(quality), list(scores[rm])).items():
            out[(rm, name)] = result.value
        few = slice(0, 4_000)
        out[(rm, "pairwise accuracy")] = pairwise_accuracy(
            list(labels[few]), list(scores[rm][few]), bootstrap=1
        ).value
    return out


def estimate(design: str, budget: float, cheap: bool, seed: int, k: int, n: int):
    """One simulated benchmark: every metric's (value, stderr, CI) per RM."""
    rng = np.random.default_rng(seed)
    _, labels, _, scores, predictions = world(rng, k, n)
    u = rng.uniform(size=(k, n))
    if design == "full":
        inclusion, oracle, kind = [np.ones(n)] * k, list(labels), "uniform"
    else:
        inclusion, oracle, kind = [], [], design
        for q in range(k):
            if design == "uniform":
                pi = np.full(n, uniform_sample_size(budget, n) / n)
            else:
                pi = rm_guided_inclusion(guide_importance(scores["honest"][q][None]), budget * n)
            inclusion.append(pi)
            oracle.append(np.where(select(design, u[q], pi), labels[q], np.nan))
    # as a run does: a prompt with fewer than two labelled responses is skipped (and counted)
    kept = [q for q in range(k) if np.count_nonzero(~np.isnan(oracle[q])) >= 2]
    oracle, inclusion = [oracle[q] for q in kept], [inclusion[q] for q in kept]
    cheap_predictions = [predictions[q] for q in kept] if cheap else None
    options = {"design": kind, "predictions": cheap_predictions, "bootstrap": 200}
    out = {"skipped": k - len(kept)}
    for rm in RMS:
        y = [scores[rm][q] for q in kept]
        # as a run does: the other RMs' scores are control variates too
        others = [[scores[other][q] for q in kept] for other in RMS if other != rm]
        options["auxiliary"] = others
        curve = budget_reta_curve(oracle, y, inclusion, [0.25, 1 / 16], **options)
        results = {
            "RETA(1/4)": curve.point(0),
            "RETA(1/16)": curve.point(1),
            "BoN@16": budget_best_of_n(oracle, y, inclusion, 16, **options),
            "pairwise accuracy": budget_pairwise_accuracy(oracle, y, inclusion, **options),
        }
        for name, r in results.items():
            out[(rm, name)] = (r.value, r.stderr, r.ci_low, r.ci_high)
    return out


def _task(args):
    return estimate(*args)


def monte_carlo_error(coverage: float, datasets: int) -> float:
    """The standard error of a coverage measured on ``datasets`` independent benchmarks."""
    return float(np.sqrt(coverage * (1 - coverage) / datasets))


def band_rows(cells: dict[str, list[float]], k: int, n: int, datasets: int) -> list[str]:
    """Per design: the band its cells' ± coverage falls in, each cell's Monte Carlo error at
    the band's ends, and full labelling's own band in the same worlds."""
    rows = []
    full = cells["full"]
    for label, found in cells.items():
        low, high = min(found), max(found)
        rows.append(
            f"| {k}×{n} | {label} | {low:.3f}–{high:.3f} | ±{monte_carlo_error(low, datasets):.3f}"
            f" / ±{monte_carlo_error(high, datasets):.3f} | {np.mean(found):.3f} | "
            f"{min(full):.3f}–{max(full):.3f} (mean {np.mean(full):.3f}) |"
        )
    return rows


def coverage_rows(
    k: int, n: int, datasets: int, jobs: int, cells: dict[str, list[float]]
) -> list[str]:
    """The table's rows at k × n; each design's ± coverages are added to ``cells``."""
    truth = truths(n, 1)
    rows, full_width = [], {}
    for design, budget, cheap in DESIGNS:
        tasks = [(design, budget, cheap, 1000 + i, k, n) for i in range(datasets)]
        started = time.perf_counter()
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(_task, tasks, chunksize=4))
        seconds = time.perf_counter() - started
        for rm in RMS:
            for metric in METRICS:
                found = np.array([r[(rm, metric)] for r in results])
                skipped = np.mean([r["skipped"] for r in results])
                value, stderr, low, high = found.T
                t = truth[(rm, metric)]
                plus = np.mean(np.abs(value - t) <= 1.959964 * stderr)
                boot = np.mean((low <= t) & (t <= high))
                width = float(np.mean(2 * 1.959964 * stderr))
                if design == "full":
                    full_width[(rm, metric)] = width
                ratio = width / full_width[(rm, metric)]
                mark = "" if 0.93 <= plus <= 0.97 else " ≈"
                label = (
                    "full"
                    if design == "full"
                    else f"{design} {budget:g}" + (" + cheap" if cheap else "")
                )
                cells.setdefault(label, []).append(float(plus))
                error = monte_carlo_error(plus, datasets)
                rows.append(
                    f"| {k}×{n} | {label} | {rm} | {metric} | {t:.4f} | "
                    f"{plus:.3f} ±{error:.3f}{mark} | "
                    f"{boot:.3f} | {width:.4f} | {ratio:.2f} | {np.mean(value - t):+.5f} | "
                    f"{skipped:.1f} |"
                )
        print(f"{k}×{n} {design} {budget} cheap={cheap}: {seconds:.0f} s", file=sys.stderr)
    return rows


def savings_rows(k: int, n: int, pilot_samples: int, pool: int) -> list[str]:
    """Judge calls at the width full labelling with ``pilot_samples`` samples gives at k prompts
    (the planner, on a simulated fully labelled pilot of k prompts), and the check by simulation
    of the recommended option's width."""
    rng = np.random.default_rng(7)
    _, labels, variance, scores, cheap = world(rng, k, n, pilot_samples)
    pilot = Pilot(
        list(labels),
        list(variance),
        pilot_samples,
        {rm: list(scores[rm]) for rm in RMS},
        list(cheap),
    )
    targets = [WidthTarget("reta", 0.25), WidthTarget("bon", 16)]
    widths = {}
    for rm in RMS:
        full = full_values(list(labels), list(scores[rm]))
        for target in targets:  # the planner's names are the summary's: RETA(1/4), BoN@16
            widths[(target.name, rm)] = 2 * 1.959964 * full[target.name].stderr
    options = design_options(
        pilot, targets, widths, guides=["honest"], max_prompts=pool, per_prompt=n
    )
    best = recommend(options)
    rows = []
    baseline = k * n * pilot_samples
    for (design, cheap), group in groupby(
        sorted(options, key=lambda o: (o.design, o.cheap)), key=lambda o: (o.design, o.cheap)
    ):
        group = list(group)
        cheapest = min(group, key=lambda o: (not o.feasible, o.calls))
        one_sample = min(
            (o for o in group if o.samples == 1), key=lambda o: (not o.feasible, o.calls)
        )
        for choice in dict.fromkeys([cheapest, one_sample]):
            label = "full" if design == "full" else f"{design} {choice.budget:g}"
            label += " + cheap" if cheap else ""
            if not choice.feasible:
                verdict = f"needs {choice.prompts} prompts > the pool of {pool}"
            elif choice == best:
                verdict = "recommended"
            else:
                verdict = "loses to full labelling" if loses(choice, options) else ""
            rows.append(
                f"| {label} | {choice.samples} | {choice.prompts} | {choice.labels:,.0f} | "
                f"{choice.calls:,.0f} | {baseline / choice.calls:.1f}× | {verdict} |"
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=500)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--smoke", action="store_true", help="a tiny run, for the test suite")
    args = parser.parse_args()
    sizes = [(12, 64)] if args.smoke else [(100, 256), (30, 64)]
    datasets = 4 if args.smoke else args.datasets
    lines = [
        "## Coverage and width (benchmarks/budget_coverage.py)",
        "",
        f"{datasets} simulated benchmarks per row; ± is value ± 1.96·stderr, CI the bootstrap "
        "interval; beside each ± coverage its Monte Carlo error, √(p(1 − p)/datasets); ≈ marks "
        "± coverage outside [0.93, 0.97]; width ratio is against full labelling (1 judge sample "
        "per label throughout).",
        "",
        "| size | design | RM | metric | truth | ± coverage | CI coverage | mean width | "
        "width / full | mean error | prompts skipped |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    bands = []
    for k, n in sizes:
        cells: dict[str, list[float]] = {}
        lines += coverage_rows(k, n, datasets, args.jobs, cells)
        bands += band_rows(cells, k, n, datasets)
    lines += [
        "",
        "Per design, the band its cells' ± coverage falls in (each cell measured to the Monte "
        "Carlo error shown, at the band's low and high ends), beside full labelling's own band "
        "in the same worlds:",
        "",
        "| size | design | ± coverage of its cells | Monte Carlo error (low / high) | mean | "
        "full labelling, same worlds |",
        "|---|---|---|---|---|---|",
        *bands,
    ]
    k, n = sizes[0]
    lines += [
        "",
        "## Judge calls at equal width (the planner on a fully labelled simulated pilot)",
        "",
        f"Target: the width full labelling gives at {k} prompts × {n} responses with 10 judge "
        "samples per label, for RETA(1/4) and BoN@16 of both RMs; prompts may grow to 300.",
        "",
        "| design | samples per label | prompts | labels | judge calls | vs full × 10 samples "
        "| verdict |",
        "|---|---|---|---|---|---|---|",
        *savings_rows(k, n, 10, 300),
    ]
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
