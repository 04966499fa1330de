"""The A/B sections of ``gpu_all.py`` (issue 53): each choice a default could follow, measured
on the card against the default, and every score of each checked against the naive loop's.

- ``configs``: hf-classifier's batching choices (``bench_gpu.CONFIGS``) against the defaults —
  token budgets, packing (flex-attention on CUDA; SDPA's dense mask on CPU) — GPU work alone,
  one cold and one warm pass, and the share of each configuration's scores within the dtype's
  rounding of the naive loop's, on every row;
- ``load``: the checkpoint's weights read straight onto the device in its dtype (a
  single-device ``device_map``) against read on the host, then moved: seconds, and whether
  both give the same weights;
- ``first_call``: a fresh process's first ``score`` call, its inputs encoded while the
  weights load (rmaudit's way) against the weights loaded first, then the call: seconds from
  the component's construction to its scores, and whether the scores are equal, bit for bit.
  Each in a child process (``python _gpu_ab.py first-call ...``), so that nothing is cached.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import bench_gpu
import numpy as np
import torch
import transformers

#: hf-classifier options of each A/B configuration, by device type (names of bench_gpu.CONFIGS)
AB_CONFIGS = {
    "cuda": ["defaults", "budget 64k", "budget 128k", "packed, flex attention"],
    "cpu": ["defaults", "budget 4k", "budget 16k", "packed"],
}
#: how far a score may be from the naive loop's, relative to the larger of the two and the
#: naive scores' median magnitude: two roundings of the dtype's step
TOLERANCE = {torch.bfloat16: 2.0**-7, torch.float16: 2.0**-10, torch.float32: 1e-5}


def within(ours: np.ndarray, naive: np.ndarray, dtype) -> dict:
    """Share of rows within the dtype's rounding of the naive loop's scores, and of pairs whose
    order flips (as ``gpu_all.agreement``, at the dtype's tolerance)."""
    scale = max(float(np.median(np.abs(naive))), 1e-6)
    bound = TOLERANCE[dtype] * np.maximum(np.maximum(np.abs(ours), np.abs(naive)), scale)
    flips = np.sign(ours[0::2] - ours[1::2]) != np.sign(naive[0::2] - naive[1::2])
    return {
        "within_dtype": float(np.mean(np.abs(ours - naive) <= bound)),
        "rows": int(len(ours)),
        "pair_flips": float(np.mean(flips)),
        "max_abs_diff": float(np.max(np.abs(ours - naive))),
    }


def configs(model, rm_options: dict, pairs, naive: np.ndarray, device, dtype, args) -> dict:
    """Each A/B configuration of the device, against the naive loop's scores."""
    out = {}
    loading = bench_gpu.runtime.load_model
    # every configuration scores with the model in memory (as run_config's attention switch
    # expects), whatever loading options its key differs by
    bench_gpu.runtime.load_model = lambda auto_class, model_name, **kw: model
    try:
        for name in AB_CONFIGS[device.type]:
            out[name] = _config(name, model, rm_options, pairs, naive, device, dtype, args)
    finally:
        bench_gpu.runtime.load_model = loading
    return out


def _config(name: str, model, rm_options: dict, pairs, naive, device, dtype, args) -> dict:
    try:
        row = bench_gpu.run_config(
            name, bench_gpu.CONFIGS[name], model, rm_options, pairs, device, args
        )
    except Exception as error:  # a configuration this card or model cannot run
        return {"available": False, "reason": f"{type(error).__name__}: {error}"[:300]}
    scores = np.asarray(row.pop("scores"), dtype=float)
    lengths = row.pop("lengths")
    return {
        "available": True,
        **row,
        "tokens": int(sum(lengths)),
        "agreement": within(scores, naive, dtype),
        "scores": scores.tolist(),
    }


def _synchronised(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def load(folder: Path, device, dtype, repeats: int) -> dict:
    """Seconds to read the saved classifier onto ``device``: straight (a single-device
    ``device_map``) against on the host, then moved; alternated, medians of ``repeats``."""
    auto = transformers.AutoModelForSequenceClassification
    ways = {
        "straight to the device": lambda: auto.from_pretrained(
            folder, dtype=dtype, device_map={"": str(device)}
        ),
        "host, then moved": lambda: auto.from_pretrained(folder, dtype=dtype).to(device),
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    weights = {}
    for _ in range(repeats):
        for name, read in ways.items():
            gc.collect()
            if device.type == "cuda":
                torch.cuda.empty_cache()
            _synchronised(device)
            start = time.perf_counter()
            model = read()
            _synchronised(device)
            times[name].append(time.perf_counter() - start)
            weights[name] = {k: v.float().cpu() for k, v in model.state_dict().items()}
            del model
    straight, moved = weights.values()
    return {
        **{name: statistics.median(seconds) for name, seconds in times.items()},
        "times_s": times,
        "same_weights": all(torch.equal(straight[k], moved[k]) for k in straight),
    }


def first_call(folder: Path, rm_options: dict, pairs, work: Path) -> dict:
    """A fresh process's first score call both ways (rmaudit's and the weights loaded
    first), each in a child process; the seconds and whether the scores are equal."""
    texts = work / "first-call-texts.json"
    texts.write_text(json.dumps([(p.text, r.text) for p, r in pairs]), encoding="utf-8")
    path = os.pathsep.join(
        filter(None, [str(bench_gpu.ROOT / "src"), os.environ.get("PYTHONPATH")])
    )
    results = {}
    for way in ("encoded while loading", "loaded first"):
        child = subprocess.run(
            [sys.executable, __file__, "first-call", way, json.dumps(rm_options), str(texts)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": path},
        )
        lines = child.stdout.strip().splitlines()
        if child.returncode or not lines:
            return {"available": False, "reason": (child.stderr.strip() or "no output")[-600:]}
        results[way] = json.loads(lines[-1])
    ahead, first = results.values()
    return {
        "available": True,
        "items": len(pairs),
        **{way: result["seconds"] for way, result in results.items()},
        "equal_scores": ahead["scores"] == first["scores"],
        "scores": {way: result["scores"] for way, result in results.items()},
    }


def _first_call_child(way: str, options: str, texts: str) -> dict:
    from rmaudit.components import Prompt, Response
    from rmaudit.default_plugins.huggingface import HFClassifier
    from rmaudit.recipe import validate_options

    pairs = [
        (Prompt(f"p{i}", prompt), Response(f"r{i}", f"p{i}", None, response))
        for i, (prompt, response) in enumerate(json.loads(Path(texts).read_text()))
    ]
    start = time.perf_counter()
    rm = HFClassifier(
        validate_options(HFClassifier, json.loads(options), field="rm", file=None, base_dir=None)
    )
    if way == "loaded first":
        rm._load()
    scores = rm.score(pairs)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return {"seconds": time.perf_counter() - start, "scores": scores}


if __name__ == "__main__" and sys.argv[1] == "first-call":
    print(json.dumps(_first_call_child(*sys.argv[2:5])))
