"""The scores stage end to end against the RM's own compute (issue 16): how much of the stage
is the pipeline — reading responses, cutting calls, storing scores — rather than the model.

Workload: the (prompt, chosen) and (prompt, rejected) texts of Anthropic HH-RLHF
helpful-base test (``--hh``, default ``../shared/data/hh-rlhf/helpful-base/test.jsonl.gz``
beside the checkout; first ``--texts`` texts), as an ``hh-pairs`` recipe; synthetic texts of
HH-like lengths where the file is absent (``--smoke``).  RMs (``--rms``): ``hf-classifier`` on
a random-weight classifier of bench_gpu.py's presets (``--preset``, ``--model``; default the
``cpu`` preset's ``llama-5m``, at ``--smoke`` ``llama-smoke``); ``simulated-rm``; and
``device-like``, the simulated RM made to wait ``--device-ms`` per input with the GIL
released, as a driver thread waits on a GPU — the CPU stand-in for a GPU RM, whose compute
leaves the driver's core free.

Per RM and pipeline variant: the wall time of the stage ``scores: rm`` inside a real run
(fresh SQLite file; the model loaded beforehand, so the stage holds no model load, but it
holds the RM's report, for hf-classifier 16 inputs re-scored alone), the time
spent inside the RM's ``score`` calls during it, and the RM alone — one ``score`` call on
every input, nothing stored — which is what the stage would cost with a free pipeline.
Variants: ``before`` (the first) = the driver calls the RM and stores, one batch after the other, in
calls of the recipe's batch_size (256): the code path before the overlap (``[executor]
overlap = false``); ``overlap`` = the RM computes the next call in a worker thread while the
driver stores the last; ``overlap, 4096 per call`` = also the calls a GPU RM asks for.

    python benchmarks/bench_scores.py --smoke          # seconds (CI runs it)
    python benchmarks/bench_scores.py --rms hf --texts 400         # CPU figures
    python benchmarks/bench_scores.py --rms simulated device-like --texts 4708
    python benchmarks/bench_scores.py --device cuda --preset h100 --model deberta-435m \
        --rms hf --texts 4708          # a GPU session
"""

from __future__ import annotations

import argparse
import gzip
import json
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

from rmaudit import hookimpl
from rmaudit.default_plugins.simulated import SimulatedRM
from rmaudit.recipe import load_recipe
from rmaudit.run import Runner
from rmaudit.run.runner import build_components
from rmaudit.store import Store
from rmaudit.testing import registered_plugin

VARIANTS = {  # name -> (executor overlap, items per call: None = the recipe's batch_size 256)
    "before: sequential, 256 per call": (False, None),
    "overlap, 256 per call": (True, None),
    "overlap, 4096 per call": (True, 4096),
}


class DeviceLikeRM(SimulatedRM):
    """simulated-rm that also waits per input with the GIL released, as on a GPU."""

    name = "bench-device-like"
    per_item_s = 0.0  # set by main

    def score(self, batch):
        time.sleep(self.per_item_s * len(batch))
        return super().score(batch)


@hookimpl
def register_reward_models(register):
    register(DeviceLikeRM)


def recipe_text(data: Path, rm: dict, overlap: bool, per_call: int | None) -> str:
    rm = dict(rm)
    batch_size = 256
    if per_call is not None:
        if rm["name"] == "hf-classifier":
            rm["items_per_call"] = per_call
        else:  # a component without a preference: the recipe's batch_size
            batch_size = per_call
    table = "".join(f"{k} = {json.dumps(v)}\n" for k, v in rm.items())
    return (
        f'title = "bench_scores"\nbatch_size = {batch_size}\n[pairs.source]\n'
        f'name = "hh-pairs"\npath = "{data}"\non_bad_record = "reject"\n'
        f'[[reward_models]]\nlabel = "rm"\n{table}'
        f'[[metrics]]\nname = "pair-accuracy"\n'
        f'[executor]\nname = "local"\noverlap = {str(overlap).lower()}\n'
    )


def measure(
    work: Path, data: Path, rm: dict, pairs, name: str, overlap: bool, per_call: int | None
) -> dict:
    path = work / f"{rm['label']}-{len(list(work.iterdir()))}.toml"
    path.write_text(
        recipe_text(data, {k: v for k, v in rm.items() if k != "label"}, overlap, per_call),
        encoding="utf-8",
    )
    recipe = load_recipe(path)
    components = build_components(recipe)
    model = components[recipe.reward_models[0].field]
    if hasattr(model, "_load"):
        model._load()  # the model loads before the stage: its load is not the pipeline's
    inside = []
    score = model.score

    def timed_score(batch):
        start = time.perf_counter()
        try:
            return score(batch)
        finally:
            inside.append(time.perf_counter() - start)

    model.score = timed_score
    store = Store.open(path.with_suffix(".db"))
    try:
        result = Runner(recipe, store, components=components).run()
        scored = store.execute("select count(*) from rm_scores").fetchone()[0]
    finally:
        store.close()
    # the RM alone: a fresh copy (its own warm-up pass first), one call on every input
    alone_model = type(model)(model.options)
    alone_model.score(pairs[:64])
    start = time.perf_counter()
    alone_model.score(pairs)
    alone = time.perf_counter() - start
    stage = result.timings["scores: rm"]
    return {
        "rm": rm["label"],
        "variant": name,
        "scored": scored,
        "stage_s": stage,
        "in_score_s": sum(inside),
        "calls": len(inside),
        "alone_s": alone,
        "pairs_stage_s": sum(v for k, v in result.timings.items() if k.startswith("pairs")),
        "total_s": result.timings["total"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=2000, help="first N texts")
    parser.add_argument("--hh", type=Path, default=HH_TEST)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="cpu")
    parser.add_argument("--model", help="hf RM: a model of the preset (default: its first)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument(
        "--repeats", type=int, default=2, help="runs per variant; the fastest stage is reported"
    )
    parser.add_argument(
        "--rms",
        nargs="*",
        choices=["hf", "simulated", "device-like"],
        default=["hf", "simulated", "device-like"],
    )
    parser.add_argument(
        "--device-ms", type=float, default=0.5, help="device-like RM: milliseconds per input"
    )
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parse_args(parser, {"texts": 48, "preset": "smoke", "repeats": 1})
    torch.set_num_threads(args.threads)
    if args.hh.is_file() and not args.smoke:
        records, source = hh_records(args.hh, args.texts), f"HH-RLHF ({args.hh})"
    else:
        records, source = synthetic_records(args.texts), "synthetic, HH-like lengths"
    pairs = pairs_of(records)
    results = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        data = work / "hh.jsonl.gz"
        with gzip.open(data, "wt", encoding="utf-8") as handle:
            handle.writelines(json.dumps(record) + "\n" for record in records)
        rms = []
        if "hf" in args.rms:
            name = args.model or next(iter(PRESETS[args.preset]))
            family, sizes = PRESETS[args.preset][name]
            tokenizer = tokenizers_for(
                [t for p, r in pairs for t in (p.text, r.text)], min(sizes["vocab_size"], 32000)
            )[family]
            dtype = torch.bfloat16 if args.device.startswith("cuda") else torch.float32
            build_model(
                family,
                sizes,
                tokenizer,
                work / name,
                torch.device(args.device),
                dtype,
                save_weights=True,
            )
            rms.append(
                {
                    "label": f"hf-classifier ({name})",
                    "name": "hf-classifier",
                    "model": str(work / name),
                    "device": args.device,
                    "max_length": sizes["max_position_embeddings"],
                }
            )
        if "simulated" in args.rms:
            rms.append({"label": "simulated-rm", "name": "simulated-rm"})
        if "device-like" in args.rms:
            DeviceLikeRM.per_item_s = args.device_ms / 1000
            rms.append(
                {
                    "label": f"device-like ({args.device_ms:g} ms per input)",
                    "name": DeviceLikeRM.name,
                }
            )
        with registered_plugin(sys.modules[__name__], name="bench_scores"):
            for rm in rms:
                for variant, (overlap, per_call) in VARIANTS.items():
                    row = min(
                        (
                            measure(work, data, rm, pairs, variant, overlap, per_call)
                            for _ in range(args.repeats)
                        ),
                        key=lambda r: r["stage_s"],
                    )
                    results.append(row)
                    print(
                        f"  {row['rm']} / {variant}: {row['stage_s']:.2f} s",
                        file=sys.stderr,
                        flush=True,
                    )
    print(
        f"workload: {source}, {len(pairs)} texts; {args.device}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} torch threads"
    )
    print("| RM | pipeline | scores stage | inside score() | calls | RM alone | stage / alone |")
    print("|---|---|---|---|---|---|---|")
    for row in results:
        print(
            f"| {row['rm']} | {row['variant']} | {row['stage_s']:.2f} s | "
            f"{row['in_score_s']:.2f} s | {row['calls']} | {row['alone_s']:.2f} s | "
            f"{row['stage_s'] / row['alone_s']:.2f}× |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
