"""The end-to-end sections of ``gpu_all.py``: ``rmaudit run`` on the benchmark's items, the
scoring checks' overhead (where rmaudit has them) and vLLM's classify path (where ``vllm``
imports; in a child process, so that its memory is the system's again before the next model).
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import bench_gpu

from rmaudit.default_plugins.huggingface import HFClassifier


def write_records(path: Path, records: list[dict]) -> None:
    """The HH records as the ``hh-pairs`` source reads them."""
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in records)


def run_e2e(
    folder: Path,
    data: Path,
    options: dict,
    repeats: int,
    gpu_only_s: float,
    run_args: tuple[str, ...] = (),
) -> dict:
    """Median wall time of ``rmaudit run`` scoring every response (process start, model load,
    storing included) and of its scores stage, each against the GPU-only pass."""
    runs = [
        bench_gpu.e2e(folder, data, options, {"defaults": ({}, True)}, run_args)[0]
        for _ in range(repeats)
    ]
    wall = statistics.median(run["wall_s"] for run in runs)
    stage = statistics.median(run["stage_s"] for run in runs)
    return {
        "responses": runs[0]["scored"],
        "wall_s": wall,
        "stage_s": stage,
        "gpu_only_s": gpu_only_s,
        "wall_vs_gpu_only": wall / gpu_only_s,
        "stage_vs_gpu_only": stage / gpu_only_s,
        "runs": runs,
    }


#: the flag that turns the scoring checks off, by its name in older rmaudit versions too
SKIP_FLAGS = ("--no-scoring-checks", "--no-preflight")


def skip_checks_flag() -> str | None:
    """The flag of this rmaudit that skips the scoring checks (issue 32: ``scoring_checks``
    on hf-classifier, and ``rmaudit run`` able to turn them off); None without them."""
    from rmaudit.cli.run import run

    flags = {flag for param in run.params for flag in getattr(param, "opts", ())}
    if not hasattr(HFClassifier, "scoring_checks"):
        return None
    return next((flag for flag in SKIP_FLAGS if flag in flags), None)


def scoring_checks_overhead(
    folder: Path, data: Path, options: dict, e2e: dict, repeats: int
) -> dict:
    """The scoring checks' cost: the wall time of ``rmaudit run`` (which checks the RM before
    scoring) against ``rmaudit run --no-scoring-checks``, medians of ``repeats``."""
    flag = skip_checks_flag()
    if flag is None:
        return {
            "available": False,
            "reason": "this rmaudit has no scoring checks (no hf-classifier scoring_checks "
            "and no rmaudit run --no-scoring-checks)",
        }
    off = run_e2e(folder, data, options, repeats, e2e["gpu_only_s"], (flag,))
    return {
        "available": True,
        "wall_with_s": e2e["wall_s"],
        "wall_without_s": off["wall_s"],
        "overhead_s": e2e["wall_s"] - off["wall_s"],
        "overhead_share": (e2e["wall_s"] - off["wall_s"]) / off["wall_s"],
        "stage_with_s": e2e["stage_s"],
        "stage_without_s": off["stage_s"],
    }


def served_parity(work: Path, budget_s: float) -> dict:
    """The served-RM parity run (``benchmarks/vllm_parity.py``: a checkpoint served by
    ``vllm serve`` audited beside itself in-process, ``rmaudit compare``'s parity section
    between them) where vLLM imports, within ``budget_s`` seconds; else why not."""
    if importlib.util.find_spec("vllm") is None:
        return {"available": False, "reason": "vllm does not import"}
    script = Path(__file__).with_name("vllm_parity.py")
    start = time.perf_counter()
    try:
        child = subprocess.run(
            [sys.executable, str(script), "--out", str(work)],
            capture_output=True,
            text=True,
            timeout=max(budget_s, 1),
        )
    except subprocess.TimeoutExpired:
        return {"available": False, "reason": f"past the time left ({budget_s:.0f} s)"}
    found = work / "vllm_parity.json"
    if child.returncode or not found.is_file():
        return {"available": False, "reason": (child.stderr.strip() or "no output")[-600:]}
    return {
        "available": True,
        "seconds": time.perf_counter() - start,
        "parity": json.loads(found.read_text(encoding="utf-8")),
    }


def vllm_classify(folder: Path, texts: list[str], tokens: int, repeats: int, work: Path) -> dict:
    """vLLM's ``classify`` on the same rendered texts, in a child process; or why not."""
    inputs = work / "vllm-texts.json"
    inputs.write_text(json.dumps(texts), encoding="utf-8")
    child = subprocess.run(
        [sys.executable, __file__, str(folder), str(inputs), str(repeats)],
        capture_output=True,
        text=True,
    )
    lines = child.stdout.strip().splitlines()
    if child.returncode or not lines:
        return {"available": False, "reason": (child.stderr.strip() or "no output")[-600:]}
    result = json.loads(lines[-1])
    if result.get("available"):
        result["tokens_per_s"] = tokens / result["median_s"]
    return result


def _vllm_child(folder: str, inputs: str, repeats: int) -> dict:
    try:
        import vllm
    except Exception as error:  # any failure to import is a reason to report, not to stop
        return {"available": False, "reason": f"vllm does not import: {error!r}"[:300]}
    texts = json.loads(Path(inputs).read_text(encoding="utf-8"))
    common = dict(model=folder, dtype="bfloat16", gpu_memory_utilization=0.5, seed=0)
    try:
        llm = vllm.LLM(runner="pooling", **common)
    except TypeError:  # vLLM before the runner argument
        llm = vllm.LLM(task="classify", **common)
    llm.classify(texts[:16])
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        llm.classify(texts)
        times.append(time.perf_counter() - start)
    return {
        "available": True,
        "version": vllm.__version__,
        "median_s": statistics.median(times),
        "times_s": times,
    }


if __name__ == "__main__":
    print(json.dumps(_vllm_child(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
