"""The full N×N regret-correlation study (Rethinking RM Evaluation, arXiv 2410.05584, Table 4) at
benchmark scale.

10 RMs × 500 prompts × 16 responses: every RM in turn is the gold and the other 9 are
proxies; all 10 error metrics of Table 4 (on half of each prompt's responses) and the
best-of-8 NDR (on the other half) for each of the 90
(gold, proxy) pairs, then Kendall / Pearson / Spearman / MRR across proxies, each with a
200-replicate bootstrap over prompts that recomputes everything.  Target: < 30 s here.

    python benchmarks/bench_regret.py [--rms 10] [--prompts 500] [--responses 16]
                                      [--bootstrap 200] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from _smoke import parse_args

from rmaudit.metrics import regret_correlation


def synthetic_family(rms: int, prompts: int, responses: int, seed: int = 0):
    """Proxies of one latent quality with noise σ from 0.1 to 3 (Regressional Goodhart);
    every other RM is rounded to 0.1, so ties occur as with real, discretised scores."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(prompts, responses))
    family = {}
    for r, sigma in enumerate(np.linspace(0.1, 3.0, rms)):
        scores = quality + sigma * rng.normal(size=quality.shape)
        family[f"σ={sigma:.2f}"] = list(np.round(scores, 1) if r % 2 else scores)
    return family


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rms", type=int, default=10)
    parser.add_argument("--prompts", type=int, default=500)
    parser.add_argument("--responses", type=int, default=16)
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parse_args(
        parser, {"rms": 3, "prompts": 12, "responses": 4, "bootstrap": 3, "repeats": 1}
    )

    family = synthetic_family(args.rms, args.prompts, args.responses)
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        study = regret_correlation(family, bootstrap=args.bootstrap)
        times.append(time.perf_counter() - start)
    print(
        f"{args.rms} RMs × {args.prompts} prompts × {args.responses} responses, "
        f"{len(study.metrics)} error metrics, best-of-{study.n} NDR, "
        f"{args.bootstrap} bootstrap replicates"
    )
    print(
        f"best {min(times):.2f} s, median {float(np.median(times)):.2f} s over {args.repeats} "
        f"runs ({os.cpu_count()} CPUs, Python {platform.python_version()}, numpy "
        f"{np.__version__}, scipy {scipy.__version__})"
    )
    for metric in study.metrics:
        cell = study.correlation[("spearman", metric)]
        print(
            f"  {metric:>13} · Spearman  {cell.value:.3f} [{cell.ci_low:.3f}, {cell.ci_high:.3f}]"
        )


if __name__ == "__main__":
    main()
