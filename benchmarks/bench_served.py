"""A served reward model's throughput against the same checkpoint in-process (issue 49): the
inputs per second of ``hf-classifier``'s ``score`` and of a served RM's ``score`` through a
real HTTP server of that checkpoint in a process of its own (tests/_served_rm.py: the
protocol's exact request and reply, each request one padded forward pass), at the same batch
size — the HTTP layer (rendering, JSON, sockets, the judges' client, the request cache) must
not be what limits the served one (target: ≥ 0.8× the in-process rate).  A third row times
the server's own work alone — its tokenizer and forward passes on the same requests, in this
process, no HTTP — so the served rate against it is what HTTP costs, and the rest of any gap
to in-process is the test server's plain forward against rmaudit's engine.

Workload: the (prompt, chosen) and (prompt, rejected) texts of Anthropic HH-RLHF helpful-base
test (``--hh``, first ``--texts``), synthetic texts of HH-like lengths where the file is
absent (``--smoke``); the model a random-weight classifier of bench_gpu.py's presets (``cpu``:
``llama-5m``), in float32.  Each side scores every input ``--repeats`` times (the served one
with an empty request cache each time), best time kept.

    python benchmarks/bench_served.py --smoke
    python benchmarks/bench_served.py --texts 512 --batch-size 32
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))  # run from a checkout
sys.path.insert(0, str(ROOT))

import torch
from _smoke import parse_args
from bench_gpu import (
    HH_TEST,
    PRESETS,
    build_model,
    hh_records,
    pairs_of,
    synthetic_records,
    tokenizers_for,
)

from rmaudit.default_plugins.huggingface import HFClassifier
from rmaudit.default_plugins.served import SERVED_RMS

SERVER = ROOT.parent / "tests" / "_served_rm.py"
sys.path.insert(0, str(SERVER.parent))


def start_server(protocol: str, folder: Path, work: Path) -> tuple[subprocess.Popen, str]:
    """The tiny RM's server in a process of its own, and its URL once it listens (waited on
    its port file, not a sleep)."""
    port_file = work / "port"
    process = subprocess.Popen(
        [sys.executable, str(SERVER), protocol, str(folder), str(port_file)],
        env={**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"},
    )
    while not port_file.exists() or not port_file.read_text():
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        time.sleep(0.05)
    return process, f"http://127.0.0.1:{port_file.read_text()}"


def best_rate(scorers, pairs) -> float:
    """Inputs per second of ``score(pairs)``, the best of one call of each of ``scorers``."""
    best = float("inf")
    for score in scorers:
        started = time.perf_counter()
        score(pairs)
        best = min(best, time.perf_counter() - started)
    return len(pairs) / best


def server_alone(rm, folder: Path, pairs, batch_size: int, repeats: int) -> float:
    """Inputs per second of the server's own work on the requests ``rm`` sends (its texts
    sorted by length, ``batch_size`` a request): tokenised and scored by the test server's
    model in this process, no HTTP."""
    from _served_rm import TinyRM

    model = TinyRM(str(folder))
    texts = sorted((item.text or "" for item in rm.inputs(pairs)), key=len)
    requests = [texts[i : i + batch_size] for i in range(0, len(texts), batch_size)]

    def work(_pairs) -> None:
        for request in requests:
            model.heads([model.tokens(text) for text in request])

    return best_rate([work] * repeats, pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hh", type=Path, default=HH_TEST)
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--protocol", default="openrlhf-rm", choices=sorted(SERVED_RMS))
    parser.add_argument("--preset", default="cpu")
    args = parse_args(parser, {"texts": 32, "batch_size": 8, "repeats": 1, "preset": "smoke"})
    torch.set_num_threads(1)  # the server's process runs one thread too
    records = (
        hh_records(args.hh, args.texts)
        if args.hh.is_file() and not args.smoke
        else synthetic_records(args.texts)
    )
    pairs = pairs_of(records)[: args.texts]
    # removed at the end, or at exit if the run stops early (its finalizer)
    scratch = tempfile.TemporaryDirectory(prefix="bench-served-")
    work = Path(scratch.name)
    name, (family, sizes) = next(
        (n, spec) for n, spec in PRESETS[args.preset].items() if spec[0] == "llama"
    )
    tokenizer = tokenizers_for([p.text + r.text for p, r in pairs], sizes["vocab_size"])[family]
    folder = work / name
    build_model(family, sizes, tokenizer, folder, torch.device("cpu"), torch.float32, True)
    local = HFClassifier(
        HFClassifier.Options(
            model=str(folder), dtype="float32", device="cpu", batch_size=args.batch_size
        )
    )
    local.score(pairs[:2])  # loaded before the clock starts
    in_process = best_rate([local.score] * args.repeats, pairs)
    process, url = start_server(args.protocol, folder, work)
    try:
        cls = SERVED_RMS[args.protocol]

        def served(repeat: int):
            """A served RM with a request cache of its own (empty), its tokenizer loaded."""
            rm = cls(
                cls.Options(
                    base_url=url,
                    template="rmaudit",
                    tokenizer=str(folder),
                    batch_size=args.batch_size,
                    concurrency=2,
                    cache=str(work / f"cache-{repeat}.sqlite"),
                )
            )
            rm.check_ready()
            return rm

        scorers = [served(repeat).score for repeat in range(args.repeats)]
        served_rate = best_rate(scorers, pairs)
        alone_rate = server_alone(
            served(args.repeats), folder, pairs, args.batch_size, args.repeats
        )
    finally:
        process.terminate()
        process.wait()
        scratch.cleanup()
    print(f"{len(pairs)} inputs, batch size {args.batch_size}, {name} in float32 on CPU")
    print("| scored | inputs/s | × in-process |")
    print("|---|---:|---:|")
    print(f"| in-process (hf-classifier) | {in_process:,.1f} | 1.00 |")
    print(
        f"| served ({args.protocol}, HTTP) | {served_rate:,.1f} | {served_rate / in_process:.2f} |"
    )
    print(
        f"| the server's own work alone, no HTTP | {alone_rate:,.1f} | "
        f"{alone_rate / in_process:.2f} |"
    )
    print(f"served / the server's own work: {served_rate / alone_rate:.2f}")


if __name__ == "__main__":
    main()
