"""LLM judge throughput (labels/s and requests/s) against concurrency, on a local server.

Workload: the llm-judge oracle (RETA Fig. 8 template, samples = 10 in one request with n = 10)
labels 256 responses against rmaudit's fake OpenAI-compatible server on 127.0.0.1, which
holds every reply back for a fixed artificial latency (default 100 ms, a fast hosted API's
order of magnitude).  Each concurrency level starts with an empty request cache, so every
label is a real HTTP request.  Ideal throughput is concurrency / latency until the client or
the server saturates a core.

    python benchmarks/bench_judge.py [--labels 256] [--latency 0.1] [--concurrency 1 4 16 64]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from _smoke import parse_args

from rmaudit.components import Prompt, Response
from rmaudit.components.keys import prompt_id
from rmaudit.default_plugins.llm_judge_oracle import LlmJudgeOracle, LlmJudgeOracleOptions
from rmaudit.testing.fake_openai import FakeOpenAI


def batch(labels: int) -> list[tuple[Prompt, Response]]:
    prompts = [
        Prompt(prompt_id(f"Question {q}?"), f"Question {q}?", {"reference": f"Answer {q}."})
        for q in range(max(1, labels // 16))
    ]
    return [
        (
            prompts[i % len(prompts)],
            Response(
                f"r{i}",
                prompts[i % len(prompts)].id,
                i,
                f"Response number {i}, of moderate length. " * 8,
            ),
        )
        for i in range(labels)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=256)
    parser.add_argument("--latency", type=float, default=0.1, help="server latency per request (s)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    args = parse_args(parser, {"labels": 8, "latency": 0.01, "concurrency": [2]})
    os.environ["RMAUDIT_BENCH_KEY"] = "sk-benchmark"
    items = batch(args.labels)
    print(
        f"{args.labels} labels (n = 10 samples each, one request per label), server latency "
        f"{args.latency * 1000:.0f} ms; {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}"
    )
    print("| concurrency | labels/s | requests/s | ideal (concurrency / latency) |")
    print("|---|---|---|---|")
    with FakeOpenAI(latency_s=args.latency) as server:
        for concurrency in args.concurrency:
            with tempfile.TemporaryDirectory() as cache:
                oracle = LlmJudgeOracle(
                    LlmJudgeOracleOptions(
                        base_url=server.base_url,
                        model="judge",
                        api_key_env="RMAUDIT_BENCH_KEY",
                        samples=10,
                        concurrency=concurrency,
                        cache=Path(cache) / "requests.sqlite",
                    )
                )
                before = server.count()
                start = time.perf_counter()
                oracle.label(items)
                seconds = time.perf_counter() - start
                requests = server.count() - before
                print(
                    f"| {concurrency} | {args.labels / seconds:,.1f} | {requests / seconds:,.1f} "
                    f"| {concurrency / args.latency:,.0f} |"
                )


if __name__ == "__main__":
    main()
