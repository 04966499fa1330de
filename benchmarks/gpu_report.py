"""The tables of benchmarks/README.md ("GPU: every figure") and docs/scaling.md's capacity plan
from the JSON that ``gpu_all.sh`` writes (issue 34): markdown to stdout, or ``--write`` into
the two files between their ``<!-- gpu-report:NAME -->`` markers.

    python benchmarks/gpu_report.py OUT/gpu_all.json            # print
    python benchmarks/gpu_report.py OUT/gpu_all.json --write    # fill the docs' tables

``--write`` also keeps the figures as benchmarks/gpu/CARD-DATE-gpu_all.json and fills the
"what changed" block: every figure beside the H200 run of 2026-11-27's (``BASELINE``).

Several files of one card (a section rerun alone, e.g. the 8B after a run cut short) are
merged: models and sections from each, the first file's header.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _gpu_changes import changes  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TARGETS_MFU = {"llama-1b": 0.45, "llama-8b": 0.50}
#: the run "what changed" compares against: the H200's of 2026-11-27 (its files, merged)
BASELINE = "h200-2026-11-27-*.json"
#: the capacity plan's workloads (docs/scaling.md): ≈ 450 tokens per response
RETA_TOKENS, MILLION_TOKENS, CLUSTER_GPUS = 25_600 * 450, 1_000_000 * 450, 64


def _rate(tokens: int, seconds: float) -> str:
    return f"{tokens / seconds:,.0f}"


def _mfu(figures: dict, seconds: float, peak: float | None) -> str:
    return f"{figures['flops'] / seconds / (peak * 1e12):.1%}" if peak else "n/a"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def scoring_table(data: dict) -> list[str]:
    meta, peak = data["meta"], data["meta"]["peak_bf16_tflops"]
    lines = [
        f"{meta['card']}, {meta['dtype']}, commit {meta['commit']}, torch {meta['torch']}, "
        f"transformers {meta['transformers']}; {meta['workload']}; medians of "
        f"{meta['repeats']}; peak {peak or 'unknown'} TFLOP/s (dense bf16) for MFU.",
        "",
        "| model | texts (real tokens) | rmaudit, GPU only: tokens/s (MFU) | rmaudit through "
        "`score` | naive pipeline, batch 8: tokens/s (MFU) | rmaudit / naive | within bf16 "
        "of naive | pair flips | peak memory |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, m in data["models"].items():
        ours, naive, agree = m["rmaudit"], m["naive_pipeline"], m["agreement"]
        memory = f"{m['peak_memory_gib']:.1f} GiB" if m["peak_memory_gib"] is not None else "n/a"
        tokens = m["real_tokens"]
        lines.append(
            f"| {name} | {m['texts']:,} ({tokens:,}) | {_rate(tokens, ours['gpu_only_s'])} "
            f"({_mfu(m, ours['gpu_only_s'], peak)}) | {_rate(tokens, ours['score_s'])} | "
            f"{_rate(tokens, naive['median_s'])} ({_mfu(m, naive['median_s'], peak)}) | "
            f"{naive['median_s'] / ours['gpu_only_s']:.2f}× | {agree['within_bf16']:.1%} | "
            f"{agree['pair_flips']:.1%} of {agree['pairs']:,} | {memory} |"
        )
    return lines


def e2e_lines(data: dict) -> list[str]:
    lines = []
    if "e2e" in data:
        e = data["e2e"]
        lines += [
            "",
            "| `rmaudit run` (first model) | responses | wall | scores stage | GPU-only pass | "
            "wall / GPU only | stage / GPU only |",
            "|---|---|---|---|---|---|---|",
            f"| {next(iter(data['models']))} | {e['responses']:,} | {e['wall_s']:.1f} s | "
            f"{e['stage_s']:.1f} s | {e['gpu_only_s']:.1f} s | {e['wall_vs_gpu_only']:.2f}× | "
            f"{e['stage_vs_gpu_only']:.2f}× |",
        ]
    pre = data.get("scoring_checks")
    if pre is not None:
        if not pre["available"]:
            text = f"not available ({pre['reason']})"
        else:
            text = (
                f"{pre['overhead_s']:+.1f} s on `rmaudit run` ({pre['overhead_share']:+.1%}; "
                f"with `--no-scoring-checks`: {pre['wall_without_s']:.1f} s)"
            )
        lines += ["", f"Scoring checks: {text}."]
    vllm = data.get("vllm")
    if vllm is not None:
        text = (
            f"vLLM {vllm['version']} `classify`: {vllm['tokens_per_s']:,.0f} tokens/s"
            if vllm["available"]
            else f"not available ({vllm['reason'].splitlines()[-1]})"
        )
        lines += ["", f"vLLM on the first model: {text}."]
    served = data.get("served")
    if served is not None:
        lines += ["", f"Served-RM parity: {served_text(served)}."]
    if data.get("skipped"):
        lines += ["", f"Skipped (past the time budget): {', '.join(data['skipped'])}."]
    return lines


def served_text(served: dict) -> str:
    if not served["available"]:
        return f"not run ({served['reason'].splitlines()[-1]})"
    said = [
        f"{row['served']} against {row['checkpoint']}: "
        + (
            f"{row['within_tolerance']:.1%} of {row['responses']:,} scores within "
            f"{row['tolerance']:g}, largest difference {row['largest_difference']:.2g}, "
            f"{row['flips']} of {row['pairs']:,} pairs flipped"
            if "responses" in row
            else row["note"]
        )
        for row in served["parity"]
    ]
    return f"{'; '.join(said) or 'no parity section'} ({served['seconds']:.0f} s)"


def ab_lines(data: dict) -> list[str]:
    """The A/B sections (issue 53): the batching choices on the first model, each row's
    scores against the naive loop's; the weights' loading; a fresh process's first call."""
    lines: list[str] = []
    peak, first = data["meta"]["peak_bf16_tflops"], next(iter(data["models"]), None)
    ab = data.get("ab")
    if ab and first:
        flops_per_token = data["models"][first]["flops"] / data["models"][first]["real_tokens"]
        configs = {name: c for name, c in ab["configs"].items() if c["available"]}
        base = configs.get("defaults")
        lines += [
            "",
            f"| A/B on {first} (first {ab['texts']:,} texts) | GPU only: tokens/s (MFU) | "
            "vs defaults | cold pass | through `score`: tokens/s | within the dtype of naive | "
            "pair flips |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, c in configs.items():
            agree = c["agreement"]
            mfu = (
                f"{flops_per_token * c['tokens'] / c['warm_s'] / (peak * 1e12):.1%}"
                if peak
                else "n/a"
            )
            versus = f"{base['warm_s'] / c['warm_s']:.2f}×" if base else "n/a"
            lines.append(
                f"| {name} | {_rate(c['tokens'], c['warm_s'])} ({mfu}) | {versus} | "
                f"{c['cold_s']:.2f} s | {_rate(c['tokens'], c['score_s'])} | "
                f"{agree['within_dtype']:.1%} of {agree['rows']:,} | {agree['pair_flips']:.1%} |"
            )
        for name, c in ab["configs"].items():
            if not c["available"]:
                lines.append(f"| {name} | not run: {c['reason'].splitlines()[0]} | | | | | |")
    load = data.get("load")
    if load:
        same = "yes" if load["same_weights"] else "**no**"
        lines += [
            "",
            f"Weights read onto the device: straight {load['straight to the device']:.2f} s, "
            f"through the host {load['host, then moved']:.2f} s (the same weights: {same}).",
        ]
    call = data.get("first_call")
    if call:
        text = (
            f"encoded while the weights load {call['encoded while loading']:.1f} s, the "
            f"weights loaded first {call['loaded first']:.1f} s (the same scores, bit for bit: "
            f"{'yes' if call['equal_scores'] else '**no**'})"
            if call["available"]
            else f"not run ({call['reason'].splitlines()[-1]})"
        )
        items = f" of {call['items']:,} inputs" if call.get("items") else ""
        lines += ["", f"A fresh process's first `score` call{items}, load included: {text}."]
    return lines


def targets(data: dict) -> list[str]:
    """Issue 34's targets, each with what was measured and whether it holds."""
    peak, rows = data["meta"]["peak_bf16_tflops"], []
    for name, goal in TARGETS_MFU.items():
        if name in data["models"] and peak:
            m = data["models"][name]
            mfu = m["flops"] / m["rmaudit"]["gpu_only_s"] / (peak * 1e12)
            rows.append((f"MFU of {name} ≥ {goal:.0%}", f"{mfu:.1%}", mfu >= goal))
    if "llama-1b" in data["models"]:
        m = data["models"]["llama-1b"]
        gain = m["naive_pipeline"]["median_s"] / m["rmaudit"]["gpu_only_s"]
        rows.append(("llama-1b ≥ 3× the naive loop", f"{gain:.2f}×", gain >= 3))
    if "e2e" in data:
        ratio = data["e2e"]["wall_vs_gpu_only"]
        rows.append(("`rmaudit run` ≤ 1.3× the GPU-only time", f"{ratio:.2f}×", ratio <= 1.3))
    for name, m in data["models"].items():
        share = m["agreement"]["within_bf16"]
        rows.append((f"{name}: ≥ 99 % within bf16 of naive", f"{share:.1%}", share >= 0.99))
    lines = ["", "| target | measured | met |", "|---|---|---|"]
    return lines + [
        f"| {goal} | {value} | {'yes' if ok else '**no**'} |" for goal, value, ok in rows
    ]


def capacity(data: dict) -> list[str]:
    """docs/scaling.md's scoring rows from the measured throughput per GPU."""
    lines = [
        f"Measured on one {data['meta']['card']} (commit {data['meta']['commit']}): rmaudit's "
        f"GPU-only throughput on {data['meta']['workload']}, applied to responses of ≈ 450 "
        "tokens.",
        "",
        f"| scoring, one RM | tokens/s per GPU (MFU) | RETA benchmark, 11.5M tokens: 1 GPU / "
        f"{CLUSTER_GPUS} GPUs | 1M responses, 450M tokens: {CLUSTER_GPUS} GPUs |",
        "|---|---|---|---|",
    ]
    for name, m in data["models"].items():
        rate = m["real_tokens"] / m["rmaudit"]["gpu_only_s"]
        mfu = _mfu(m, m["rmaudit"]["gpu_only_s"], data["meta"]["peak_bf16_tflops"])
        lines.append(
            f"| {name} | {rate:,.0f} ({mfu}) | {_duration(RETA_TOKENS / rate)} / "
            f"{_duration(RETA_TOKENS / rate / CLUSTER_GPUS)} | "
            f"{_duration(MILLION_TOKENS / rate / CLUSTER_GPUS)} |"
        )
    return lines


def merged(runs: list[dict]) -> dict:
    """One figures dict from runs on the same card: later runs add models and sections; a
    section skipped by one run but measured by another is not reported as skipped."""
    cards = {run["meta"]["card"] for run in runs}
    if len(cards) > 1:
        raise SystemExit(f"gpu_report: figures from different cards: {sorted(cards)}")
    data: dict = {"meta": runs[0]["meta"], "models": {}}
    for run in runs:
        if "preflight" in run:  # files measured before the scoring checks were named so
            run = {**run, "scoring_checks": run["preflight"]}
            del run["preflight"]
        data["models"].update(run["models"])
        data.update({k: v for k, v in run.items() if k not in ("meta", "models", "skipped")})
    skipped = {s for run in runs for s in run.get("skipped", [])}
    measured = {f"scoring: {name}" for name in data["models"]} | {
        {"e2e": "rmaudit run", "scoring_checks": "scoring checks"}.get(key, key) for key in data
    }
    if skipped - measured:
        data["skipped"] = sorted(skipped - measured)
    return data


def sections(data: dict, baseline: dict | None = None) -> dict[str, str]:
    blocks = {
        "scoring": "\n".join(
            scoring_table(data) + e2e_lines(data) + ab_lines(data) + targets(data)
        ),
        "capacity": "\n".join(capacity(data)),
    }
    if baseline is not None:
        blocks["changes"] = "\n".join(changes(baseline, data))
    return blocks


def baseline_run() -> dict:
    """The run the "what changed" section compares against (BASELINE's files, merged)."""
    files = sorted((ROOT / "benchmarks/gpu").glob(BASELINE))
    return merged([json.loads(path.read_text(encoding="utf-8")) for path in files])


def stored_as(data: dict) -> Path:
    """Where a run's figures are kept: benchmarks/gpu/CARD-DATE-gpu_all.json (CARD: the
    card's model, such as h200; DATE: the day it started)."""
    words = [w for w in data["meta"]["card"].split() if any(c.isdigit() for c in w)]
    card = re.sub(r"[^a-z0-9]+", "-", (words[0] if words else data["meta"]["card"]).lower())
    return ROOT / "benchmarks/gpu" / f"{card}-{data['meta']['started'][:10]}-gpu_all.json"


def write(blocks: dict[str, str]) -> list[Path]:
    """Each block between its markers, in whichever of the two files holds them."""
    written = []
    for path in (ROOT / "benchmarks/README.md", ROOT / "docs/scaling.md"):
        text = original = path.read_text(encoding="utf-8")
        for name, block in blocks.items():
            pattern = re.compile(
                rf"(<!-- gpu-report:{name} -->\n).*?(\n<!-- /gpu-report:{name} -->)", re.S
            )
            text = pattern.sub(lambda match, block=block: match[1] + block + match[2], text)
        if text != original:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("figures", type=Path, nargs="+", help="gpu_all.json (one card)")
    parser.add_argument("--write", action="store_true", help="fill the docs' tables")
    args = parser.parse_args()
    runs = [json.loads(path.read_text(encoding="utf-8")) for path in args.figures]
    data = merged(runs)
    blocks = sections(data, baseline_run())
    if args.write:
        for source, run in zip(args.figures, runs, strict=True):
            kept = stored_as(run)
            if source.resolve() != kept.resolve():
                kept.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
                print(f"kept {kept.relative_to(ROOT)}")
        for path in write(blocks):
            print(f"wrote {path.relative_to(ROOT)}")
    else:
        print("\n\n".join(blocks.values()))


if __name__ == "__main__":
    main()
