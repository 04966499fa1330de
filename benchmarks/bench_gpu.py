"""RM scoring throughput on a GPU (issue 16; issue 6's CPU comparison too): naive batches
against rmaudit's token budgets, padding-free packing, compile and deterministic mode.

Workload: the chosen and rejected dialogues of Anthropic HH-RLHF helpful-base test
(``--hh``, default ``../shared/data/hh-rlhf/helpful-base/test.jsonl.gz`` beside the checkout;
4,708 texts), split into (prompt, response) as the ``hh-pairs`` source splits them; where the
file is absent (``--smoke``), synthetic texts with HH-like lengths.  Models: classifiers built
from configs with random weights (``--preset``: ``h100`` = a Llama-style 1.0B (SDPA), a
DeBERTa-v3-large-like 435M (eager attention, as transformers runs DeBERTa) and a Llama-style
8B; ``cpu`` and ``smoke`` = small ones), with a byte-level BPE tokenizer trained on the texts.

Per model and configuration it reports real (unpadded) tokens per second and MFU —
(2 × non-embedding parameters × real tokens + attention FLOPs 4·L²·d per layer and sequence,
half of it for causal models) over ``--peak-tflops`` — for the GPU work alone (inputs
tokenised beforehand; the second of two passes, the first, which selects kernels or compiles
per new shape, is reported as "cold") and through ``hf-classifier``'s ``score`` with the
tokenisation it overlaps; peak device memory; the ratio to the naive baseline; and how far
the scores moved from the naive ones (largest difference; share of HH pairs whose preferred
response flips).  ``--e2e`` also times ``rmaudit run`` on an ``hh-pairs`` recipe, whole and
its scores stage (the pipelined stage against the same stage before the pipeline: calls of
256, scored and stored one after the other), each as a multiple of the GPU-only pass.

    python benchmarks/bench_gpu.py --smoke                         # CPU, seconds (CI runs it)
    python benchmarks/bench_gpu.py --preset cpu --threads 1        # CPU figures
    python benchmarks/bench_gpu.py --preset h100 --models llama-1b --e2e   # on an H100
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # run from a checkout
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

from rmaudit.backends.hf import runtime
from rmaudit.backends.hf.inputs import padded
from rmaudit.benchmark.pairs.parsers import RecordProblem, split_hh_dialogues
from rmaudit.components import Prompt, Response
from rmaudit.default_plugins.huggingface import HFClassifier
from rmaudit.recipe import validate_options

HH_TEST = ROOT.parent / "shared/data/hh-rlhf/helpful-base/test.jsonl.gz"
TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}"
    "{{ eos_token }}\n{% endfor %}"
)


def llama(hidden, intermediate, layers, heads, kv_heads, vocab):
    return (
        "llama",
        dict(
            hidden_size=hidden,
            intermediate_size=intermediate,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=kv_heads,
            vocab_size=vocab,
            max_position_embeddings=4096,
        ),
    )


def deberta(hidden, intermediate, layers, heads, vocab):
    return (
        "deberta",
        dict(
            hidden_size=hidden,
            intermediate_size=intermediate,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            vocab_size=vocab,
            max_position_embeddings=512,
            relative_attention=True,
            position_buckets=256,
            pos_att_type=["p2c", "c2p"],
            type_vocab_size=0,
            norm_rel_ebd="layer_norm",
            share_att_key=True,
        ),
    )


PRESETS = {
    "h100": {
        "llama-1b": llama(2048, 8192, 16, 32, 8, 128256),
        "deberta-435m": deberta(1024, 4096, 24, 16, 128100),
        "llama-8b": llama(4096, 14336, 32, 32, 8, 128256),
    },
    "cpu": {
        "llama-5m": llama(256, 688, 4, 4, 2, 8000),
        "deberta-5m": deberta(256, 1024, 4, 4, 8000),
    },
    "smoke": {
        "llama-smoke": llama(32, 64, 2, 4, 2, 600),
        "deberta-smoke": deberta(32, 64, 2, 2, 600),
    },
}
#: name -> hf-classifier options (None: the naive baseline, reward-bench style)
CONFIGS = {
    "naive: batch 8, data order": None,
    "batch 8, length-sorted": {"batch_size": 8, "max_batch_tokens": 10**9, "pad_to_multiple": 1},
    "defaults": {},
    "budget 4k": {"max_batch_tokens": 4096},
    "budget 16k": {"max_batch_tokens": 16384},
    "budget 64k": {"max_batch_tokens": 65536},
    "budget 128k": {"max_batch_tokens": 131072},
    "packed": {"packing": True},
    "packed, flex attention": {"packing": True, "attn_implementation": "flex_attention"},
    "no prefetch": {"prefetch": 0},
    "deterministic": {"deterministic": True},
    "compile": {"compile": True},  # last: compiling changes the shared model in place
}
#: Not in the smoke run: flex-attention compiles its kernel, minutes on a CPU.
GPU_ONLY = {"packed, flex attention"}


def hh_records(path: Path, limit: int | None) -> list[dict]:
    """HH-RLHF records whose dialogues split into a pair, up to ``limit`` texts (2 each)."""
    records = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            try:
                split_hh_dialogues(record["chosen"], record["rejected"])
            except RecordProblem:  # e.g. identical dialogues; hh-pairs rejects them too
                continue
            records.append(record)
            if limit and 2 * len(records) >= limit:
                break
    return records


def synthetic_records(texts: int) -> list[dict]:
    """HH-format dialogues of word salad whose lengths follow HH-RLHF's (median ≈ 650
    characters, long right tail)."""
    rng = np.random.default_rng(0)
    words = "the a model answer question because people often would like to know how".split()
    sizes = rng.lognormal(mean=6.45, sigma=0.85, size=(texts // 2, 3)) / 6

    def salad(size: float) -> str:
        return " ".join(rng.choice(words, max(1, int(size))))

    records = []
    for p, a, b in sizes:
        prompt = f"\n\nHuman: {salad(p)}\n\nAssistant: "
        records.append({"chosen": prompt + salad(a), "rejected": prompt + "no " + salad(b)})
    return records


def pairs_of(records: list[dict]) -> list[tuple[Prompt, Response]]:
    """(prompt, chosen), (prompt, rejected) per record, split as hh-pairs splits them."""
    out = []
    for i, record in enumerate(records):
        prompt, chosen, rejected, _ = split_hh_dialogues(record["chosen"], record["rejected"])
        out += [
            (Prompt(f"p{i}", prompt), Response(f"c{i}", f"p{i}", None, chosen)),
            (Prompt(f"p{i}", prompt), Response(f"r{i}", f"p{i}", None, rejected)),
        ]
    return out


def tokenizers_for(texts: list[str], vocab: int) -> dict[str, transformers.PreTrainedTokenizerFast]:
    """A byte-level BPE trained on the texts: with a chat template (decoders) and as a text
    pair tokenizer (the DeBERTa-like encoder)."""
    special = ["<pad>", "<s>", "</s>", "[CLS]", "[SEP]"]
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=vocab,
            special_tokens=special,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    chat = transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        chat_template=TEMPLATE,
        model_input_names=["input_ids", "attention_mask"],
    )
    pair_backend = Tokenizer.from_str(backend.to_str())
    cls, sep = pair_backend.token_to_id("[CLS]"), pair_backend.token_to_id("[SEP]")
    pair_backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    pair = transformers.PreTrainedTokenizerFast(
        tokenizer_object=pair_backend,
        pad_token="<pad>",
        cls_token="[CLS]",
        sep_token="[SEP]",
        model_input_names=["input_ids", "attention_mask"],
    )
    return {"llama": chat, "deberta": pair}


def build_model(family, sizes, tokenizer, folder: Path, device, dtype, save_weights: bool):
    """A random-weight classifier from its config, kept in memory (and its config and
    tokenizer in ``folder``; its weights only for ``rmaudit run``)."""
    common = dict(
        num_labels=1,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    config = (
        transformers.LlamaConfig(**sizes, **common)
        if family == "llama"
        else transformers.DebertaV2Config(**sizes, **common)
    )
    torch.manual_seed(0)
    with torch.device(device):  # initialised on the device: an 8B model in seconds
        model = transformers.AutoModelForSequenceClassification.from_config(
            config, attn_implementation="sdpa" if family == "llama" else "eager"
        ).to(dtype)
    model.eval()
    (model if save_weights else model.config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return model


def mfu_flops(model, lengths: list[int]) -> float:
    config = model.config
    embedding = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Embedding))
    params = sum(p.numel() for p in model.parameters()) - embedding
    causal = 0.5 if config.model_type == "llama" else 1.0
    attention = (
        4 * config.hidden_size * config.num_hidden_layers * causal * sum(n * n for n in lengths)
    )
    return 2 * params * sum(lengths) + attention


def timed(fn, device) -> tuple[float, object]:
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    out = fn()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start, out


def naive(model, rows, texts, rm, pad_id, device, *, pre_encoded: bool) -> np.ndarray:
    """reward-bench style: batches of 8 in data order, padded to their longest, the model's
    own forward, scores fetched per batch; tokenised per batch unless ``pre_encoded``."""
    out = []
    for start in range(0, len(texts), 8):
        chunk = (
            rows[start : start + 8]
            if pre_encoded
            else [rm._row(e) for e, _ in rm.encode_many(texts[start : start + 8])]
        )
        arrays = padded(chunk, pad_id=pad_id).arrays
        with torch.inference_mode():
            logits = model(**{k: torch.from_numpy(v).to(device) for k, v in arrays.items()}).logits
        out.append(logits[:, 0].float().cpu().numpy())
    return np.concatenate(out)


def run_config(name, options, model, rm_options, texts, device, args) -> dict:
    """Cold and warm GPU-only passes, then one pass through score (with tokenisation)."""
    if options is not None and "compile" in options and args.compile_backend != "inductor":
        options = {**options, "compile": args.compile_backend}
    attention = (options or {}).get("attn_implementation")
    if attention:  # the model in memory switches (from_pretrained would set it at load)
        saved = model.config._attn_implementation
        model.set_attn_implementation(attention)
    rm = HFClassifier(
        validate_options(
            HFClassifier, {**rm_options, **(options or {})}, field="rm", file=None, base_dir=None
        )
    )
    rm._load()
    encoded = rm.encode_many(texts)
    rows = [rm._row(e) for e, _ in encoded]
    pad_id = model.config.pad_token_id
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    if options is None:

        def gpu_only():
            return naive(model, rows, texts, rm, pad_id, device, pre_encoded=True)

        def through_score():
            return naive(model, rows, texts, rm, pad_id, device, pre_encoded=False)
    else:
        order = sorted(range(len(rows)), key=lambda i: (-len(rows[i]), i))

        def gpu_only():
            logits = rm.scorer.run(order, lambda indices: [rows[i] for i in indices])
            return np.array([logits[i][0, 0] for i in range(len(rows))])

        def through_score():
            return np.array(rm.score(texts))

    cold, _ = timed(gpu_only, device)
    warm, scores = timed(gpu_only, device)
    scored, _ = timed(through_score, device)
    if options and options.get("deterministic"):  # process-wide switches: off for the rest
        torch.use_deterministic_algorithms(False)
    report = {k: v for k, v in rm.scorer.report().items() if k != "dtype"}
    if attention:
        model.set_attn_implementation(saved)
    return {
        "config": name,
        "cold_s": cold,
        "warm_s": warm,
        "score_s": scored,
        "scores": scores,
        "lengths": [len(r) for r in rows],
        "peak_gib": torch.cuda.max_memory_allocated() / 2**30 if device.type == "cuda" else None,
        "report": report,
    }


#: `rmaudit run` variants: name -> (hf-classifier options, [executor] overlap).  "before
#: the pipeline": calls of the recipe's 256 inputs, scored and stored one after the other.
E2E_VARIANTS = {
    "before the pipeline: 256 per call, sequential": ({"items_per_call": 256}, False),
    "batch 8": ({"batch_size": 8, "max_batch_tokens": 10**9, "pad_to_multiple": 1}, True),
    "defaults": ({}, True),
}


def e2e(
    folder: Path,
    data: Path,
    rm_options: dict,
    variants: dict[str, tuple[dict, bool]],
    run_args: tuple[str, ...] = (),
) -> list[dict]:
    """Wall time of ``rmaudit run [run_args]`` scoring every response of the HH records with
    the saved model (process start, model load and storing included), and of its scores
    stage."""
    results = []
    for name, (options, overlap) in variants.items():
        table = "".join(f"{k} = {json.dumps(v)}\n" for k, v in {**rm_options, **options}.items())
        recipe = folder.parent / f"e2e-{folder.name}.toml"
        recipe.write_text(
            f'title = "bench_gpu"\nbatch_size = 256\n[pairs.source]\nname = "hh-pairs"\n'
            f'path = "{data}"\non_bad_record = "reject"\n[[reward_models]]\nlabel = "rm"\n'
            f'name = "hf-classifier"\n{table}[[metrics]]\nname = "pair-accuracy"\n'
            f'[executor]\nname = "local"\noverlap = {str(overlap).lower()}\n',
            encoding="utf-8",
        )
        db = folder.parent / f"e2e-{folder.name}.db"
        start = time.perf_counter()
        path = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))
        subprocess.run(
            [sys.executable, "-m", "rmaudit", "run", str(recipe), "--db", str(db), "--fresh"]
            + list(run_args),
            check=True,
            capture_output=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": path},
        )
        wall = time.perf_counter() - start
        with sqlite3.connect(db) as conn:
            scored = conn.execute("select count(*) from rm_scores").fetchone()[0]
            timings = json.loads(conn.execute("select timings from runs").fetchone()[0])
        results.append(
            {
                "model": folder.name,
                "variant": name,
                "wall_s": wall,
                "scored": scored,
                "stage_s": timings["scores: rm"],
                "timings": timings,
            }
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="h100")
    parser.add_argument(
        "--smoke", action="store_true", help="= --preset smoke --texts 32 --e2e (once), on CPU"
    )
    parser.add_argument("--models", nargs="*", help="names within the preset (default: all)")
    parser.add_argument("--configs", nargs="*", help="names of CONFIGS (default: all)")
    parser.add_argument("--texts", type=int, default=None, help="first N texts (default: all)")
    parser.add_argument("--hh", type=Path, default=HH_TEST)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", default=None, help="default: bfloat16 on cuda, float32 else")
    parser.add_argument(
        "--peak-tflops",
        type=float,
        default=None,
        help="for MFU; default 790 (H100/H200 dense bf16) on cuda",
    )
    parser.add_argument("--compile-backend", default="inductor")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument(
        "--e2e", action="store_true", help="also time `rmaudit run` (saves weights)"
    )
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    if args.smoke:
        args.preset, args.texts, args.device, args.e2e = "smoke", args.texts or 32, "cpu", True
        args.compile_backend = "eager"  # the smoke run checks compile's wiring, not inductor
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    dtype = getattr(torch, args.dtype or ("bfloat16" if device.type == "cuda" else "float32"))
    peak = args.peak_tflops or (790.0 if device.type == "cuda" else None)
    if args.hh.is_file() and not args.smoke:
        records, source = hh_records(args.hh, args.texts), f"HH-RLHF ({args.hh})"
    else:
        records, source = synthetic_records(args.texts or 4708), "synthetic, HH-like lengths"
    pairs = pairs_of(records)
    chosen = list(PRESETS[args.preset].items())
    chosen = [(n, s) for n, s in chosen if not args.models or n in args.models]
    configs = {
        n: c
        for n, c in CONFIGS.items()
        if (not args.configs or n in args.configs or c is None)
        and not (n in GPU_ONLY and device.type != "cuda")
    }
    cache: dict[str, object] = {}
    original_load = runtime.load_model
    # every configuration scores with the one model in memory (its folder holds no weights)
    runtime.load_model = lambda auto_class, model, **kw: (
        cache.get(model) or original_load(auto_class, model, **kw)
    )
    results, e2e_results = [], []
    with tempfile.TemporaryDirectory() as work:
        max_vocab = max(sizes["vocab_size"] for _, (_, sizes) in chosen)
        toks = tokenizers_for(
            [t for p, r in pairs for t in (p.text, r.text)], min(max_vocab, 32000)
        )
        data = Path(work) / "hh.jsonl.gz"  # what `rmaudit run` reads: the same records
        with gzip.open(data, "wt", encoding="utf-8") as handle:
            handle.writelines(json.dumps(record) + "\n" for record in records)
        for name, (family, sizes) in chosen:
            folder = Path(work) / name
            model = build_model(family, sizes, toks[family], folder, device, dtype, args.e2e)
            cache[str(folder)] = model
            rm_options = {
                "model": str(folder),
                "device": args.device,
                "dtype": str(dtype).removeprefix("torch."),
                "max_length": sizes["max_position_embeddings"],
            }
            for config, options in configs.items():
                row = run_config(config, options, model, rm_options, pairs, device, args)
                lengths = row.pop("lengths")
                row.update(model=name, tokens=sum(lengths), flops=mfu_flops(model, lengths))
                results.append(row)
                print(f"  {name} / {config}: {row['warm_s']:.2f} s", file=sys.stderr, flush=True)
            if args.e2e:
                variants = {"defaults": E2E_VARIANTS["defaults"]} if args.smoke else E2E_VARIANTS
                e2e_results += e2e(folder, data, {**rm_options, "model": str(folder)}, variants)
                args.e2e = not args.smoke  # the smoke run checks it once
            cache.pop(str(folder))
            del model
    print_table(
        results, e2e_results, source=source, texts=len(pairs), device=device, dtype=dtype, peak=peak
    )
    if args.json:
        for row in results:
            row["scores"] = row["scores"].tolist()
        args.json.write_text(json.dumps({"results": results, "e2e": e2e_results}, indent=1))


def print_table(results, e2e_results, *, source, texts, device, dtype, peak) -> None:
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(
        f"workload: {source}, {texts} texts; {name}, {str(dtype).removeprefix('torch.')}, "
        f"torch {torch.__version__}, transformers {transformers.__version__}, "
        f"{torch.get_num_threads()} CPU threads"
    )
    print(
        "| model | configuration | real tokens/s | MFU | vs naive | cold pass | through score "
        "(with tokenising) | peak memory | max |Δ| vs naive | pair flips |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    by_model = {}
    for row in results:
        by_model.setdefault(row["model"], []).append(row)
    for model, rows in by_model.items():
        base = rows[0]
        for row in rows:
            rate = row["tokens"] / row["warm_s"]
            mfu = f"{row['flops'] / row['warm_s'] / (peak * 1e12):.1%}" if peak else "n/a"
            delta = np.abs(row["scores"] - base["scores"]).max()
            flips = np.mean(
                np.sign(row["scores"][0::2] - row["scores"][1::2])
                != np.sign(base["scores"][0::2] - base["scores"][1::2])
            )
            memory = f"{row['peak_gib']:.1f} GiB" if row["peak_gib"] is not None else "n/a"
            print(
                f"| {model} | {row['config']} | {rate:,.0f} | {mfu} | "
                f"{base['warm_s'] / row['warm_s']:.2f}× | {row['cold_s']:.2f} s | "
                f"{row['tokens'] / row['score_s']:,.0f} tok/s | {memory} | {delta:.1e} | "
                f"{flips:.1%} |"
            )
    gpu_only = {row["model"]: row["warm_s"] for row in results if row["config"] == "defaults"}
    for row in e2e_results:
        print(
            f"e2e `rmaudit run` {row['model']} ({row['variant']}): {row['scored']} responses "
            f"in {row['wall_s']:.1f} s wall (startup and model load included); scores stage "
            f"(model load included) "
            f"{row['stage_s']:.1f} s = {row['stage_s'] / gpu_only[row['model']]:.2f}× the "
            f"defaults' GPU-only pass; every stage: "
            + ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in row["timings"].items())
        )


if __name__ == "__main__":
    main()
