"""Every GPU figure of benchmarks/README.md in one run (issue 34), written to one JSON file.

Run by ``benchmarks/gpu_all.sh`` (which prepares the data and the wheels the GPU machine
lacks, and turns the JSON into tables with ``gpu_report.py``).  Offline: random-weight
classifiers built from configs (``bench_gpu.PRESETS``: a Llama-style 1.0B and 8B, a
DeBERTa-v3-large-like 435M; ``--smoke``: tiny ones on CPU) and the HH-RLHF helpful-base test
dialogues (4,708 texts; made-up HH-like texts where the file is absent).  Per model, medians
of ``--repeats``:

- rmaudit's scoring (``hf-classifier`` at its defaults): real tokens/s and MFU, GPU work only
  (inputs tokenised beforehand) and through ``score`` (tokenisation included);
- the naive reward-bench loop: a transformers ``text-classification`` pipeline, batches of 8
  in dataset order; and how far rmaudit's scores are from it (share within bf16 rounding,
  pair-preference flips);
- for the first model: ``rmaudit run`` end to end on the same items, the scoring checks'
  overhead where rmaudit has them (detected at run time), and vLLM's classify path where
  ``vllm`` imports.

MFU = (2 × non-embedding parameters × real tokens + attention FLOPs) / (time × the card's
dense bf16 peak, ``PEAK_BF16_TFLOPS``).  The JSON is rewritten after every measurement, so a
run cut short keeps what it measured; a section past ``--budget-s`` is recorded as skipped.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_gpu  # noqa: E402  (sets HF_HUB_OFFLINE; puts src/ on the path)
import torch  # noqa: E402
import transformers  # noqa: E402
from _gpu_extras import run_e2e, scoring_checks_overhead, vllm_classify, write_records  # noqa: E402
from _smoke import parse_args  # noqa: E402

from rmaudit.backends.conversation import conversation_messages  # noqa: E402
from rmaudit.backends.hf.runtime import render_chat  # noqa: E402
from rmaudit.default_plugins.huggingface import HFClassifier  # noqa: E402
from rmaudit.recipe import validate_options  # noqa: E402

ROOT = bench_gpu.ROOT
#: Dense (no sparsity) bf16 tensor-core peaks in TFLOP/s from the vendors' data sheets,
#: matched in order against torch's device name (more specific names first).
PEAK_BF16_TFLOPS = [
    ("H100 PCIe", 756.0),
    ("H100 NVL", 835.0),
    ("H100", 989.4),  # SXM ("NVIDIA H100 80GB HBM3")
    ("GH200", 989.4),
    ("H200", 989.4),
    ("H20", 148.0),
    ("B200", 2250.0),
    ("A100", 312.0),
    ("A800", 312.0),
    ("L40S", 362.1),
    ("L4", 121.0),
    ("A10G", 70.0),
    ("A10", 125.0),
    ("RTX 4090", 165.2),
]
#: Relative agreement counted as "within bf16 rounding": two roundings of 2^-8 each.
BF16_TOLERANCE = 2.0**-7


def peak_tflops(card: str) -> float | None:
    return next((peak for name, peak in PEAK_BF16_TFLOPS if name in card), None)


def median_time(fn, device, repeats: int) -> tuple[float, list[float], object]:
    """The median of ``repeats`` timed calls, every time, and the last call's output."""
    times, out = [], None
    for _ in range(repeats):
        seconds, out = bench_gpu.timed(fn, device)
        times.append(seconds)
    return statistics.median(times), times, out


def agreement(ours: np.ndarray, naive: np.ndarray) -> dict:
    """Share of items within bf16 rounding of the naive score (relative to the larger of the
    two and the naive scores' median magnitude, so near-zero scores are not held to less than
    the scale's rounding), and the share of (chosen, rejected) pairs whose order flips."""
    scale = max(float(np.median(np.abs(naive))), 1e-6)
    bound = BF16_TOLERANCE * np.maximum(np.maximum(np.abs(ours), np.abs(naive)), scale)
    flips = np.sign(ours[0::2] - ours[1::2]) != np.sign(naive[0::2] - naive[1::2])
    return {
        "within_bf16": float(np.mean(np.abs(ours - naive) <= bound)),
        "pair_flips": float(np.mean(flips)),
        "max_abs_diff": float(np.max(np.abs(ours - naive))),
        "pairs": int(len(flips)),
    }


def pipeline_inputs(rm: HFClassifier, pairs) -> list:
    """What reward-bench feeds its pipeline: the rendered chat, or (prompt, response) as a
    text pair for a model without a chat template."""
    if rm.use_chat:
        return [
            render_chat(
                rm.tokenizer, rm.template, conversation_messages(p, r), add_generation_prompt=False
            )
            for p, r in pairs
        ]
    return [{"text": p.text, "text_pair": r.text} for p, r in pairs]


def naive_pipeline(model, rm: HFClassifier, inputs: list, device, repeats: int) -> dict:
    """reward-bench's loop: ``pipeline("text-classification")``, batch 8, dataset order."""
    pipe = transformers.pipeline(
        "text-classification", model=model, tokenizer=rm.tokenizer, device=device
    )
    kwargs = dict(batch_size=8, function_to_apply="none", truncation=True)
    if rm.max_length:
        kwargs["max_length"] = rm.max_length

    def run():
        with torch.inference_mode():
            return np.array([out["score"] for out in pipe(inputs, **kwargs)])

    pipe(inputs[:16], **kwargs)  # warm-up: kernel selection, not the loop's cost
    seconds, times, scores = median_time(run, device, repeats)
    return {"median_s": seconds, "times_s": times, "scores": scores}


def rmaudit_scoring(model, rm_options: dict, pairs, device, repeats: int) -> dict:
    """hf-classifier at its defaults: a cold pass, then ``repeats`` GPU-only passes (inputs
    tokenised beforehand) and ``repeats`` passes through ``score``."""
    rm = HFClassifier(
        validate_options(HFClassifier, rm_options, field="rm", file=None, base_dir=None)
    )
    rm._load()
    start = time.perf_counter()
    rows = [rm._row(encoded) for encoded, _ in rm.encode_many(pairs)]
    tokenise_s = time.perf_counter() - start
    order = sorted(range(len(rows)), key=lambda i: (-len(rows[i]), i))

    def gpu_only():
        logits = rm.scorer.run(order, lambda indices: [rows[i] for i in indices])
        return np.array([float(logits[i][0, 0]) for i in range(len(rows))])

    cold_s, _ = bench_gpu.timed(gpu_only, device)
    warm_s, warm_times, scores = median_time(gpu_only, device, repeats)
    score_s, score_times, _ = median_time(lambda: rm.score(pairs), device, repeats)
    report = {k: str(v) for k, v in rm.scorer.report().items()}
    return {
        "rm": rm,
        "lengths": [len(r) for r in rows],
        "tokenise_s": tokenise_s,
        "cold_s": cold_s,
        "gpu_only_s": warm_s,
        "gpu_only_times_s": warm_times,
        "score_s": score_s,
        "score_times_s": score_times,
        "scores": scores,
        "report": report,
    }


def measure_model(name, family, sizes, tokenizers, pairs, folder, device, dtype, args, save):
    """Every per-model figure: rmaudit's scoring, the naive pipeline, their agreement."""
    gc.collect()  # the previous model's memory back before this one is built
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    model = bench_gpu.build_model(family, sizes, tokenizers[family], folder, device, dtype, save)
    build_s = time.perf_counter() - start
    rm_options = {
        "model": str(folder),
        "device": device.type,
        "dtype": str(dtype).removeprefix("torch."),
        "max_length": sizes["max_position_embeddings"],
    }
    original_load = bench_gpu.runtime.load_model
    bench_gpu.runtime.load_model = lambda auto_class, model_name, **kw: model
    try:  # hf-classifier scores with the model in memory (its folder may hold no weights)
        ours = rmaudit_scoring(model, rm_options, pairs, device, args.repeats)
    finally:
        bench_gpu.runtime.load_model = original_load
    rm = ours.pop("rm")
    texts = pipeline_inputs(rm, pairs)
    naive = naive_pipeline(model, rm, texts, device, args.repeats)
    lengths = ours.pop("lengths")
    flops = bench_gpu.mfu_flops(model, lengths)
    figures = {
        "family": family,
        "texts": len(pairs),
        "real_tokens": int(sum(lengths)),
        "flops": float(flops),
        "build_s": build_s,
        "rmaudit": {**ours, "scores": ours["scores"].tolist()},
        "naive_pipeline": {**naive, "scores": naive["scores"].tolist()},
        "agreement": agreement(ours["scores"], naive["scores"]),
        "peak_memory_gib": (
            torch.cuda.max_memory_allocated() / 2**30 if device.type == "cuda" else None
        ),
        "rm_options": rm_options,
    }
    return figures, texts


def meta(device, dtype, source: str, args) -> dict:
    card = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    commit = (
        args.commit
        or subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip()
    )
    return {
        "card": card,
        "peak_bf16_tflops": peak_tflops(card),
        "dtype": str(dtype).removeprefix("torch."),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "commit": commit or "unknown",
        "workload": source,
        "repeats": args.repeats,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def workload(args) -> tuple[list[dict], str]:
    if args.hh.is_file():
        return bench_gpu.hh_records(
            args.hh, args.texts
        ), f"HH-RLHF helpful-base test ({args.hh.name})"
    return bench_gpu.synthetic_records(args.texts or 4708), "made-up texts, HH-like lengths"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for gpu_all.json")
    parser.add_argument("--hh", type=Path, default=bench_gpu.HH_TEST)
    parser.add_argument("--preset", choices=sorted(bench_gpu.PRESETS), default="h100")
    parser.add_argument("--texts", type=int, default=None, help="first N texts (default: all)")
    parser.add_argument(
        "--texts-large", type=int, default=1536, help="texts for models over 4B parameters"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget-s", type=float, default=450.0, help="skip sections after")
    parser.add_argument("--commit", default=None, help="the commit measured (default: git)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parse_args(parser, {"preset": "smoke", "texts": 12, "device": "cpu", "repeats": 1})
    started = time.perf_counter()
    device = torch.device(args.device)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    records, source = workload(args)
    pairs = bench_gpu.pairs_of(records)
    args.out.mkdir(parents=True, exist_ok=True)
    figures: dict = {"meta": meta(device, dtype, source, args), "models": {}}
    path = args.out / "gpu_all.json"

    def save() -> None:
        figures["meta"]["elapsed_s"] = time.perf_counter() - started
        path.write_text(json.dumps(figures, indent=1, default=str), encoding="utf-8")

    def in_budget(section: str) -> bool:
        if time.perf_counter() - started < args.budget_s:
            print(f"gpu_all: {section}", file=sys.stderr, flush=True)
            return True
        figures.setdefault("skipped", []).append(section)
        return False

    measure_all(args, pairs, records, device, dtype, figures, save, in_budget)
    save()
    print(f"gpu_all: figures in {path} ({figures['meta']['elapsed_s']:.0f} s)")


def measure_all(args, pairs, records, device, dtype, figures, save, in_budget) -> None:
    import tempfile

    chosen = list(bench_gpu.PRESETS[args.preset].items())
    with tempfile.TemporaryDirectory() as work:
        vocab = min(max(sizes["vocab_size"] for _, (_, sizes) in chosen), 32000)
        tokenizers = bench_gpu.tokenizers_for(
            [t for p, r in pairs for t in (p.text, r.text)], vocab
        )
        data = Path(work) / "hh.jsonl.gz"
        write_records(data, records)
        for index, (name, (family, sizes)) in enumerate(chosen):
            if not in_budget(f"scoring: {name}"):
                continue
            large = sizes["hidden_size"] * sizes["num_hidden_layers"] >= 4096 * 32
            subset = pairs[: args.texts_large] if large else pairs
            folder = Path(work) / name
            first = index == 0  # the end-to-end sections run on the first (the 1B) model
            figures["models"][name], texts = measure_model(
                name, family, sizes, tokenizers, subset, folder, device, dtype, args, first
            )
            save()
            if not first:
                continue
            model = figures["models"][name]
            options, gpu_only_s = model["rm_options"], model["rmaudit"]["gpu_only_s"]
            if in_budget("rmaudit run"):
                figures["e2e"] = run_e2e(folder, data, options, args.repeats, gpu_only_s)
                save()
            if "e2e" in figures and in_budget("scoring checks"):
                figures["scoring_checks"] = scoring_checks_overhead(
                    folder, data, options, figures["e2e"], args.repeats
                )
                save()
            if in_budget("vllm"):
                figures["vllm"] = vllm_classify(
                    folder, texts, model["real_tokens"], args.repeats, Path(work)
                )
                save()


if __name__ == "__main__":
    main()
