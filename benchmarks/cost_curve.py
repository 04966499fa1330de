"""The main job's cost as the audit grows (issue 50, item 4).

The main job's recipe (``recipes/helpful.toml``: k-DPP on TF-IDF embeddings, 10 judge samples
per label, 5 simulated RMs, the same metrics) runs into a fresh DB at k prompts × N responses:
(100, 300, 1,000) × 256 and 100 × (64, 256, 1,024), each in an interpreter of its own, as a
user runs it.  The prompts are drawn from one pool of 3,000: the 308 built-in ones and
variants of them (a variant's key points are derived from its words, as any prompt's that is
not built in); the embedding keeps max(256, k rounded up to a power of two) dimensions, since
a k-DPP needs at least k.  Per run: wall and CPU time, peak resident memory, and each stage's
wall time as the run records it (``runs.timings``).

Then a least-squares fit of log(time) and log(memory) on log(k × N) gives each one's exponent
in the audit's size; the prompt sampling (embedding the pool and the k-DPP draw, made in the
run's plan and timed again here on its own) is also taken out, since its cost follows the pool
and k, not N.  From the memory fit: the largest audit (k × N) that fits in ``--memory-gib``.

    python benchmarks/cost_curve.py                  # the five sizes (several minutes)
    python benchmarks/cost_curve.py --smoke          # one tiny size, no fit
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
sys.path[:0] = [str(ROOT), str(REPO / "src")]
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads, as the command

import numpy as np  # noqa: E402
from _smoke import parse_args  # noqa: E402
from bench_rerun import interpreter_environment  # noqa: E402

SIZES = [(100, 64), (100, 256), (100, 1024), (300, 256), (1000, 256)]
POOL = 3000


def write_pool(path: Path, size: int) -> None:
    """The built-in prompts, then numbered variants of them, one JSON object a line."""
    from rmaudit.backends.simulated import builtin_prompts

    texts = [p["text"] for p in builtin_prompts()]
    variants = [
        f"{texts[i % len(texts)]} I am asking about case {i} (situation {i // len(texts)})."
        for i in range(size - len(texts))
    ]
    with path.open("w", encoding="utf-8") as out:
        for text in texts + variants:
            out.write(json.dumps({"prompt": text}) + "\n")


def recipe_for(k: int, n: int, pool: Path, folder: Path) -> Path:
    dims = dims_for(k)
    text = (REPO / "recipes" / "helpful.toml").read_text(encoding="utf-8")
    source = f'[prompts.source]\nname = "jsonl"\npath = "{pool}"'
    text = text.replace('[prompts.source]\nname = "simulated-helpful"', source)
    text = text.replace("k = 100", f"k = {k}").replace("dims = 256", f"dims = {dims}")
    text = text.replace("per_prompt = 256", f"per_prompt = {n}")
    report = [r for r in (4, 16, 64) if r <= n]
    text = text.replace("report = [4, 16, 64]", f"report = {report}")
    path = folder / f"k{k}-n{n}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def run(recipe: Path, db: Path, env: dict[str, str]) -> dict:
    import subprocess

    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "rmaudit", "run", str(recipe), "--db", str(db)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status):
        raise RuntimeError(f"{recipe.name} failed: {child.stderr.read().decode()[-600:]}")
    connection = sqlite3.connect(db)
    (timings,) = connection.execute("select timings from runs").fetchone()
    connection.close()
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_mib": usage.ru_maxrss / 1024,
        "stages": json.loads(timings),
        "load": os.getloadavg()[0],
    }


def sampling_cpu(pool: Path, k: int) -> float:
    """CPU seconds of the k-DPP draw the run's plan makes: the pool embedded, k drawn (one
    BLAS thread, as the command runs it)."""
    from rmaudit.benchmark.embedding import tfidf_lsa
    from rmaudit.benchmark.sampling import kdpp

    texts = [json.loads(line)["prompt"] for line in pool.read_text(encoding="utf-8").splitlines()]
    started = time.process_time()
    kdpp(tfidf_lsa(texts, dims=dims_for(k)), k, seed=0)
    return time.process_time() - started


def dims_for(k: int) -> int:
    return max(256, 1 << (k - 1).bit_length())


def fit(sizes: list[float], values: list[float]) -> tuple[float, float]:
    """(exponent, constant) of values ≈ constant · size^exponent, least squares in logs."""
    slope, intercept = np.polyfit(np.log(sizes), np.log(values), 1)
    return float(slope), float(math.exp(intercept))


def report(results: list[tuple[int, int, dict]], memory_gib: float) -> None:
    print(
        "\n| k × N | items | wall | CPU | of which sampling (CPU) | peak memory "
        "| stages (wall s) | load |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for k, n, r in results:
        stages = ", ".join(f"{name} {t:.1f}" for name, t in r["stages"].items() if t >= 0.05)
        print(
            f"| {k} × {n} | {k * n:,} | {r['wall']:.1f} s | {r['cpu']:.1f} s | "
            f"{r['sampling']:.1f} s | {r['peak_mib']:.0f} MiB | {stages} | {r['load']:.1f} |"
        )
    if len(results) < 2:
        return  # --smoke: one size, nothing to fit
    items = [float(k * n) for k, n, _ in results]
    lines = {
        "wall": [r["wall"] for _, _, r in results],
        "CPU": [r["cpu"] for _, _, r in results],
        "CPU less sampling": [r["cpu"] - r["sampling"] for _, _, r in results],
        "peak memory": [r["peak_mib"] for _, _, r in results],
    }
    print()
    for name, values in lines.items():
        exponent, _ = fit(items, values)
        per_item, fixed = np.polyfit(items, values, 1)
        unit = "MiB" if name == "peak memory" else "s"
        print(
            f"{name}: ∝ (k × N)^{exponent:.2f} over all sizes; linear fit {fixed:.1f} {unit} "
            f"+ {per_item * 1000:.3f} {unit} per 1,000 items; along each axis: "
            + "; ".join(local_exponents(results, values))
        )
    per_item, fixed = np.polyfit(items, lines["peak memory"], 1)
    if per_item <= 0:
        print("peak memory does not grow with the audit at these sizes")
        return
    largest = (memory_gib * 1024 - fixed) / per_item
    cpu_per_item, cpu_fixed = np.polyfit(items, lines["CPU less sampling"], 1)
    print(
        f"peak memory ≈ {fixed:.0f} MiB + {per_item * 1024:.2f} KiB per item: the largest audit "
        f"in {memory_gib:g} GiB is ≈ {largest:,.0f} items (k × N), e.g. "
        f"{largest / 256:,.0f} prompts × 256, ≈ {(cpu_fixed + cpu_per_item * largest) / 3600:.1f} "
        f"h of CPU at the linear fit, its k-DPP draw apart"
    )


def local_exponents(results: list[tuple[int, int, dict]], values: list[float]) -> list[str]:
    """log(v₂/v₁) / log(w₂/w₁) between neighbouring sizes that share k (N grows) or N."""
    out = []
    for axis, grows in ((0, "N"), (1, "k")):  # hold k (position 0) or N (position 1)
        for held in sorted({r[axis] for r in results}):
            points = sorted(
                (r[1 - axis], v, r[0] * r[1])
                for r, v in zip(results, values, strict=True)
                if r[axis] == held
            )
            for (a, va, ia), (b, vb, ib) in zip(points, points[1:], strict=False):
                out.append(f"{grows} {a}→{b}: {math.log(vb / va) / math.log(ib / ia):.2f}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory-gib", type=float, default=24.0)
    args = parse_args(parser, {})
    sizes = [(4, 8)] if args.smoke else SIZES
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pool = folder / "pool.jsonl"
        write_pool(pool, 40 if args.smoke else POOL)
        env = {**interpreter_environment("cached", folder), "PYTHONPATH": str(REPO / "src")}
        results = []
        for k, n in sizes:
            recipe = recipe_for(k, n, pool, folder)
            measured = run(recipe, folder / f"{recipe.stem}.db", env)
            measured["sampling"] = sampling_cpu(pool, k)
            results.append((k, n, measured))
            print(f"  {k} × {n}: {results[-1][2]['wall']:.1f} s", flush=True)
    report(results, args.memory_gib)


if __name__ == "__main__":
    main()
