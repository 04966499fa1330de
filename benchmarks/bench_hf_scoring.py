"""RM scoring throughput: length-bucketed batches (hf-classifier) versus fixed-order batches.

Workload: the (prompt, chosen response) pairs of Anthropic HH-RLHF helpful-base test
(``../shared/data/hh-rlhf/helpful-base/test.jsonl.gz``; the prompt is the dialogue up to the
last "Assistant:" turn), or, where that file is absent, synthetic texts whose lengths follow
a log-normal fitted to it.  Model: a randomly initialised GPT-2 sequence classifier
(``--layers``, ``--hidden``) with a byte-level BPE tokenizer trained on the workload, saved
and loaded through ``hf-classifier`` like any checkpoint; ``max_length`` 512, batch size 16.

Both strategies tokenise the same way (not timed) and run the same model; naive batching
takes the pairs in data order and pads every batch to its longest row, bucketed batching is
``hf-classifier``'s (sorted by length, padded per bucket, order restored).  Reported:
real (unpadded) tokens per second, the share of padding, and the largest score difference
between the two (should be float rounding).

    python benchmarks/bench_hf_scoring.py [--pairs 512] [--repeats 2] [--device cpu] [--threads 1]
"""

from __future__ import annotations

import argparse
import gzip
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

import torch  # noqa: E402
import transformers  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402

from _smoke import parse_args  # noqa: E402
from rmaudit.components import Prompt, Response  # noqa: E402
from rmaudit.default_plugins.huggingface import HFClassifier  # noqa: E402
from rmaudit.hf.batching import length_buckets  # noqa: E402
from rmaudit.hf.runtime import right_padded  # noqa: E402

HH_TEST = Path(__file__).resolve().parents[2] / "shared/data/hh-rlhf/helpful-base/test.jsonl.gz"
TEMPLATE = ("{% for m in messages %}\n\n{{ 'Human' if m['role'] == 'user' else 'Assistant' }}: "
            "{{ m['content'] }}{% endfor %}{{ eos_token }}")


def hh_pairs(limit: int, synthetic: bool) -> tuple[list[tuple[str, str]], str]:
    if synthetic or not HH_TEST.is_file():
        return synthetic_pairs(limit), "synthetic (log-normal lengths fitted to HH-RLHF)"
    pairs = []
    with gzip.open(HH_TEST, "rt", encoding="utf-8") as handle:
        for line in handle:
            dialogue = json.loads(line)["chosen"]
            prompt, _, response = dialogue.rpartition("\n\nAssistant:")
            pairs.append((prompt.strip(), response.strip()))
            if len(pairs) == limit:
                break
    return pairs, f"HH-RLHF helpful-base test, first {len(pairs)} chosen dialogues"


def synthetic_pairs(limit: int) -> list[tuple[str, str]]:
    """Word salad whose character lengths follow HH-RLHF's (median ≈ 650, long right tail)."""
    rng = np.random.default_rng(0)
    words = "the a model answer question because people often would like to know how".split()
    lengths = rng.lognormal(mean=6.45, sigma=0.85, size=(limit, 2)) / 6
    return [(" ".join(rng.choice(words, max(1, int(p)))), " ".join(rng.choice(words, max(1, int(r)))))
            for p, r in lengths]


def build_model(folder: Path, texts: list[str], *, layers: int, hidden: int) -> str:
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=8000, special_tokens=["<pad>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", chat_template=TEMPLATE,
        model_input_names=["input_ids", "attention_mask"])
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=len(tokenizer), n_embd=hidden, n_layer=layers,
                                     n_head=max(1, hidden // 64), n_positions=512, num_labels=1,
                                     pad_token_id=tokenizer.pad_token_id,
                                     bos_token_id=tokenizer.eos_token_id,
                                     eos_token_id=tokenizer.eos_token_id)
    transformers.GPT2ForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def naive_scores(rm: HFClassifier, encodings: list[dict[str, list[int]]]) -> np.ndarray:
    """Fixed-order batches of ``batch_size``, each padded to its longest row."""
    size, device = rm.options.batch_size, next(rm.model.parameters()).device
    out = []
    for start in range(0, len(encodings), size):
        inputs = right_padded(encodings[start:start + size], rm.model.config.pad_token_id, device)
        with torch.inference_mode():
            out.append(rm.model(**inputs).logits[:, 0].float().cpu().numpy())
    return np.concatenate(out)


def padded_tokens(lengths: list[int], batches: list[list[int]]) -> int:
    return sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    # one thread by default: on a shared CPU, idle OpenMP threads waiting at every op's
    # barrier make time track the number of ops rather than the work, hiding what padding costs
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--synthetic", action="store_true",
                        help="synthetic texts even where the HH-RLHF file is present")
    args = parse_args(parser, {"pairs": 16, "repeats": 1, "layers": 1, "hidden": 32,
                               "batch_size": 8, "synthetic": True})
    torch.set_num_threads(args.threads)

    texts, source = hh_pairs(args.pairs, args.synthetic)
    with tempfile.TemporaryDirectory() as folder:
        path = build_model(Path(folder), [t for pair in texts for t in pair],
                           layers=args.layers, hidden=args.hidden)
        rm = HFClassifier(HFClassifier.Options(model=path, max_length=512, device=args.device,
                                               batch_size=args.batch_size))
        batch = [(Prompt(f"p{i}", p), Response(f"r{i}", f"p{i}", 0, r))
                 for i, (p, r) in enumerate(texts)]
        rm.score(batch[:args.batch_size])  # load the model and warm up
        encoded = [rm.encode(p, r) for p, r in batch]
        encodings = [e for e, _ in encoded]
        truncated = sum(t for _, t in encoded)
        lengths = [len(e["input_ids"]) for e in encodings]
        real = sum(lengths)

        fixed = [list(range(s, min(s + args.batch_size, len(lengths))))
                 for s in range(0, len(lengths), args.batch_size)]
        bucketed = length_buckets(lengths, batch_size=args.batch_size)
        timings: dict[str, list[float]] = {"naive fixed-order": [], "length-bucketed": []}
        for _ in range(args.repeats):
            start = time.perf_counter()
            naive = naive_scores(rm, encodings)
            timings["naive fixed-order"].append(time.perf_counter() - start)
            start = time.perf_counter()
            scores = np.asarray(rm.score(batch))  # includes tokenisation, which naive skips
            timings["length-bucketed"].append(time.perf_counter() - start)

    print(f"workload: {source}; {len(texts)} pairs, {real} tokens after truncation to 512 "
          f"(median {int(np.median(lengths))}, max {max(lengths)}); {truncated} truncated")
    print(f"model: GPT-2 classifier, {args.layers} layers, hidden {args.hidden}, "
          f"{sum(p.numel() for p in rm.model.parameters()) / 1e6:.1f} M parameters, "
          f"on {args.device}; batch size {args.batch_size}")
    print(f"machine: {platform.processor() or platform.machine()}, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads), transformers {transformers.__version__}")
    for name, batches in (("naive fixed-order", fixed), ("length-bucketed", bucketed)):
        best = min(timings[name])
        padding = 1 - real / padded_tokens(lengths, batches)
        print(f"{name:>18}: best {best:.2f} s of {args.repeats}, {real / best:,.0f} tokens/s, "
              f"{padding:.0%} of computed positions are padding")
    speedup = min(timings["naive fixed-order"]) / min(timings["length-bucketed"])
    print(f"speed-up: {speedup:.2f}x; largest score difference {np.abs(scores - naive).max():.1e}")


if __name__ == "__main__":
    main()
