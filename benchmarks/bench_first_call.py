"""What a Hugging Face RM's first call costs before its first forward pass (issue 53), on the
machine at hand: reading the weights (straight onto the device against on the host, then
moved), encoding the call's inputs, and a fresh process's first ``score`` call both ways —
its inputs encoded while the weights load (rmaudit's way) against the weights loaded first.
The overlap saves at most the smaller of the load and the encoding.

Workload: HH-RLHF helpful-base test (``--hh``; synthetic HH-like texts where absent), a
random-weight Llama-style classifier of ``--hidden`` × ``--layers`` saved to a temporary
folder, with a byte-level BPE trained on the texts.

    python benchmarks/bench_first_call.py --hh ../shared/data/hh-rlhf/helpful-base/test.jsonl.gz
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _gpu_ab  # noqa: E402
import bench_gpu  # noqa: E402  (puts src/ on the path)
import torch  # noqa: E402
from _smoke import parse_args  # noqa: E402

from rmaudit.default_plugins.huggingface import HFClassifier  # noqa: E402
from rmaudit.recipe import validate_options  # noqa: E402


def encode_seconds(options: dict, pairs, repeats: int) -> float:
    """Median seconds of a loaded hf-classifier's ``encode_many`` on every pair."""
    rm = HFClassifier(validate_options(HFClassifier, options, field="rm", file=None, base_dir=None))
    rm._load()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        rm.encode_many(pairs)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hh", type=Path, default=bench_gpu.HH_TEST)
    parser.add_argument("--texts", type=int, default=1024, help="inputs of the first call")
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--no-call", action="store_true", help="the load and the encoding alone (large models)"
    )
    args = parse_args(parser, {"texts": 8, "hidden": 32, "layers": 2, "repeats": 1})
    records = (
        bench_gpu.hh_records(args.hh, args.texts)
        if args.hh.is_file() and not args.smoke
        else bench_gpu.synthetic_records(args.texts)
    )
    pairs = bench_gpu.pairs_of(records)[: args.texts]
    heads = max(1, args.hidden // 64)
    family, sizes = bench_gpu.llama(args.hidden, 4 * args.hidden, args.layers, heads, heads, 8000)
    device = torch.device("cpu")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        tokenizer = bench_gpu.tokenizers_for([t for p, r in pairs for t in (p.text, r.text)], 8000)
        folder = work / "rm"
        model = bench_gpu.build_model(
            family, sizes, tokenizer[family], folder, device, torch.float32, True
        )
        params = sum(p.numel() for p in model.parameters())
        del model
        options = {"model": str(folder), "device": "cpu", "dtype": "float32", "max_length": 4096}
        encode = encode_seconds(options, pairs, args.repeats)
        load = _gpu_ab.load(folder, device, torch.float32, args.repeats)
        calls = [
            _gpu_ab.first_call(folder, options, pairs, work)
            for _ in range(0 if args.no_call else args.repeats)
        ]
    ways = ("encoded while loading", "loaded first")
    print(
        f"{len(pairs)} inputs, a Llama-style classifier of {params / 1e6:.1f}M parameters "
        f"(float32, {torch.get_num_threads()} torch threads); medians of {args.repeats}\n"
    )
    print("| step | seconds |\n|---|---|")
    print(f"| encode the call's inputs (`encode_many`) | {encode:.2f} |")
    for way in ("straight to the device", "host, then moved"):
        print(f"| read the weights: {way} | {load[way]:.2f} |")
    for way in ways if calls else ():
        seconds = statistics.median(call[way] for call in calls)
        print(f"| a fresh process's first call, load included: {way} | {seconds:.2f} |")
    same = all(call["equal_scores"] for call in calls) and load["same_weights"]
    print(f"\nthe same weights either way, the same scores bit for bit: {same}")


if __name__ == "__main__":
    main()
