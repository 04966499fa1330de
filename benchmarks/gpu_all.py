"""Every GPU figure of benchmarks/README.md in one run (issues 34 and 53), written to one JSON
file.

Run by ``benchmarks/gpu_all.sh`` (which prepares the data and the wheels the GPU machine
lacks, and turns the JSON into tables with ``gpu_report.py``).  Offline: random-weight
classifiers built from configs (``bench_gpu.PRESETS``: a Llama-style 1.0B and 8B, a
DeBERTa-v3-large-like 435M; ``--smoke``: tiny ones on CPU) and the HH-RLHF helpful-base test
dialogues (4,708 texts; made-up HH-like texts where the file is absent).  Per model, medians
of ``--repeats`` (2: the sections below fit 8 minutes of an H200 so):

- rmaudit's scoring (``hf-classifier`` at its defaults): real tokens/s and MFU, GPU work only
  (inputs tokenised beforehand; the first, cold pass timed apart) and through ``score``
  (tokenisation included);
- the naive reward-bench loop: a transformers ``text-classification`` pipeline, batches of 8
  in dataset order; and how far rmaudit's scores are from it (share within bf16 rounding,
  pair-preference flips);
- for the first model: ``rmaudit run`` end to end on the same items, the scoring checks'
  overhead (``rmaudit run --no-scoring-checks`` once), the A/B sections of ``_gpu_ab`` (the
  batching choices against the defaults with every row checked against the naive loop, the
  weights read straight to the device or through the host, a fresh process's first call),
  vLLM's classify path where ``vllm`` imports, and the served-RM parity run
  (``benchmarks/vllm_parity.py``) where ``vllm`` imports, in the time left.

The sections run in the order they matter (``Sections.ordered``: the 1B, its ``rmaudit run``,
the 8B, then the rest).  MFU = (2 × non-embedding parameters × real tokens + attention FLOPs) /
(time × the card's dense bf16 peak, ``PEAK_BF16_TFLOPS``).  The JSON is rewritten after every
section, so a run cut short keeps what it measured; a section past ``--budget-s`` is recorded
as skipped.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _gpu_ab  # noqa: E402
import bench_gpu  # noqa: E402  (sets HF_HUB_OFFLINE; puts src/ on the path)
import torch  # noqa: E402
import transformers  # noqa: E402
from _gpu_extras import (  # noqa: E402
    run_e2e,
    scoring_checks_overhead,
    served_parity,
    vllm_classify,
    write_records,
)
from _gpu_scoring import measure_model, peak_tflops  # noqa: E402
from _smoke import parse_args  # noqa: E402

ROOT = bench_gpu.ROOT


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
    parser.add_argument("--repeats", type=int, default=2)
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


#: texts of the A/B sections (the first of the workload): half the 1B's, to fit the time
AB_TEXTS = 2048
#: texts of each first-call child process
FIRST_CALL_TEXTS = 1024


class Sections:
    """Every section of the run, each a method that adds its figures; what they share: the
    workload, the models' tokenizers, the first model (saved, kept for its A/B sections)."""

    def __init__(self, args, pairs, records, device, dtype, figures: dict, work: Path) -> None:
        self.args, self.pairs, self.device, self.dtype = args, pairs, device, dtype
        self.figures, self.work = figures, work
        self.models = list(bench_gpu.PRESETS[args.preset].items())
        vocab = min(max(sizes["vocab_size"] for _, (_, sizes) in self.models), 32000)
        self.tokenizers = bench_gpu.tokenizers_for(
            [t for p, r in pairs for t in (p.text, r.text)], vocab
        )
        self.data = work / "hh.jsonl.gz"
        write_records(self.data, records)
        self.first = self.models[0][0]
        self.folder = work / self.first
        self.kept: dict = {}  # the first model's texts and module, once scored
        self.started = time.perf_counter()

    def ordered(self) -> list[tuple[str, object]]:
        """(name, measure) of each section, in the order they matter: the first model, its
        ``rmaudit run``, the largest other model (the 8B: a target of its own), the scoring
        checks' cost, the first model's A/B sections, the other models, vLLM and the
        served-RM parity run."""
        first, *others = self.models
        others.sort(
            key=lambda entry: -entry[1][1]["hidden_size"] * entry[1][1]["num_hidden_layers"]
        )
        score = [(f"scoring: {name}", lambda m=(name, fs): self.scoring(*m)) for name, fs in others]
        return [
            (f"scoring: {first[0]}", lambda: self.scoring(*first, save_weights=True)),
            ("rmaudit run", self.e2e),
            *score[:1],
            ("scoring checks", self.scoring_checks),
            ("a/b: batching", self.batching),
            ("a/b: loading", self.loading),
            ("a/b: first call", self.first_call),
            *score[1:],
            ("vllm", self.vllm),
            ("served parity", self.served),
        ]

    @property
    def first_figures(self) -> dict:
        return self.figures["models"][self.first]

    def scoring(self, name: str, family_sizes, save_weights: bool = False) -> None:
        family, sizes = family_sizes
        large = sizes["hidden_size"] * sizes["num_hidden_layers"] >= 4096 * 32
        subset = self.pairs[: self.args.texts_large] if large else self.pairs
        self.figures["models"][name], texts, model = measure_model(
            name,
            family,
            sizes,
            self.tokenizers,
            subset,
            self.work / name,
            self.device,
            self.dtype,
            self.args,
            save_weights,
        )
        if save_weights:
            self.kept.update(texts=texts, module=model)

    def e2e(self) -> None:
        model = self.first_figures
        self.figures["e2e"] = run_e2e(
            self.folder,
            self.data,
            model["rm_options"],
            self.args.repeats,
            model["rmaudit"]["gpu_only_s"],
        )

    def scoring_checks(self) -> None:
        if "e2e" in self.figures:  # once: its wall time against the e2e's
            self.figures["scoring_checks"] = scoring_checks_overhead(
                self.folder, self.data, self.first_figures["rm_options"], self.figures["e2e"], 1
            )

    def batching(self) -> None:
        subset = self.pairs[:AB_TEXTS]
        model = self.first_figures
        naive = np.asarray(model["naive_pipeline"]["scores"][: len(subset)], dtype=float)
        self.figures["ab"] = {
            "texts": len(subset),
            "configs": _gpu_ab.configs(
                self.kept.pop("module"),
                model["rm_options"],
                subset,
                naive,
                self.device,
                self.dtype,
                self.args,
            ),
        }

    def loading(self) -> None:
        self.figures["load"] = _gpu_ab.load(self.folder, self.device, self.dtype, self.args.repeats)

    def first_call(self) -> None:
        self.figures["first_call"] = _gpu_ab.first_call(
            self.folder, self.first_figures["rm_options"], self.pairs[:FIRST_CALL_TEXTS], self.work
        )

    def vllm(self) -> None:
        self.figures["vllm"] = vllm_classify(
            self.folder,
            self.kept["texts"],
            self.first_figures["real_tokens"],
            self.args.repeats,
            self.work,
        )

    def served(self) -> None:
        left = self.args.budget_s - (time.perf_counter() - self.started)
        self.figures["served"] = served_parity(self.work, left)


def measure_all(args, pairs, records, device, dtype, figures, save, in_budget) -> None:
    """Each section in order while the time budget lasts (a later one is recorded as
    skipped); the sections after the first model's need it."""
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        sections = Sections(args, pairs, records, device, dtype, figures, Path(work))
        for name, measure in sections.ordered():
            needs_first = not name.startswith("scoring: ")
            if needs_first and sections.first not in figures["models"]:
                continue
            if in_budget(name):
                measure()
                save()


if __name__ == "__main__":
    main()
