"""The "what changed" section of ``gpu_report.py`` (issue 53): every figure of the scoring,
end-to-end and target tables of one run beside the same figure of another (the H200 run of
2026-11-27), row by row, with the change: a ratio for rates and times, a difference in points
for shares.  A row one run lacks says so."""

from __future__ import annotations

from collections.abc import Callable

#: (how a value is written, how two are compared) by the kind of figure
Kind = tuple[Callable[[float], str], Callable[[float, float], str]]
RATE: Kind = (lambda v: f"{v:,.0f}", lambda old, new: f"{new / old:.2f}×")
SECONDS: Kind = (lambda v: f"{v:.1f} s", lambda old, new: f"{new / old:.2f}×")
TIMES: Kind = (lambda v: f"{v:.2f}×", lambda old, new: f"{new - old:+.2f}")
SHARE: Kind = (lambda v: f"{v:.1%}", lambda old, new: f"{(new - old) * 100:+.1f} pp")
GIB: Kind = (lambda v: f"{v:.1f} GiB", lambda old, new: f"{new / old:.2f}×")
ADDED: Kind = (lambda v: f"{v:+.1f} s", lambda old, new: f"{new - old:+.1f} s")


def _model_rows(name: str, m: dict, peak: float | None) -> dict[str, tuple[float, Kind]]:
    ours, naive, agree = m["rmaudit"], m["naive_pipeline"], m["agreement"]
    tokens = m["real_tokens"]
    rows = {
        f"{name}: rmaudit GPU only, tokens/s": (tokens / ours["gpu_only_s"], RATE),
        f"{name}: rmaudit through `score`, tokens/s": (tokens / ours["score_s"], RATE),
        f"{name}: naive pipeline, tokens/s": (tokens / naive["median_s"], RATE),
        f"{name}: rmaudit / naive": (naive["median_s"] / ours["gpu_only_s"], TIMES),
        f"{name}: within bf16 of naive": (agree["within_bf16"], SHARE),
        f"{name}: pair flips": (agree["pair_flips"], SHARE),
    }
    if peak:
        rows[f"{name}: MFU, GPU only"] = (m["flops"] / ours["gpu_only_s"] / (peak * 1e12), SHARE)
    if m.get("peak_memory_gib") is not None:
        rows[f"{name}: peak memory"] = (m["peak_memory_gib"], GIB)
    return rows


def figures(data: dict) -> dict[str, tuple[float, Kind]]:
    """Every compared figure of a run, by its row's label."""
    peak = data["meta"]["peak_bf16_tflops"]
    rows: dict[str, tuple[float, Kind]] = {}
    for name, m in data["models"].items():
        rows.update(_model_rows(name, m, peak))
    if "e2e" in data:
        e = data["e2e"]
        rows["`rmaudit run`: wall"] = (e["wall_s"], SECONDS)
        rows["`rmaudit run`: scores stage"] = (e["stage_s"], SECONDS)
        rows["`rmaudit run`: wall / GPU only"] = (e["wall_vs_gpu_only"], TIMES)
    checks = data.get("scoring_checks")
    if checks and checks.get("available"):
        rows["scoring checks: added to `rmaudit run`"] = (checks["overhead_s"], ADDED)
    return rows


def changes(before: dict, after: dict) -> list[str]:
    """The table of every figure of ``before`` and ``after`` by row, in ``after``'s order
    (then the rows only ``before`` has)."""
    old, new = figures(before), figures(after)
    lines = [
        f"Against {before['meta']['card']}, commit {before['meta']['commit']}, "
        f"{before['meta']['started'][:10]} (medians of {before['meta']['repeats']}); this run: "
        f"{after['meta']['card']}, commit {after['meta']['commit']}, "
        f"{after['meta']['started'][:10]} (medians of {after['meta']['repeats']}).",
        "",
        "| figure | before | this run | change |",
        "|---|---|---|---|",
    ]
    for label in [*new, *(label for label in old if label not in new)]:
        if label in old and label in new:
            (was, kind), (now, _) = old[label], new[label]
            write, compare = kind
            change = compare(was, now) if was else "n/a"
            lines.append(f"| {label} | {write(was)} | {write(now)} | {change} |")
        elif label in new:
            now, (write, _) = new[label]
            lines.append(f"| {label} | not measured | {write(now)} | new |")
        else:
            was, (write, _) = old[label]
            lines.append(f"| {label} | {write(was)} | not measured | — |")
    return lines
