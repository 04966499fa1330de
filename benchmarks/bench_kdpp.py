"""Time exact k-DPP sampling of k = 100 prompts from a pool of 100,000 × 384-dim embeddings.

Run: ``python benchmarks/bench_kdpp.py`` (from the repository root; ``src/`` is put on the path
when the package is not installed).  Embeddings are seeded Gaussian rows, the size of a
sentence-transformers (MiniLM) embedding of a large prompt pool.  Target: under 10 s on a
2-core machine.  Prints the best and median of the timed repeats.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from _smoke import parse_args

try:
    from rmaudit.benchmark.sampling import kdpp
except ImportError:  # running from a checkout without an install
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from rmaudit.benchmark.sampling import kdpp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="pool size (rows)")
    parser.add_argument("--dims", type=int, default=384, help="embedding dimensions")
    parser.add_argument("--k", type=int, default=100, help="prompts to sample")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats (seeds 0..r-1)")
    args = parse_args(parser, {"n": 500, "dims": 16, "k": 5, "repeats": 1})

    embeddings = np.random.default_rng(12345).standard_normal((args.n, args.dims))
    timings = []
    for seed in range(args.repeats):
        start = time.perf_counter()
        picked = kdpp(embeddings, args.k, seed=seed)
        timings.append(time.perf_counter() - start)
        assert picked.size == args.k and np.unique(picked).size == args.k

    print(
        f"k-DPP: k={args.k} from n={args.n:,} x d={args.dims}: "
        f"best {min(timings):.2f} s, median {statistics.median(timings):.2f} s "
        f"over {args.repeats} runs (numpy {np.__version__})"
    )


if __name__ == "__main__":
    main()
