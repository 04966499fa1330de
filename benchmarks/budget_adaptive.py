"""Adaptive judge samples: would stopping a label's sampling once its mean is precise enough
(``samples`` as a maximum, ``precision`` the target standard error) bias the metrics?

    python benchmarks/budget_adaptive.py [--replicates 30] [--smoke]

A simulated world of the helpful recipe's size (100 prompts × 256 responses): latent quality
q = μ + 1.2·N(0, 1), μ ~ N(5.5, 0.5²) per prompt; a judge sample is q + N(0, 1) rounded and
clipped to 1..10 (as rmaudit's simulated judge and an LLM judge's integer score); an honest RM
Y = q + N(0, 1).  The same judge draws are used by the fixed rule (10 samples) and by optional
stopping (after at least 2 samples, stop once sd/√n ≤ precision), so the difference is the
stopping rule's alone.  The rule ships only if its bias stays below a tenth of the metric's
reported standard error (docs/budget.md); the table says whether it does.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from _smoke import parse_args

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from rmaudit.metrics import best_of_n, pairwise_accuracy, reta

PROMPTS, RESPONSES, MAX_SAMPLES = 100, 256, 10


def labels(quality: np.ndarray, precision: float | None, rng: np.random.Generator):
    """(label means, samples used) under the fixed rule (``precision`` None) or stopping."""
    draws = np.clip(
        np.round(quality[..., None] + rng.normal(size=(*quality.shape, MAX_SAMPLES))), 1, 10
    )
    if precision is None:
        return draws.mean(-1), np.full(quality.shape, MAX_SAMPLES)
    n = np.arange(1, MAX_SAMPLES + 1)
    mean = np.cumsum(draws, -1) / n
    spread = (np.cumsum(draws**2, -1) - n * mean**2) / np.maximum(n - 1, 1)
    stop = (np.sqrt(np.maximum(spread, 0) / n) <= precision) & (n >= 2)
    stop[..., -1] = True
    used = stop.argmax(-1)
    return np.take_along_axis(mean, used[..., None], -1)[..., 0], used + 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=30)
    args = parse_args(parser, {"replicates": 1})
    rng = np.random.default_rng(0)
    found: dict[float | None, list] = {}
    for replicate in range(args.replicates):
        leniency = rng.normal(5.5, 0.5, (PROMPTS, 1))
        quality = leniency + 1.2 * rng.normal(size=(PROMPTS, RESPONSES))
        scores = list(quality + rng.normal(size=quality.shape))
        for precision in (None, 0.2, 0.3, 0.5):
            oracle, used = labels(quality, precision, np.random.default_rng(replicate))
            oracle = list(oracle)
            results = (
                reta(oracle, scores, 0.25, bootstrap=1),
                best_of_n(oracle, scores, 16, bootstrap=1),
                pairwise_accuracy(oracle, scores, bootstrap=1),
            )
            found.setdefault(precision, []).append(
                [x for r in results for x in (r.value, r.stderr)] + [used.mean()]
            )
    fixed = np.array(found[None])
    print(
        "| precision | judge samples per label "
        "| bias / SE: RETA(1/4) | BoN@16 | pairwise acc | ships |"
    )
    print("|---|---|---|---|---|---|")
    for precision in (0.2, 0.3, 0.5):
        stopped = np.array(found[precision])
        ratios = [(stopped[:, i] - fixed[:, i]).mean() / fixed[:, i + 1].mean() for i in (0, 2, 4)]
        ships = "yes" if max(abs(r) for r in ratios) < 0.1 else "no"
        print(
            f"| {precision} | {stopped[:, 6].mean():.2f} (of {MAX_SAMPLES}) | "
            + " | ".join(f"{r:+.3f}" for r in ratios)
            + f" | {ships} |"
        )


if __name__ == "__main__":
    main()
