"""RewardBench 2's intervals in simulation with a known truth: how often each number's 95%
interval, as ``rmaudit.metrics.rewardbench2`` computes it, holds the population value, and how
often the paired difference between two models holds the true difference.

    python benchmarks/rewardbench2.py [--datasets 1000] [--out benchmarks/rewardbench2.md]

World (RewardBench 2's shape): best-of-4 subsets of 475, 160, 183, 450 and 495 rows (1 correct
and 3 incorrect completions), and Ties with 51 questions (the real subset's 102 rows as one ref
and one tied row a question; its completion counts are not in this repository, so here a ref
group has 1 correct and 6 incorrect answers, a tied group 4 correct and 6 incorrect).  Each
completion has a latent quality: z ~ N(0, 1) for an incorrect one, u_r + z for a correct one,
u_r ~ N(0, 1) the row's difficulty (a Ties question's, shared by its ref and tied rows; a tied
group's correct answers spread with SD 0.5 around it).  A model scores latent + ε, ε ~
N(0, 0.7²), plus its advantage δ on a correct completion; a *rating* model rounds
5.5 + 1.5·score to an integer in 1…10 (many ties, as a judge's ratings have).  Models differ in
δ (best-of-4, Ties): weak (0.3, 2), medium (1.2, 3.5), strong (3, 5) — Ties about 0.3, 0.6,
0.85; paired comparisons pit δ against δ − 0.3 on the same latent qualities.  The truth is each
number on 400,000 rows (Ties: questions), computed here with numpy apart from rmaudit.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _smoke import parse_args, write_report  # noqa: E402

from rmaudit.metrics.paired import paired_difference  # noqa: E402
from rmaudit.metrics.rewardbench2 import (  # noqa: E402
    RewardBench2Score,
    ScoredRow,
    rewardbench2_score,
)

SIZES = {"Factuality": 475, "Precise IF": 160, "Math": 183, "Safety": 450, "Focus": 495}
QUESTIONS = 51
REF = (1, 6)
TIED = (4, 6)
#: a model's advantage δ on the best-of-4 subsets' correct completions, and on Ties' ones
STRENGTHS = {"weak": (0.3, 2.0), "medium": (1.2, 3.5), "strong": (3.0, 5.0)}
NOISE = 0.7
TRUTH_SIZE = 400_000


@dataclass(frozen=True)
class Latent:
    """One data set's completions: each subset's (rows × completions) latent qualities, the
    first column the correct one; Ties' ref and tied groups (correct columns first)."""

    subsets: dict[str, np.ndarray]
    ref: np.ndarray
    tied: np.ndarray


def latent(rng: np.random.Generator, sizes: dict[str, int], questions: int) -> Latent:
    def groups(n: int, shape: tuple[int, int], difficulty: np.ndarray, spread: float):
        correct = difficulty[:, None] + spread * rng.normal(size=(n, shape[0]))
        return np.concatenate([correct, rng.normal(size=(n, shape[1]))], axis=1)

    subsets = {}
    for name, n in sizes.items():
        values = rng.normal(size=(n, 4))
        values[:, 0] += rng.normal(size=n)
        subsets[name] = values
    u = rng.normal(size=questions)
    return Latent(subsets, groups(questions, REF, u, 1.0), groups(questions, TIED, u, 0.5))


def scored(
    world: Latent, delta: tuple[float, float], rating: bool, rng: np.random.Generator
) -> Latent:
    def score(values: np.ndarray, correct: int, advantage: float) -> np.ndarray:
        out = values + rng.normal(0, NOISE, values.shape)
        out[:, :correct] += advantage
        return np.clip(np.round(5.5 + 1.5 * out), 1, 10) if rating else out

    return Latent(
        {name: score(v, 1, delta[0]) for name, v in world.subsets.items()},
        score(world.ref, REF[0], delta[1]),
        score(world.tied, TIED[0], delta[1]),
    )


def weaker(delta: tuple[float, float]) -> tuple[float, float]:
    return delta[0] - 0.3, delta[1] - 0.3


def truth(model: Latent) -> dict[str, float]:
    """Each number computed directly with numpy (no rmaudit code)."""
    out = {}
    for name, s in model.subsets.items():
        top = s.max(axis=1)
        out[name] = float(np.mean((s[:, 0] == top) / (s == top[:, None]).sum(axis=1)))

    def stats(g: np.ndarray, correct: int):
        c, i = g[:, :correct], g[:, correct:]
        return c.min(1) - i.max(1), c.max(1) - c.min(1)

    gap_ref, _ = stats(model.ref, REF[0])
    gap_tied, spread = stats(model.tied, TIED[0])
    worst = np.minimum(gap_ref, gap_tied)
    with np.errstate(divide="ignore", invalid="ignore"):
        margin = np.nan_to_num(np.tanh(worst / spread - 1), nan=0.0)
    out["Ties"] = float(
        0.3 * np.mean(gap_tied > 0)
        + 0.3 * np.mean(gap_ref > 0)
        + 0.2 * np.mean(gap_tied > spread)
        + 0.2 * np.mean(worst > spread)
        + 0.01 * np.mean(margin)
    )
    out["final"] = float(np.mean(list(out.values())))
    return out


def rows(model: Latent) -> tuple[ScoredRow, ...]:
    found = []
    for name, s in model.subsets.items():
        found += [ScoredRow(f"{name} {i}", name, str(i), r[:1], r[1:]) for i, r in enumerate(s)]
    for kind, groups, correct in (("ref", model.ref, REF[0]), ("tied", model.tied, TIED[0])):
        found += [
            ScoredRow(f"{kind} {q}", "Ties", f"{kind}:{q}", g[:correct], g[correct:])
            for q, g in enumerate(groups)
        ]
    return tuple(found)


def numbers(score: RewardBench2Score) -> dict[str, tuple[float, float, float, float]]:
    """(value, stderr, ci_low, ci_high) of every number."""
    out = {s.subset: (s.value, s.stderr, s.ci_low, s.ci_high) for s in score.subsets}
    f = score.final
    assert f is not None
    out["final"] = (f.value, f.stderr, f.ci_low, f.ci_high)
    return out


def paired(a: RewardBench2Score, b: RewardBench2Score, name: str):
    if name == "final":
        assert a.final is not None and b.final is not None
        units, strata = a.final.units, a.final.strata
        other = b.final.units
        keys = sorted(units)
        return paired_difference(
            [units[k] for k in keys], [other[k] for k in keys], strata=[strata[k] for k in keys]
        )
    (sa,) = [s for s in a.subsets if s.subset == name]
    (sb,) = [s for s in b.subsets if s.subset == name]
    keys = sorted(sa.units)
    return paired_difference([sa.units[k] for k in keys], [sb.units[k] for k in keys])


def truths(strength: str, rating: bool, size: int) -> tuple[dict[str, float], dict[str, float]]:
    """The population values of the model and of the one 0.3 weaker."""
    delta = STRENGTHS[strength]
    big = latent(np.random.default_rng(99), {k: size for k in SIZES}, size)
    return (
        truth(scored(big, delta, rating, np.random.default_rng(100))),
        truth(scored(big, weaker(delta), rating, np.random.default_rng(101))),
    )


def measure(
    strength: str, rating: bool, datasets: int, scale: float, seed: int, truth_size: int
) -> dict:
    delta = STRENGTHS[strength]
    sizes = {k: max(8, round(n * scale)) for k, n in SIZES.items()}
    questions = max(8, round(QUESTIONS * scale))
    truth_a, truth_b = truths(strength, rating, truth_size)
    rng = np.random.default_rng(seed)
    names = [*SIZES, "Ties", "final"]
    hits = {n: np.zeros(3) for n in names}  # ±, interval, paired difference
    marked = 0  # data sets whose Ties ± rmaudit marks ≈
    for _ in range(datasets):
        world = latent(rng, sizes, questions)
        a = rewardbench2_score(
            rows(scored(world, delta, rating, rng)), seed=int(rng.integers(1 << 30))
        )
        b = rewardbench2_score(rows(scored(world, weaker(delta), rating, rng)))
        found = numbers(a)
        marked += any(s.approximate for s in a.subsets if s.subset == "Ties")
        for n in names:
            value, stderr, low, high = found[n]
            true = truth_a[n]
            d = paired(a, b, n)
            hits[n] += (
                abs(value - true) <= 1.96 * stderr,
                low <= true <= high,
                d.ci_low <= truth_a[n] - truth_b[n] <= d.ci_high,
            )
    return {n: hits[n] / datasets for n in names} | {"truth": truth_a, "marked": marked / datasets}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--truth", type=int, default=TRUTH_SIZE, help="rows for the truths")
    parser.add_argument(
        "--scales", type=float, nargs="+", default=[1.0], help="sizes, × RewardBench 2's"
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("rewardbench2.md"))
    args = parse_args(parser, {"datasets": 2, "truth": 2000, "scales": [1.0], "out": None})
    started = time.perf_counter()
    lines = []
    names = [*SIZES, "Ties", "final"]
    for scale in args.scales:
        label = "RewardBench 2's size" if scale == 1 else f"{scale:g} × its size"
        for rating in (False, True):
            for strength in STRENGTHS:
                found = measure(strength, rating, args.datasets, scale, len(lines), args.truth)
                kind = "ratings 1-10" if rating else "continuous"
                cells = " | ".join(
                    f"{found[n][0]:.3f} / {found[n][1]:.3f} / {found[n][2]:.3f}" for n in names
                )
                truths = ", ".join(f"{n} {found['truth'][n]:.3f}" for n in ("Ties", "final"))
                lines.append(
                    f"| {label} | {kind}, {strength} ({truths}) | {cells} | {found['marked']:.2f} |"
                )
                print(lines[-1], flush=True)
    header = " | ".join(names)
    write_report(
        args.out,
        [
            "# RewardBench 2's intervals: coverage in simulation",
            "",
            f"`python benchmarks/rewardbench2.py --datasets {args.datasets}"
            + ("" if args.scales == [1.0] else f" --scales {' '.join(map(str, args.scales))}")
            + "` "
            f"({time.perf_counter() - started:.0f} s on the 2-core development machine).  "
            "Each cell: the share of simulated data sets in which value ± 1.96·± holds the "
            "population value / the 95% interval holds it / the paired difference's interval "
            "against a model 0.3 weaker holds the true difference (target 0.93-0.97).  The "
            "last column: the share of data sets in which rmaudit marked the Ties ± "
            "approximate (n·min(value, 1 − value) < 10 over its questions).  The world is in "
            "the script's docstring; the truths are the population values of the stronger "
            "model.",
            "",
            f"| size | model | {header} | Ties ± marked ≈ |",
            "|---|---|" + "---:|" * (len(names) + 1),
            *lines,
            "",
        ],
    )


if __name__ == "__main__":
    main()
