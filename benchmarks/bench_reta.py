"""RETA curve, exact closed form vs the paper's Monte-Carlo resampling.

The workload is the paper's benchmark shape (RETA paper, arXiv 2504.14838, Sec. 4: 100 prompts × 256
responses) scored by 10 reward models: one 15-point RETA curve per RM, averaging every n in [3
N^(2/3), 5 N^(2/3)] (81 sizes for N = 256).  The exact timing starts from empty weight caches, so it
includes building the positional weights.  Targets: exact < 1 s in all, and at least 100× faster
than Monte Carlo.

    python benchmarks/bench_reta.py [--rms 10] [--prompts 100] [--responses 256] [--resamples 200]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from _smoke import parse_args

from rmaudit.metrics import _positional, reta_curve, reta_n_range


def simulated_benchmark(rms: int, prompts: int, responses: int, seed: int = 0):
    """Oracle scores on a 1-10 scale in steps of 0.1 (an average of 10 judge samples, as in
    the paper's App. B.5) and RMs of decreasing fidelity; every other RM is rounded, so RM
    ties occur."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(prompts, responses))
    oracle = np.clip(np.round(5.5 + 1.5 * quality, 1), 1.0, 10.0)
    rm_scores = []
    for r in range(rms):
        fidelity = 0.9 - 0.08 * r
        scores = fidelity * quality + np.sqrt(1 - fidelity**2) * rng.normal(size=quality.shape)
        rm_scores.append(np.round(scores, 1) if r % 2 else scores)
    return list(oracle), [list(scores) for scores in rm_scores]


def clear_weight_caches() -> None:
    _positional.reta_weights.cache_clear()
    _positional._log_factorials.cache_clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rms", type=int, default=10)
    parser.add_argument("--prompts", type=int, default=100)
    parser.add_argument("--responses", type=int, default=256)
    parser.add_argument("--resamples", type=int, default=200)
    args = parse_args(parser, {"rms": 2, "prompts": 4, "responses": 16, "resamples": 3})

    oracle, rm_scores = simulated_benchmark(args.rms, args.prompts, args.responses)

    clear_weight_caches()
    start = time.perf_counter()
    exact = [reta_curve(oracle, scores) for scores in rm_scores]
    exact_seconds = time.perf_counter() - start

    start = time.perf_counter()
    exact_warm = [reta_curve(oracle, scores) for scores in rm_scores]
    warm_seconds = time.perf_counter() - start

    start = time.perf_counter()
    mc = [
        reta_curve(oracle, scores, method="mc", resamples=args.resamples, seed=r)
        for r, scores in enumerate(rm_scores)
    ]
    mc_seconds = time.perf_counter() - start

    assert all(np.array_equal(a.value, b.value) for a, b in zip(exact, exact_warm, strict=True))
    # A sanity check that both estimate the same thing (the MC noise here is of order 1e-4).
    gap = max(float(np.max(np.abs(m.value - e.value))) for m, e in zip(mc, exact, strict=True))

    print(
        f"RETA curve (15 η, {len(reta_n_range(args.responses))} subset sizes n averaged): "
        f"{args.rms} RMs × {args.prompts} prompts × {args.responses} responses, "
        f"{args.resamples} MC resamples per n"
    )
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, numpy {np.__version__}"
    )
    print()
    print(f"| {'method':<28} | {'seconds':>9} |")
    print(f"|{'-' * 30}|{'-' * 11}|")
    print(f"| {'exact (cold weight cache)':<28} | {exact_seconds:9.3f} |")
    print(f"| {'exact (warm weight cache)':<28} | {warm_seconds:9.3f} |")
    print(f"| {'Monte Carlo':<28} | {mc_seconds:9.3f} |")
    print(f"| {'speed-up, MC / exact cold':<28} | {mc_seconds / exact_seconds:8.0f}× |")
    print()
    print(f"largest |MC − exact| over RMs and η: {gap:.4f}")


if __name__ == "__main__":
    main()
