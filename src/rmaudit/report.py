"""``rmaudit report``: PNG plots of a run's curves and a Markdown summary (the ``report`` extra).

Every stored curve gets a plot, one line per RM with a ±1 stderr band: the RETA curve
against −log2 η (the RETA paper's Fig. 3), best-of-n style curves against n on a log2 axis
and against KL = log n − (n−1)/n side by side, and any other curve (a reliability diagram, a
shift curve) against its own x.  Matplotlib is used through ``Figure`` objects, never pyplot,
so nothing global changes and no display is needed.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from rmaudit.browse import ACROSS_RMS
from rmaudit.components import RUN_LEVEL
from rmaudit.metrics import bon_kl
from rmaudit.results import Curve, RunSummary, load_summary
from rmaudit.simulated import SIMULATED_NOTICE
from rmaudit.store import Store

REPORT_NAME = "report.md"


def format_cell(value: float | None, stderr: float | None) -> str:
    """A leaderboard cell as the Markdown table shows it: value ± stderr, four decimals."""
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:.4f} ± {stderr:.4f}" if stderr is not None and math.isfinite(stderr) else f"{value:.4f}"


def _is_best_of_n(key: str) -> bool:
    return re.fullmatch(r"bon\d*_curve", key) is not None


def _plot_rms(ax: Axes, summary: RunSummary, metric: str, key: str, transform=lambda x: x) -> None:
    """One line and ±1 stderr band per RM, and for the run-level curve of a metric across RMs."""
    for label, rm_key in (*summary.reward_models, (ACROSS_RMS, RUN_LEVEL)):
        curve: Curve | None = summary.curves.get((rm_key, metric, key))
        if curve is None:
            continue
        x = transform(curve.x)
        stderr = np.nan_to_num(curve.stderr)
        (line,) = ax.plot(x, curve.value, marker="o", markersize=3, label=label)
        ax.fill_between(x, curve.value - stderr, curve.value + stderr, color=line.get_color(),
                        alpha=0.2, linewidth=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")


def _title(summary: RunSummary, what: str) -> str:
    return f"{what}{' (SIMULATED)' if summary.simulated else ''}"


def curve_figure(summary: RunSummary, metric: str, key: str) -> Figure:
    """The figure of one stored curve, every RM of the run on it."""
    first = next(c for (_, m, k), c in summary.curves.items() if (m, k) == (metric, key))
    if key == "reta_curve":
        figure = Figure(figsize=(7, 4.5), layout="constrained")
        ax = figure.add_subplot()
        _plot_rms(ax, summary, metric, key, lambda eta: -np.log2(eta))
        ax.set_xlabel("−log₂ η  (smaller η: the RM's more extreme favourites)")
        ax.set_ylabel("RETA(η)  (1 = a random RM)")
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
        ax.set_title(_title(summary, "RETA curve, ±1 stderr across prompts"))
        return figure
    if _is_best_of_n(key):
        figure = Figure(figsize=(11, 4.5), layout="constrained")
        by_n, by_kl = figure.subplots(1, 2, sharey=True)
        _plot_rms(by_n, summary, metric, key)
        by_n.set_xscale("log", base=2)
        by_n.set_xlabel("n (responses drawn)")
        _plot_rms(by_kl, summary, metric, key, lambda n: bon_kl(np.rint(n).astype(int)))
        by_kl.set_xlabel("KL(best-of-n ‖ reference) = log n − (n−1)/n  [nats]")
        for ax in (by_n, by_kl):
            ax.set_ylabel("oracle score of the RM's pick")
        figure.suptitle(_title(summary, f"{metric}: {first.label}, ±1 stderr across prompts"))
        return figure
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    ax = figure.add_subplot()
    _plot_rms(ax, summary, metric, key)
    ax.set_xlabel(first.x_label)
    ax.set_ylabel(first.label)
    ax.set_title(_title(summary, f"{metric}: {first.label}, ±1 stderr"))
    return figure


def figure_name(metric: str, key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{metric}-{key}").strip("-") + ".png"


def build_figures(summary: RunSummary) -> dict[str, Figure]:
    """File name → figure, one per stored curve of the run."""
    return {figure_name(metric, key): curve_figure(summary, metric, key)
            for metric, key in summary.curve_keys()}


def markdown(summary: RunSummary, figures: list[str]) -> str:
    run, bench = summary.run, summary.benchmark
    lines = [f"# {run['title']}", ""]
    if summary.simulated:
        lines += [f"> **SIMULATED.** {SIMULATED_NOTICE.removeprefix('Simulated: ')}", ""]
    lines += [f"Run `{run['id']}` ({run['status']}), benchmark `{bench['id']}`: "
              f"{bench['per_prompt']} responses per prompt, {len(summary.reward_models)} reward models.",
              "", "## Leaderboard", "",
              "Value ± standard error across prompts; ↑ higher is better, ↓ lower is better.", ""]
    headers = ["reward model", *(f"{c.label} {'↑' if c.higher_is_better else '↓'}" for c in summary.columns)]
    lines += ["| " + " | ".join(headers) + " |",
              "|" + "|".join(["---", *("---:" for _ in summary.columns)]) + "|"]
    for label, rm_key in summary.reward_models:
        cells = [summary.cells.get((rm_key, c.metric, c.key)) for c in summary.columns]
        lines.append("| " + " | ".join([label, *(format_cell(c.value, c.stderr) if c else "—"
                                                  for c in cells)]) + " |")
    if summary.run_level:
        lines += ["", "## Across reward models", "", "| metric | result | value ± stderr | 95% CI |",
                  "|---|---|---:|---:|"]
        for column, cell in summary.run_level:
            ci = (f"[{cell.ci_low:.3f}, {cell.ci_high:.3f}]"
                  if math.isfinite(cell.ci_low) and math.isfinite(cell.ci_high) else "—")
            lines.append(f"| {column.metric} | {column.label} | {format_cell(cell.value, cell.stderr)} "
                         f"| {ci} |")
    if figures:
        lines += ["", "## Curves", ""]
        for name in figures:
            lines += [f"![{name.removesuffix('.png')}]({name})", ""]
    return "\n".join(lines).rstrip() + "\n"


def write_report(store: Store, run_id: str, out_dir: str | Path) -> list[Path]:
    """Write the PNGs and ``report.md`` into ``out_dir``; return the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = load_summary(store, run_id)
    written = []
    figures = build_figures(summary)
    for name, figure in figures.items():
        figure.savefig(out / name, dpi=120)
        written.append(out / name)
    (out / REPORT_NAME).write_text(markdown(summary, list(figures)), encoding="utf-8")
    return [*written, out / REPORT_NAME]
