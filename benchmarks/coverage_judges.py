"""Coverage of the judge-audit intervals (Wilson's at the effective count, with a t quantile)
on simulated pairwise judges with a known truth (docs/judges.md).

Each data set: ``prompts`` prompts with ``per_prompt`` pairs each.  A pair's margin is
d = μ + u_prompt + e_pair (u ~ N(0, σ_u²), shared by the prompt's pairs; e ~ N(0, σ_e²)).  Shown
chosen first, the judge says "first" with probability (1 − t)·clip(σ(d) + b), "second" with
(1 − t)·(1 − clip(σ(d) + b)), "tie" with t; shown rejected first, "first" with
(1 − t)·clip(σ(−d) + b) — b is its position bias on P(first), t its tie rate; then, with
probability u, a showing's reply has no verdict (unparsed), whatever it would have said.  The
truth of each metric is its expectation over this population (margins and verdicts), computed
from 2,000,000 margins with the verdict probabilities in closed form (an unparsed showing,
drawn apart from the verdict, changes none of them but the parse-failure rate, which is u).

The rare worlds (t and u of 0.001–0.005) measure the intervals at the edge: a rate observed at
0 (no tie, no parse failure in the sample) gets Wilson's interval at the actual count of pairs
(the effective count p(1 − p)/SE² is 0/0 there), not [0, 0].

    python benchmarks/coverage_judges.py [--datasets 1000] [--out FILE]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from _smoke import parse_args, print_table

from rmaudit.metrics.judging import judge_audit, random_order_accuracy

#: the metrics whose intervals are measured, as judge_audit names them, and reward-bench's
#: convention (one seeded random order per pair: random_order_accuracy)
METRICS = (
    "accuracy",
    "position_bias",
    "consistency",
    "tie_rate",
    "accuracy_chosen_first",
    "accuracy_rejected_first",
    "random_order",
    "parse_failure_rate",
)


@dataclass(frozen=True)
class World:
    name: str
    prompts: int
    per_prompt: int
    bias: float
    ties: float
    mu: float = 1.0
    sd_prompt: float = 1.0
    sd_pair: float = 0.7
    #: the probability that a showing's reply has no verdict
    unparsed: float = 0.0


WORLDS = (
    World("fair, 100 pairs", 100, 1, 0.0, 0.05),
    World("fair, LLMBar size (419 pairs)", 419, 1, 0.0, 0.05),
    World("first-biased +0.2, 419 pairs", 419, 1, 0.2, 0.05),
    World("first-biased +0.2, 30 prompts × 3 pairs", 30, 3, 0.2, 0.05),
    World("fair, RM-Bench-shaped (100 prompts × 9 pairs)", 100, 9, 0.0, 0.1),
    World("fair, 2% unparsed, 419 pairs", 419, 1, 0.0, 0.05, unparsed=0.02),
    World("rare: ties and unparsed 0.1%, 419 pairs", 419, 1, 0.0, 0.001, unparsed=0.001),
    World("rare: ties and unparsed 0.5%, 100 pairs", 100, 1, 0.0, 0.005, unparsed=0.005),
    World("rare: ties and unparsed 0.1%, 30 prompts × 3 pairs", 30, 3, 0.2, 0.001, unparsed=0.001),
)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def probabilities(world: World, d: np.ndarray) -> tuple[np.ndarray, ...]:
    """P(chosen preferred), P(rejected preferred) in each order, and the tie probability."""
    t = world.ties
    first_cf = np.clip(_sigmoid(d) + world.bias, 0, 1)  # chosen shown first
    first_rf = np.clip(_sigmoid(-d) + world.bias, 0, 1)  # rejected shown first
    return (
        (1 - t) * first_cf,
        (1 - t) * (1 - first_cf),
        (1 - t) * (1 - first_rf),
        (1 - t) * first_rf,
    )


def truth(world: World, rng: np.random.Generator) -> dict[str, float]:
    n = 2_000_000
    d = world.mu + rng.normal(0, world.sd_prompt, n) + rng.normal(0, world.sd_pair, n)
    t = world.ties
    cf_chosen, cf_rejected, rf_chosen, rf_rejected = probabilities(world, d)
    first = cf_chosen + rf_rejected  # expected "first" verdicts of a pair's two showings
    return {
        "accuracy": float(np.mean((cf_chosen + rf_chosen + t) / 2)),
        "accuracy_chosen_first": float(np.mean(cf_chosen + t / 2)),
        "accuracy_rejected_first": float(np.mean(rf_chosen + t / 2)),
        # either order with probability ½: the mean of the two orders' accuracies, an unparsed
        # showing counting 0 (reward-bench's convention)
        "random_order": (1 - world.unparsed) * float(np.mean((cf_chosen + rf_chosen + t) / 2)),
        "position_bias": float(np.mean(first) / (2 * (1 - t)) - 0.5),
        "consistency": float(np.mean(cf_chosen * rf_chosen + cf_rejected * rf_rejected + t * t)),
        "tie_rate": t,
        "parse_failure_rate": world.unparsed,
    }


def dataset(world: World, rng: np.random.Generator) -> tuple[list[str], list[str], list[int]]:
    prompt = np.repeat(np.arange(world.prompts), world.per_prompt)
    d = (
        world.mu
        + rng.normal(0, world.sd_prompt, world.prompts)[prompt]
        + rng.normal(0, world.sd_pair, prompt.size)
    )
    cf_chosen, cf_rejected, rf_chosen, rf_rejected = probabilities(world, d)
    u, v = rng.random(prompt.size), rng.random(prompt.size)
    cf = np.where(u < cf_chosen, "first", np.where(u < cf_chosen + cf_rejected, "second", "tie"))
    rf = np.where(v < rf_rejected, "first", np.where(v < rf_rejected + rf_chosen, "second", "tie"))
    cf = np.where(rng.random(prompt.size) < world.unparsed, "unparsed", cf)
    rf = np.where(rng.random(prompt.size) < world.unparsed, "unparsed", rf)
    return list(cf), list(rf), prompt.tolist()


def coverage(world: World, datasets: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    want = truth(world, rng)
    hits = dict.fromkeys(METRICS, 0)
    clustered = world.per_prompt > 1
    for _ in range(datasets):
        cf, rf, prompt = dataset(world, rng)
        clusters = prompt if clustered else None
        audit = judge_audit(cf, rf, clusters=clusters)
        estimates = {name: getattr(audit, name) for name in METRICS if name != "random_order"}
        seed_of_run = int(rng.integers(2**31))
        estimates["random_order"] = random_order_accuracy(
            cf, rf, seed=seed_of_run, clusters=clusters
        )
        for name in METRICS:
            low, high = estimates[name].ci
            hits[name] += low <= want[name] <= high
    return {name: hits[name] / datasets for name in METRICS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--out", help="write the Markdown table here too")
    args = parse_args(parser, {"datasets": 5})
    started = time.perf_counter()
    lines = [
        "| world | " + " | ".join(METRICS) + " |",
        "|---|" + "---:|" * len(METRICS),
    ]
    for i, world in enumerate(WORLDS):
        found = coverage(world, args.datasets, seed=i)
        lines.append(f"| {world.name} | " + " | ".join(f"{found[m]:.3f}" for m in METRICS) + " |")
        print(lines[-1], flush=True)
    print_table(lines, args.datasets, started, args.out)


if __name__ == "__main__":
    main()
