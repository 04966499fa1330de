"""Judges ranked in simulation with a known truth: the paired comparisons of `rmaudit compare`
and the leaderboard's letters and rank intervals (rmaudit.metrics.paired) on judges' accuracy
with both orders and a tie ½, many judges (and an RM) on the same pairs.

Each data set: ``prompts`` prompts with ``per_prompt`` pairs each; a pair's margin is
d = 1 + u_prompt + e_pair (u ~ N(0, 1), e ~ N(0, 0.7²)), shared by every model, so models err
on the same hard pairs.  Judge j, of sharpness s_j and position bias b_j, shown the chosen
answer first says "first" with probability (1 − t)·clip(σ(s_j·d) + b_j), "tie" with t; shown
it second, "first" with (1 − t)·clip(σ(−s_j·d) + b_j) — its verdicts in the two orders drawn
independently given d.  An RM (where a world has one) gets a pair right when d + ε > 0,
ε ~ N(0, σ_rm²), a tie never: its credit is 0 or 1, the judges' 0, ¼, ½, ¾ or 1.  The truth of
each model's accuracy is its expectation over 2,000,000 margins (verdict probabilities in
closed form).

Measured, per world, over the data sets:

* the paired difference's 95% interval (value ± t·stderr, clustered by prompt) holding the
  true difference — each pair's interval alone, and all of them at once (the printed
  intervals are each their own 95%, not adjusted for multiplicity: this is how far from
  simultaneous they are);
* the family-wise error of the letters: a Holm-separated pair whose true difference is 0 or
  of the other sign (Shaffer's directional error), which Holm keeps ≤ α;
* the rank intervals holding every model's true rank at once (models of equal truth may take
  any of their tied ranks).

    python benchmarks/coverage_judge_ranks.py [--datasets 1000] [--out FILE]
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

from rmaudit.metrics.judging import pair_credits  # noqa: E402
from rmaudit.metrics.paired import compare_models  # noqa: E402

TIES = 0.05


@dataclass(frozen=True)
class Judge:
    name: str
    sharpness: float
    bias: float = 0.0


@dataclass(frozen=True)
class World:
    name: str
    prompts: int
    per_prompt: int
    judges: tuple[Judge, ...]
    #: the noise of an RM among the models (None: judges only)
    rm_noise: float | None = None


def _equal(count: int) -> tuple[Judge, ...]:
    """Judges of one sharpness with position biases spread over −0.1 … +0.2 (the bias cancels
    over the two orders, up to clipping: their true accuracies differ by < 0.002)."""
    return tuple(Judge(f"J{i}", 1.0, bias) for i, bias in enumerate(np.linspace(-0.1, 0.2, count)))


WORLDS = (
    World("4 judges alike (biases −0.1 … +0.2), 419 pairs", 419, 1, _equal(4)),
    World(
        "6 judges, sharpness 0.5–2, 419 pairs",
        419,
        1,
        tuple(Judge(f"J{i}", s) for i, s in enumerate((0.5, 0.75, 1.0, 1.0, 1.5, 2.0))),
    ),
    World(
        "5 judges + an RM, 100 prompts × 9 pairs (clustered)",
        100,
        9,
        tuple(
            Judge(f"J{i}", s, b)
            for i, (s, b) in enumerate(((0.7, 0.0), (1.0, 0.2), (1.0, 0.0), (1.3, 0.1), (2.0, 0.0)))
        ),
        rm_noise=1.0,
    ),
    World("12 judges alike, 419 pairs", 419, 1, _equal(12)),
    World(
        "12 judges, sharpness 0.6–2.8, 419 pairs",
        419,
        1,
        tuple(Judge(f"J{i}", 0.6 + 0.2 * i, 0.1 * (i % 3)) for i in range(12)),
    ),
)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _first(judge: Judge, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P("first") shown chosen first, and shown rejected first (ties apart)."""
    return (
        (1 - TIES) * np.clip(_sigmoid(judge.sharpness * d) + judge.bias, 0, 1),
        (1 - TIES) * np.clip(_sigmoid(-judge.sharpness * d) + judge.bias, 0, 1),
    )


def truth(world: World, rng: np.random.Generator) -> dict[str, float]:
    d = 1.0 + rng.normal(0, 1.0, 2_000_000) + rng.normal(0, 0.7, 2_000_000)
    found = {}
    for judge in world.judges:
        cf_first, rf_first = _first(judge, d)
        rf_chosen = (1 - TIES) - rf_first  # shown second, the chosen answer preferred
        found[judge.name] = float(np.mean((cf_first + rf_chosen + TIES) / 2))
    if world.rm_noise is not None:
        from scipy.special import ndtr

        found["RM"] = float(np.mean(ndtr(d / world.rm_noise)))
    return found


def dataset(world: World, rng: np.random.Generator) -> tuple[dict[str, np.ndarray], list[int]]:
    prompt = np.repeat(np.arange(world.prompts), world.per_prompt)
    d = 1.0 + rng.normal(0, 1.0, world.prompts)[prompt] + rng.normal(0, 0.7, prompt.size)
    values = {}
    for judge in world.judges:
        cf_first, rf_first = _first(judge, d)
        u, v = rng.random(d.size), rng.random(d.size)
        cf = np.where(u < cf_first, "first", np.where(u < 1 - TIES, "second", "tie"))
        rf = np.where(v < rf_first, "first", np.where(v < 1 - TIES, "second", "tie"))
        values[judge.name] = pair_credits(list(cf), list(rf)).accuracy
    if world.rm_noise is not None:
        values["RM"] = (d + rng.normal(0, world.rm_noise, d.size) > 0).astype(float)
    return values, prompt.tolist()


def _true_ranks(want: dict[str, float], tolerance: float) -> dict[str, tuple[int, int]]:
    """Each model's plausible true ranks: models within ``tolerance`` of it tie with it."""
    return {
        m: (
            1 + sum(o > v + tolerance for o in want.values()),
            sum(o >= v - tolerance for o in want.values()),
        )
        for m, v in want.items()
    }


def measure(world: World, datasets: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    want = truth(world, rng)
    # truths closer than this (a few Monte Carlo errors of the 2,000,000-margin truth) are equal
    tolerance = 0.002
    ranks = _true_ranks(want, tolerance)
    covered = every = errors = ranked = intervals = 0
    for _ in range(datasets):
        values, prompt = dataset(world, rng)
        clusters = prompt if world.per_prompt > 1 else None
        c = compare_models(values, clusters=clusters)
        all_cover = True
        for pair in c.head_to_heads:
            true = want[pair.first] - want[pair.second]
            d = pair.difference
            hit = d.ci_low <= true <= d.ci_high
            covered += hit
            intervals += 1
            all_cover &= hit
        family_error = any(
            p.separable and want[p.first] - want[p.second] <= tolerance for p in c.head_to_heads
        )
        errors += family_error
        every += all_cover
        ranked += all(
            s.rank_low <= ranks[s.model][1] and ranks[s.model][0] <= s.rank_high
            for s in c.standings
        )
    return {
        "interval": covered / intervals,
        "all intervals": every / datasets,
        "letters' FWER": errors / datasets,
        "rank intervals": ranked / datasets,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--out", help="write the Markdown table here too")
    args = parse_args(parser, {"datasets": 3})
    started = time.perf_counter()
    columns = ("interval", "all intervals", "letters' FWER", "rank intervals")
    lines = ["| world | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    for i, world in enumerate(WORLDS):
        found = measure(world, args.datasets, seed=i)
        lines.append(f"| {world.name} | " + " | ".join(f"{found[c]:.3f}" for c in columns) + " |")
        print(lines[-1], flush=True)
    print_table(lines, args.datasets, started, args.out)


if __name__ == "__main__":
    main()
