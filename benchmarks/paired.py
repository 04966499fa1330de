"""Paired comparisons in simulation with known truth (rmaudit.metrics.paired): how often the
paired difference's interval (value ± t·stderr, Student's t with clusters − 1 degrees of
freedom) holds the true difference, how often the
rank intervals hold every model's true rank at once, and — with every model equal — how
often the significance groups separate some pair (the family-wise error rate).

    python benchmarks/paired.py [--replicates 1000] [--truth-prompts 40000]
        [--out benchmarks/paired.md]

Worlds (4 models each; models make correlated mistakes, as real RMs on the same items do):

* accuracy, clustered: C prompts × 9 pairs (RM-Bench's shape); pair i of prompt q is right
  for model m when μ_m + u_q + v_qi + e_qim > 0, with u ~ N(0, 0.8²) (the prompt), v ~ N(0,
  0.5²) (the pair, shared by the models) and e ~ N(0, 1); the truth is Φ(μ_m / √1.89).
  μ = (0.15, 0.1, 0.05, 0) apart (close enough that some ranks stay open), all 0 equal.
* RETA(1/4) and BoN@16: Q prompts × N = 64 responses; oracle J = 1 + 9Φ(a_q + z) with
  a ~ N(0, 0.5²), z ~ N(0, 1); model m scores Y = z + σ_m(0.7·s + √0.51·e_m), s shared by the
  models.  σ = (0.8, 0.9, 1.0, 1.2) apart, all 1 equal.  The truth is the mean per-prompt
  value over 40,000 prompts of the same world (``--truth-prompts``; its own error is under 3%
  of the ±).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.special import ndtr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _smoke import parse_args, write_report  # noqa: E402

from rmaudit.metrics import best_of_n, reta  # noqa: E402
from rmaudit.metrics.paired import compare_models  # noqa: E402

MODELS = ("A", "B", "C", "D")
PAIRS_PER_PROMPT = 9
RESPONSES = 64


def accuracy_world(mu: tuple[float, ...]) -> Callable:
    def draw(rng: np.random.Generator, prompts: int) -> tuple[dict, list]:
        u = np.repeat(rng.normal(0, 0.8, prompts), PAIRS_PER_PROMPT)
        v = rng.normal(0, 0.5, u.size)
        values = {
            m: (mu_m + u + v + rng.normal(size=u.size) > 0).astype(float)
            for m, mu_m in zip(MODELS, mu, strict=True)
        }
        return values, list(np.repeat(np.arange(prompts), PAIRS_PER_PROMPT))

    return draw


def accuracy_truth(mu: tuple[float, ...]) -> dict[str, float]:
    return {m: float(ndtr(x / np.sqrt(0.64 + 0.25 + 1.0))) for m, x in zip(MODELS, mu, strict=True)}


def pool_world(sigma: tuple[float, ...], metric: Callable) -> Callable:
    def draw(rng: np.random.Generator, prompts: int) -> tuple[dict, None]:
        z = rng.normal(size=(prompts, RESPONSES))
        oracle = 1 + 9 * ndtr(rng.normal(0, 0.5, (prompts, 1)) + z)
        shared = rng.normal(size=z.shape)
        values = {}
        for m, s in zip(MODELS, sigma, strict=True):
            scores = z + s * (0.7 * shared + np.sqrt(0.51) * rng.normal(size=z.shape))
            values[m] = metric(list(oracle), list(scores))
        return values, None

    return draw


def reta_quarter(oracle: list, scores: list) -> np.ndarray:
    return reta(oracle, scores, 0.25, bootstrap=1).per_prompt


def bon16(oracle: list, scores: list) -> np.ndarray:
    return best_of_n(oracle, scores, 16, bootstrap=1).per_prompt


def pool_truth(draw: Callable, seed: int, prompts: int) -> dict[str, float]:
    """Each model's mean per-prompt value over ``prompts`` prompts (drawn 2,000 at a time)."""
    rng = np.random.default_rng(seed)
    sums = dict.fromkeys(MODELS, 0.0)
    rounds = max(1, prompts // 2000)
    for _ in range(rounds):
        values, _ = draw(rng, 2000)
        for m in MODELS:
            sums[m] += float(values[m].sum())
    return {m: s / (2000 * rounds) for m, s in sums.items()}


def measure(draw: Callable, truth: dict, prompts: int, replicates: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    covered = pairs = any_separated = ranks_held = 0
    order = sorted(MODELS, key=lambda m: -truth[m])
    equal = len(set(np.round(list(truth.values()), 12))) == 1
    for _ in range(replicates):
        values, clusters = draw(rng, prompts)
        c = compare_models(values, clusters=clusters)
        for p in c.head_to_heads:
            true = truth[p.first] - truth[p.second]
            covered += p.difference.ci_low <= true <= p.difference.ci_high
            pairs += 1
        any_separated += any(p.separable for p in c.head_to_heads)
        ranks_held += all(
            s.rank_low <= order.index(s.model) + 1 <= s.rank_high for s in c.standings
        )
    return {
        "coverage": covered / pairs,
        "fwer": any_separated / replicates if equal else None,
        "ranks": None if equal else ranks_held / replicates,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument(
        "--truth-prompts",
        type=int,
        default=40_000,
        help="prompts the pool metrics' true values are averaged over (in 2,000s)",
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("paired.md"))
    args = parse_args(parser, {"replicates": 3, "truth_prompts": 2000, "out": None})
    apart, same = (0.15, 0.1, 0.05, 0.0), (0.0,) * 4
    spread, level = (0.8, 0.9, 1.0, 1.2), (1.0,) * 4
    settings = [
        ("accuracy (9 pairs a prompt, clustered)", "prompts", accuracy_world, accuracy_truth,
         apart, same, (30, 200)),
        ("RETA(1/4), N = 64", "prompts", lambda s: pool_world(s, reta_quarter), None,
         spread, level, (30, 100)),
        ("BoN@16, N = 64", "prompts", lambda s: pool_world(s, bon16), None,
         spread, level, (30, 100)),
    ]  # fmt: skip
    rows = []
    started = time.perf_counter()
    for name, unit, world, closed, differ, equal, sizes in settings:
        truths = []
        for params in (differ, equal):
            draw = world(params)
            truths.append(
                (draw, closed(params) if closed else pool_truth(draw, 99, args.truth_prompts))
            )
        for size in sizes:
            (draw_d, truth_d), (draw_e, truth_e) = truths
            if closed is None:  # equal models: the truth is equal by symmetry
                truth_e = dict.fromkeys(MODELS, float(np.mean(list(truth_e.values()))))
            apart_result = measure(draw_d, truth_d, size, args.replicates, seed=size)
            equal_result = measure(draw_e, truth_e, size, args.replicates, seed=size + 1)
            rows.append(
                f"| {name} | {size} {unit} | {apart_result['coverage']:.3f} | "
                f"{equal_result['coverage']:.3f} | {apart_result['ranks']:.3f} | "
                f"{equal_result['fwer']:.3f} |"
            )
            print(rows[-1], flush=True)
    write_report(
        args.out,
        [
            "# Paired comparisons: coverage and family-wise error",
            "",
            f"`python benchmarks/paired.py --replicates {args.replicates}` "
            f"({time.perf_counter() - started:.0f} s).  4 models; each pair's interval is "
            "value ± t·stderr of the paired difference (cluster-robust by prompt for the "
            "accuracy; t of Student's t with clusters − 1 degrees of freedom); groups and "
            "ranks from Holm-adjusted p-values at α = 0.05.  Coverage "
            "counts every pair of every replicate; ranks: the share of replicates in which "
            "every model's rank interval holds its true rank; FWER: the share of replicates "
            "with every model equal in which some pair was separated (target ≤ 0.05).",
            "",
            "| metric | size | coverage, models apart | coverage, models equal | "
            "rank intervals hold (apart) | FWER (equal) |",
            "|---|---|---:|---:|---:|---:|",
            *rows,
            "",
        ],
    )


if __name__ == "__main__":
    main()
