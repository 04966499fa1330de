"""The parity check against a real ``vllm serve`` (issue 49): a checkpoint served by vLLM's
pooling runner audited beside the same checkpoint in-process, and ``rmaudit compare``'s parity
section between them — the check users of vLLM #12791 and #30312 needed.  Needs vLLM (a GPU
machine); without it the script says so and stops (benchmarks/gpu_all.sh runs it when vLLM
imports).

    python benchmarks/vllm_parity.py [--model ID_OR_FOLDER] [--data-dir ../shared/data]
        [--protocol vllm-pooling] [--out DIR]

``--model``: the checkpoint (default: a random-weight Llama classifier of bench_gpu.py's
``cpu`` preset, built here, with a chat template); ``--data-dir``: the data of the llmbar suite
(default: LLMBar's layout written here from synthetic pairs of HH-like lengths).  vLLM serves
it in float32 (``--dtype``) so the two sides compute alike; the audit's checks and the parity
section say where they do not.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))  # run from a checkout
sys.path.insert(0, str(ROOT))

from _smoke import parse_args  # noqa: E402

LLMBAR_SUBSETS = ("Natural", "Adversarial/Neighbor", "Adversarial/GPTInst", "Adversarial/GPTOut",
                  "Adversarial/Manual")  # fmt: skip
#: how long vLLM may take to load the model and answer /health
START_S = 600


def synthetic_llmbar(root: Path, pairs: int) -> Path:
    """LLMBar's layout under ``root`` from synthetic HH-like pairs."""
    from bench_gpu import pairs_of, synthetic_records

    scored = pairs_of(synthetic_records(2 * pairs))
    for i, subset in enumerate(LLMBAR_SUBSETS):
        rows = []
        for j in range(i, len(scored) // 2, len(LLMBAR_SUBSETS)):
            (prompt, chosen), (_, rejected) = scored[2 * j], scored[2 * j + 1]
            rows.append({"input": prompt.text, "output_1": chosen.text,
                         "output_2": rejected.text, "label": 1})  # fmt: skip
        path = root / "llmbar" / "LLMBar" / subset / "dataset.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rows), encoding="utf-8")
    return root


def tiny_checkpoint(folder: Path) -> Path:
    """bench_gpu.py's ``llama-5m`` with random weights and a chat template, saved."""
    import torch
    from bench_gpu import PRESETS, build_model, pairs_of, synthetic_records, tokenizers_for

    family, sizes = PRESETS["cpu"]["llama-5m"]
    texts = [p.text + r.text for p, r in pairs_of(synthetic_records(400))]
    tokenizer = tokenizers_for(texts, sizes["vocab_size"])[family]
    build_model(family, sizes, tokenizer, folder, torch.device("cpu"), torch.float32, True)
    return folder


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve(model: str, port: int, log: Path) -> subprocess.Popen:
    """``vllm serve MODEL --runner pooling`` on 127.0.0.1:PORT, once /health answers."""
    command = ["vllm", "serve", model, "--runner", "pooling", "--host", "127.0.0.1",
               "--port", str(port), "--dtype", "float32", "--max-model-len", "4096",
               "--gpu-memory-utilization", "0.3"]  # fmt: skip
    process = subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"vllm serve exited with {process.returncode}: see {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as reply:
                if reply.status == 200:
                    return process
        except OSError:
            time.sleep(1)
    process.terminate()
    raise RuntimeError(f"vllm serve did not answer /health within {START_S} s: see {log}")


def rmaudit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rmaudit", *args], capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="the checkpoint (default: a tiny one built here)")
    parser.add_argument("--data-dir", type=Path, help="data of the llmbar suite")
    parser.add_argument("--protocol", default="vllm-pooling",
                        choices=["vllm-pooling", "vllm-classify"])  # fmt: skip
    parser.add_argument("--pairs", type=int, default=200, help="synthetic pairs (no --data-dir)")
    parser.add_argument("--out", type=Path, help="write vllm_parity.json here")
    args = parse_args(parser, {"pairs": 10})
    if importlib.util.find_spec("vllm") is None:
        print("vLLM is not installed here: no real server to compare (pip install vllm on a GPU)")
        return
    work = Path(tempfile.mkdtemp(prefix="vllm-parity-"))
    model = args.model or str(tiny_checkpoint(work / "llama-5m"))
    data = args.data_dir or synthetic_llmbar(work / "data", args.pairs)
    port = free_port()
    process = serve(model, port, work / "vllm.log")
    db = work / "audit.db"
    try:
        audited = rmaudit("audit", f"http://127.0.0.1:{port}", "--rm-protocol", args.protocol,
                          "--rm-tokenizer", model, "--rm-dtype", "float32", model,
                          "--dtype", "float32", "--suite", "llmbar", "--data-dir", str(data),
                          "--db", str(db), "--details")  # fmt: skip
    finally:
        process.terminate()
        process.wait()
    print(audited.stderr[-4000:])
    if audited.returncode != 0:
        raise SystemExit(f"the audit failed ({audited.returncode})")
    compared = rmaudit("compare", str(db))
    print(compared.stdout)
    as_json = rmaudit("compare", str(db), "--json")
    found = json.loads(as_json.stdout)["parity"] if as_json.returncode == 0 else []
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "vllm_parity.json").write_text(json.dumps(found, indent=2), encoding="utf-8")
    shutil.rmtree(work)  # kept only when a step fails: its errors point at the log and the DB


if __name__ == "__main__":
    main()
