"""Coverage of a pairwise judge's position-bias interval (``rmaudit.metrics.position_bias``)
on simulated judges with a known truth, at the edge (a judge that is almost always consistent,
as GPT-4's LLMBar configurations are at consistency 0.90-1.0) and in the worlds of
``benchmarks/coverage_judges.py``.

A judge at the edge: each pair, with probability f, says "first" in both orders (it follows
the first position), with probability g "second" in both, and otherwise judges the pair the
same way in both orders (the chosen answer with probability 0.85); then each showing is a tie
with probability t.  Its position bias is (f − g)/2 whatever t.  Clustered worlds draw f's
pairs by prompt (a prompt's pairs share whether the judge follows).

Each row: the share of data sets whose 95% interval holds the truth (rmaudit's; and the one it
had before, Wilson's at the effective count of the ratio, near ½), whose value ± 1.96·± holds
it, the share rmaudit marks ≈ (fewer than 10 pairs follow a position) and the ± coverage of
the data sets it does not mark.

    python benchmarks/coverage_position_bias.py [--datasets 2000] [--out FILE]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from _smoke import parse_args, print_table
from coverage_judges import WORLDS, World
from coverage_judges import dataset as judges_dataset
from coverage_judges import truth as judges_truth

from rmaudit.metrics.judging import judge_audit, pair_credits, ratio_estimate


@dataclass(frozen=True)
class Edge:
    name: str
    prompts: int
    per_prompt: int
    follows_first: float
    follows_second: float = 0.0
    ties: float = 0.0


EDGES = (
    Edge("f = 3 %, 100 pairs", 100, 1, 0.03),
    Edge("f = 3 %, LLMBar's size (419 pairs)", 419, 1, 0.03),
    Edge("f = 1 %, 100 pairs", 100, 1, 0.01),
    Edge("f = 1 %, 419 pairs", 419, 1, 0.01),
    Edge("f = 0.2 %, 419 pairs", 419, 1, 0.002),
    Edge("f = 10 %, 100 pairs", 100, 1, 0.10),
    Edge("f = g = 2 %, 419 pairs", 419, 1, 0.02, 0.02),
    Edge("f = 3 %, t = 5 %, 419 pairs", 419, 1, 0.03, ties=0.05),
    Edge("f = 3 %, 30 prompts × 3 pairs, clustered", 30, 3, 0.03),
    Edge("f = 5 %, 100 prompts × 9 pairs, clustered", 100, 9, 0.05),
    Edge("consistent (f = 0), 419 pairs", 419, 1, 0.0),
)


def edge_dataset(edge: Edge, rng: np.random.Generator) -> tuple[list[str], list[str], list[int]]:
    prompt = np.repeat(np.arange(edge.prompts), edge.per_prompt)
    draw = rng.random(edge.prompts)[prompt] if edge.per_prompt > 1 else rng.random(prompt.size)
    first = draw < edge.follows_first
    second = ~first & (draw < edge.follows_first + edge.follows_second)
    right = rng.random(prompt.size) < 0.85
    cf = np.where(first, "first", np.where(second, "second", np.where(right, "first", "second")))
    rf = np.where(first, "first", np.where(second, "second", np.where(right, "second", "first")))
    cf = np.where(rng.random(prompt.size) < edge.ties, "tie", cf)
    rf = np.where(rng.random(prompt.size) < edge.ties, "tie", rf)
    return list(cf), list(rf), prompt.tolist()


def coverage(world: Edge | World, datasets: int, seed: int) -> tuple[float, ...]:
    """(interval, interval before, ±, marked ≈, ± where not marked) shares."""
    rng = np.random.default_rng(seed)
    if isinstance(world, Edge):
        true = (world.follows_first - world.follows_second) / 2
    else:
        true = judges_truth(world, rng)["position_bias"]
    hits = np.zeros(4)
    unmarked_hits = 0
    for _ in range(datasets):
        if isinstance(world, Edge):
            cf, rf, prompt = edge_dataset(world, rng)
        else:
            cf, rf, prompt = judges_dataset(world, rng)
        clusters = prompt if world.per_prompt > 1 else None
        bias = judge_audit(cf, rf, clusters=clusters).position_bias
        c = pair_credits(cf, rf)
        low, high = ratio_estimate(c.firsts, c.decisive, clusters).ci
        within = abs(bias.value - true) <= 1.96 * bias.stderr
        hits += (
            bias.ci[0] <= true <= bias.ci[1],
            low - 0.5 <= true <= high - 0.5,
            within,
            bias.few,
        )
        unmarked_hits += within and not bias.few
    unmarked = datasets - hits[3]
    return (*(hits / datasets), unmarked_hits / unmarked if unmarked else float("nan"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=2000)
    parser.add_argument("--out", help="write the Markdown table here too")
    args = parse_args(parser, {"datasets": 5})
    started = time.perf_counter()
    lines = [
        "| world | interval | interval before | ± | marked ≈ | ± where not marked |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    worlds = [*EDGES, *(w for w in WORLDS if w.ties >= 0.05)]
    for i, world in enumerate(worlds):
        found = coverage(world, args.datasets, seed=i)
        lines.append(f"| {world.name} | " + " | ".join(f"{x:.3f}" for x in found) + " |")
        print(lines[-1], flush=True)
    print_table(lines, args.datasets, started, args.out)


if __name__ == "__main__":
    main()
