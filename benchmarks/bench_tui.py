"""How fast the TUI's queries and first screen are on a big audit (issue 3: 1,000,000 RM scores).

Builds a synthetic rmaudit DB — by default 1,000 prompts × 250 responses, 4 RMs = 1,000,000
stored RM scores, with metrics computed by the built-in metric plugins — straight through
the store's batch writes (the runner's simulated world would take minutes to write that much text),
then times, on a fresh read-only connection each:

* the leaderboard: open the DB, list the runs, load the run's metrics and curves;
* the failure table for one RM (per-prompt RETA, and the oracle gap from all of its scores);
* one prompt's detail (250 responses, two RMs);
* ``App.run_test()`` until the leaderboard table is filled.

Target: the leaderboard appears in under 1 s.

    python benchmarks/bench_tui.py [--prompts 1000] [--responses 250] [--rms 4] [--db PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import platform
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from _smoke import parse_args

from rmaudit.components import MetricInputs
from rmaudit.recipe.validation import component_spec
from rmaudit.results.browse import prompt_detail, prompt_failures
from rmaudit.results.run_index import list_runs, open_for_reading
from rmaudit.results.summary import load_summary
from rmaudit.run.metrics import result_rows
from rmaudit.store import Store
from rmaudit.store.item_records import StoredLabel, StoredPrompt, StoredResponse
from rmaudit.store.metric_results import MetricResults
from rmaudit.store.records import BenchmarkRow, RunRewardModel, RunRow

WORDS = (
    "the quick answer covers each key point with care and a short example so a reader "
    "can follow every step without guessing what comes next"
).split()


def key(*parts: object) -> str:
    """A 20-hex-digit key like the store's content keys (the same B-tree shape)."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:20]


def build_db(path: Path, prompts: int, responses: int, rms: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    store = Store.open(path)
    selection, policy, oracle = key("selection"), key("policy"), key("oracle")
    bench, run = key("benchmark"), key("run")
    rm_keys = [key("rm", i) for i in range(rms)]
    prompt_ids = [key("prompt", q) for q in range(prompts)]
    quality = rng.normal(size=(prompts, responses))
    oracle_scores = np.clip(np.round(5.5 + 1.5 * quality, 1), 1.0, 10.0)
    fidelity = np.linspace(0.9, 0.4, rms)
    rm_scores = [
        f * quality + np.sqrt(1 - f * f) * rng.normal(size=quality.shape) for f in fidelity
    ]
    with store.transaction():
        store.runs.start(
            RunRow(
                id=run,
                title="synthetic 1M-score audit",
                recipe_path="bench.toml",
                recipe_text=None,
                recipe={},
                benchmark_id=bench,
                pair_set_key=None,
                status="done",
                simulated=True,
                created_at="2025-01-01T00:00:00+00:00",
                finished_at=None,
                rmaudit_version=None,
                timings=None,
                error=None,
            ),
            [RunRewardModel(f"rm-{i}", k) for i, k in enumerate(rm_keys)],
        )
        store.items.add_benchmark(
            BenchmarkRow(
                id=bench,
                title="synthetic",
                selection_key=selection,
                policy_key=policy,
                per_prompt=responses,
                oracle_key=oracle,
                simulated=True,
                origin="built",
                created_at="2025-01-01T00:00:00+00:00",
            )
        )
        store.items.add_prompts(
            StoredPrompt(
                p,
                f"synthetic prompt {q}: explain topic {q % 37} step by step",
                {"topic": f"topic-{q % 12}"},
            )
            for q, p in enumerate(prompt_ids)
        )
        store.items.add_selection(selection, prompt_ids)
    with store.grouped_writes():
        for q, p in enumerate(prompt_ids):  # per prompt, as the runner writes its batches
            ids = [key("response", p, i) for i in range(responses)]
            lengths = rng.integers(20, 120, size=responses)
            with store.transaction():
                store.items.add_responses(
                    StoredResponse(
                        r, p, policy, i, " ".join(WORDS[j % len(WORDS)] for j in range(n)), {}
                    )
                    for i, (r, n) in enumerate(zip(ids, lengths, strict=True))
                )
                store.items.add_labels(
                    StoredLabel(r, oracle, score, (), None, None, None)
                    for r, score in zip(ids, oracle_scores[q].tolist(), strict=True)
                )
                for rm_key, scores in zip(rm_keys, rm_scores, strict=True):
                    store.items.add_scores(rm_key, dict(zip(ids, scores[q].tolist(), strict=True)))
    specs = [
        component_spec("metric", name, field=f"metrics[{i}]", file=None, base_dir=None)
        for i, name in enumerate(("reta", "reta-curve", "best-of-n", "pairwise-accuracy"))
    ]
    results = []
    for rm_key, scores in zip(rm_keys, rm_scores, strict=True):
        inputs = MetricInputs(tuple(prompt_ids), tuple(oracle_scores), tuple(scores))
        for spec in specs:
            output = spec.build().compute(inputs)
            rows = result_rows(  # as the run writes them
                run, tuple(prompt_ids), rm_key, spec, output
            )
            results.append(
                MetricResults(rm_key, spec.label, None, "2025-01-01T00:00:00+00:00", rows)
            )
    store.runs.finish(run, results, {}, "2025-01-01T00:00:00+00:00")
    store.close()


def timed(function, repeats: int = 5) -> tuple[float, float]:
    """(best, median) seconds over ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def leaderboard(path: Path) -> None:
    store = open_for_reading(path)
    load_summary(store, list_runs(store)[0].id)
    store.close()


def failures(path: Path) -> None:
    store = open_for_reading(path)
    summary = load_summary(store, list_runs(store)[0].id)
    prompt_failures(store, summary, summary.reward_models[0][1])
    store.close()


def detail(path: Path) -> None:
    store = open_for_reading(path)
    summary = load_summary(store, list_runs(store)[0].id)
    prompt_id = store.items.selection(summary.benchmark.selection_key)[-1]
    prompt_detail(store, summary.benchmark, prompt_id, [k for _, k in summary.reward_models[:2]])
    store.close()


def tui_mount(path: Path) -> None:
    from rmaudit.tui.app import AuditApp
    from rmaudit.tui.screens.leaderboard import LeaderboardScreen

    async def run() -> None:
        app = AuditApp(path)
        async with app.run_test(size=(120, 40)) as pilot:
            while not (isinstance(app.screen, LeaderboardScreen) and app.screen.table.row_count):
                await pilot.pause(0.005)

    asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=1000)
    parser.add_argument("--responses", type=int, default=250)
    parser.add_argument("--rms", type=int, default=4)
    parser.add_argument(
        "--db", type=Path, help="reuse (or create) this DB instead of a temporary one"
    )
    args = parse_args(parser, {"prompts": 20, "responses": 10, "rms": 2})
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "bench.db"
        if not path.exists():
            start = time.perf_counter()
            build_db(path, args.prompts, args.responses, args.rms)
            print(
                f"built {path}: {args.prompts * args.responses * args.rms:,} RM scores "
                f"in {time.perf_counter() - start:.1f} s ({path.stat().st_size / 2**20:.0f} MiB)"
            )
        print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
        for name, function, repeats in (
            ("leaderboard data", leaderboard, 5),
            ("failure table (one RM)", failures, 5),
            ("prompt detail (2 RMs)", detail, 5),
            ("TUI start → leaderboard shown", tui_mount, 3),
        ):
            best, median = timed(partial(function, path), repeats)
            print(f"{name:<32} best {best:.3f} s   median {median:.3f} s   ({repeats} runs)")


if __name__ == "__main__":
    main()
