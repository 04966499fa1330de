"""The section score's paired comparison in simulation with known truth: how often the paired
difference's interval (value ± t·stderr, the stratified standard error of
rmaudit.metrics.paired.stratified_stderr with Student's t at pairs − subsets degrees of
freedom) holds the true difference, how often the rank intervals hold every true rank, and,
with every model equal, how often the groups separate some pair (the family-wise error).
Beside it, the same interval without strata (cluster-robust about the overall mean), as
rmaudit would have it without them.

    python benchmarks/paired_sections.py [--replicates 1000] [--out benchmarks/paired_sections.md]

World (RewardBench's shape): the 23 subsets of RewardBench's Chat, Chat Hard, Safety and
Reasoning sections with the preset's weights (rmaudit.metrics.REWARDBENCH), one pair a prompt;
n_k pairs in subset k (all of RewardBench's at ``full``, a tenth at ``tenth``).  Pair i of
subset k is right for model m when μ_mk + b_k + u_i + e_im > 0, with b_k ~ N(0, 0.6²) the
subset's difficulty, u ~ N(0, 0.8²) the pair's (shared by the models), e ~ N(0, 1); μ_mk =
μ_m + τ_mk, τ ~ N(0, 0.3²) a model's strength that varies by subset (drawn once), so the
models' differences vary across subsets, as real RMs' do.  μ = (0.3, 0.2, 0.1, 0) apart; equal:
μ = τ = 0.  The truth is Σ_k v_k Φ((μ_mk + b_k) / √1.64), v_k the subset's weight in the score.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import ndtr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _smoke import parse_args, write_report  # noqa: E402

from rmaudit.metrics import MetricResult, section_score  # noqa: E402
from rmaudit.metrics.paired import compare_models  # noqa: E402
from rmaudit.metrics.preference.sections import REWARDBENCH  # noqa: E402

MODELS = ("A", "B", "C", "D")
#: RewardBench's prompt counts (math-prm: its 447 prompts; the preset weighs it as 984)
COUNTS = {s: int(n) for sub in list(REWARDBENCH.sections.values())[:4] for s, n in sub.items()}
COUNTS["math-prm"] = 447


def coefficients(sizes: dict[str, int]) -> dict[str, float]:
    """Each subset's weight in the section score: the score with its accuracy 1, others 0."""

    def result(value: float, size: int) -> MetricResult:
        return MetricResult(value, 0.0, value, value, np.zeros(size))

    return {
        k: section_score(
            {s: result(float(s == k), n) for s, n in sizes.items()}, "rewardbench"
        ).score
        for k in sizes
    }


class World:
    def __init__(self, mu: tuple[float, ...], tau: float, share: float, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.sizes = {k: max(3, round(n * share)) for k, n in COUNTS.items()}
        self.v = coefficients(self.sizes)
        self.b = {k: rng.normal(0, 0.6) for k in COUNTS}
        self.mu = {m: {k: mu_m + rng.normal(0, tau) * (tau > 0) for k in COUNTS}
                   for m, mu_m in zip(MODELS, mu, strict=True)}  # fmt: skip
        self.truth = {
            m: sum(self.v[k] * float(ndtr((self.mu[m][k] + self.b[k]) / np.sqrt(1.64)))
                   for k in COUNTS)
            for m in MODELS
        }  # fmt: skip
        self.strata = [k for k, n in self.sizes.items() for _ in range(n)]
        total = len(self.strata)
        self.scale = np.array([total * self.v[k] / self.sizes[k] for k in self.strata])

    def draw(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        base = np.array([self.b[k] for k in self.strata]) + rng.normal(0, 0.8, self.scale.size)
        return {
            m: self.scale
            * (np.array([self.mu[m][k] for k in self.strata]) + base
               + rng.normal(size=base.size) > 0)
            for m in MODELS
        }  # fmt: skip


def measure(world: World, replicates: int, seed: int, stratified: bool) -> dict:
    rng = np.random.default_rng(seed)
    covered = pairs = any_separated = ranks_held = 0
    order = sorted(MODELS, key=lambda m: -world.truth[m])
    for _ in range(replicates):
        c = compare_models(world.draw(rng), strata=world.strata if stratified else None)
        for p in c.head_to_heads:
            true = world.truth[p.first] - world.truth[p.second]
            covered += p.difference.ci_low <= true <= p.difference.ci_high
            pairs += 1
        any_separated += any(p.separable for p in c.head_to_heads)
        ranks_held += all(
            s.rank_low <= order.index(s.model) + 1 <= s.rank_high for s in c.standings
        )
    return {
        "coverage": covered / pairs,
        "fwer": any_separated / replicates,
        "ranks": ranks_held / replicates,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("paired_sections.md"))
    args = parse_args(parser, {"replicates": 3, "out": None})
    rows = []
    started = time.perf_counter()
    for name, share in (("tenth", 0.1), ("full", 1.0)):
        apart = World((0.3, 0.2, 0.1, 0.0), 0.3, share, seed=7)
        equal = World((0.0,) * 4, 0.0, share, seed=7)
        pairs = len(apart.strata)
        for stratified in (True, False):
            a = measure(apart, args.replicates, seed=1, stratified=stratified)
            e = measure(equal, args.replicates, seed=2, stratified=stratified)
            rows.append(
                f"| {name}: {pairs:,} pairs | {'by subset' if stratified else 'none'} | "
                f"{a['coverage']:.3f} | {e['coverage']:.3f} | {a['ranks']:.3f} | "
                f"{e['fwer']:.3f} |"
            )
            print(rows[-1], flush=True)
    write_report(
        args.out,
        [
            "# The section score's paired comparison: coverage and family-wise error",
            "",
            f"`python benchmarks/paired_sections.py --replicates {args.replicates}` "
            f"({time.perf_counter() - started:.0f} s).  4 models on RewardBench-shaped data "
            "(see the script); each pair's interval is value ± t·stderr of the paired "
            "difference; groups and ranks from Holm-adjusted p-values at α = 0.05.  Strata "
            "'by subset' is what rmaudit uses; 'none' is shown for comparison.  Coverage "
            "counts every pair of every replicate; ranks: the share of replicates in which "
            "every model's rank interval holds its true rank (models apart); FWER: the share "
            "of replicates with every model equal in which some pair was separated (target "
            "≤ 0.05).",
            "",
            "| data | strata | coverage, models apart | coverage, models equal | "
            "rank intervals hold (apart) | FWER (equal) |",
            "|---|---|---:|---:|---:|---:|",
            *rows,
            "",
        ],
    )


if __name__ == "__main__":
    main()
