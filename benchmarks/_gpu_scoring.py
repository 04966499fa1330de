"""The per-model scoring section of ``gpu_all.py``: rmaudit's scoring (GPU work alone and
through ``score``), reward-bench's naive loop (a transformers pipeline, batches of 8 in data
order) on the same items, and how far the two agree; MFU against the card's dense bf16 peak.
"""

from __future__ import annotations

import gc
import statistics
import time

import bench_gpu
import numpy as np
import torch
import transformers

from rmaudit.backends.conversation import conversation_messages
from rmaudit.backends.hf.runtime import render_chat
from rmaudit.default_plugins.huggingface import HFClassifier
from rmaudit.recipe import validate_options

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
    return figures, texts, model
