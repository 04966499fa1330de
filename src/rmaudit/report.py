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
from rmaudit.formatting import format_value
from rmaudit.metrics import bon_kl
from rmaudit.regret_results import goodhart_curve, goodhart_points, load_studies, study_table
from rmaudit.results import Curve, RunSummary, load_summary
from rmaudit.simulated import SIMULATED_NOTICE
from rmaudit.store import Store
from rmaudit.vocabulary import NDR_CURVE_PREFIX, RETA_CURVE, is_best_of_n_curve

REPORT_NAME = "report.md"


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
    if key == RETA_CURVE:
        figure = Figure(figsize=(7, 4.5), layout="constrained")
        ax = figure.add_subplot()
        _plot_rms(ax, summary, metric, key, lambda eta: -np.log2(eta))
        ax.set_xlabel("−log₂ η  (smaller η: the RM's more extreme favourites)")
        ax.set_ylabel("RETA(η)  (1 = a random RM)")
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
        ax.set_title(_title(summary, "RETA curve, ±1 stderr across prompts"))
        return figure
    if is_best_of_n_curve(key):
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


def build_figures(summary: RunSummary, store: Store | None = None) -> dict[str, Figure]:
    """File name → figure, one per stored curve of the run; the per-proxy NDR curves of a
    regret study share one figure per study, and with ``store`` a regret study also gets its
    Goodhart overlay (seed Fig. 8)."""
    figures = {figure_name(metric, key): curve_figure(summary, metric, key)
               for metric, key in summary.curve_keys() if not key.startswith(NDR_CURVE_PREFIX)}
    for metric in dict.fromkeys(m for m, k in summary.curve_keys() if k.startswith(NDR_CURVE_PREFIX)):
        figures[figure_name(metric, "ndr")] = ndr_figure(summary, metric)
    if store is not None:
        studies = load_studies(store, summary.run["id"])
        points = {label: goodhart_points(rows) for label, rows in studies.items()}
        if any(points.values()):
            figures[GOODHART_FIGURE] = goodhart_figure(summary, points)
    return figures


GOODHART_FIGURE = "regret-goodhart.png"


def ndr_figure(summary: RunSummary, metric: str) -> Figure:
    """A regret study's NDR against n (log2 axis) and against KL, one line per proxy."""
    curves = {key.removeprefix(NDR_CURVE_PREFIX): curve
              for (_, m, key), curve in summary.curves.items()
              if m == metric and key.startswith(NDR_CURVE_PREFIX)}
    figure = Figure(figsize=(11, 4.5), layout="constrained")
    by_n, by_kl = figure.subplots(1, 2, sharey=True)
    for proxy, curve in curves.items():
        stderr = np.nan_to_num(curve.stderr)
        for ax, x in ((by_n, curve.x), (by_kl, bon_kl(np.rint(curve.x).astype(int)))):
            (line,) = ax.plot(x, curve.value, marker="o", markersize=3, label=proxy)
            ax.fill_between(x, curve.value - stderr, curve.value + stderr,
                            color=line.get_color(), alpha=0.2, linewidth=0)
    by_n.set_xscale("log", base=2)
    by_n.set_xlabel("n (responses drawn)")
    by_kl.set_xlabel("KL(best-of-n ‖ reference) = log n − (n−1)/n  [nats]")
    for ax in (by_n, by_kl):
        ax.set_ylabel("NDR (1 = as good as the gold's pick)")
        ax.axhline(0.0, color="grey", linewidth=0.8, linestyle="--")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    first = next(iter(curves.values()))
    figure.suptitle(_title(summary, f"{metric}: {first.label}, ±1 stderr (bootstrap over prompts)"))
    return figure


def goodhart_figure(summary: RunSummary, points: dict[str, list]) -> Figure:
    """Seed Fig. 8: observed (pairwise accuracy, best-of-n NDR) of every (gold, proxy) pair of
    each regret study against the closed-form curve of the Regressional Goodhart normal model."""
    figure = Figure(figsize=(7, 5), layout="constrained")
    ax = figure.add_subplot()
    accuracy, ndr_values = goodhart_curve()
    ax.plot(accuracy, ndr_values, color="black", linewidth=1.5,
            label="normal model: NDR = sin(π (acc − ½))")
    for marker, (label, found) in zip("os^Dv<>", ((k, v) for k, v in points.items() if v)):
        ax.scatter([p.accuracy for p in found], [p.ndr for p in found], marker=marker, s=22,
                   alpha=0.75, label=f"{label} ({len(found)} gold-proxy pairs)")
    ax.set_xlabel("pairwise accuracy against the gold")
    ax.set_ylabel("best-of-n NDR (policy regret's complement)")
    ax.axhline(0.0, color="grey", linewidth=0.8, linestyle="--")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(_title(summary, "Accuracy vs NDR against Regressional Goodhart (Rethinking RM Evaluation, Fig. 8)"))
    return figure


def regret_markdown(store: Store, run_id: str) -> list[str]:
    """Markdown lines of every regret-correlation study: seed 002's Table 1 / Table 4 layout."""
    lines: list[str] = []
    for label, rows in load_studies(store, run_id).items():
        table = study_table(label, rows)
        lines += ["", f"### {label}: error metric vs policy regret (best-of-{table.n} NDR)", "",
                  f"{table.caption[0].upper()}{table.caption[1:]}.", "",
                  "| " + " | ".join(table.headers) + " |",
                  "|" + "|".join(["---", *("---:" for _ in table.headers[1:])]) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in table.rows]
    return ["", "## Regret study", *lines] if lines else []


def markdown(summary: RunSummary, figures: list[str], extra: list[str] = ()) -> str:
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
        lines.append("| " + " | ".join([label, *(format_value(c.value, c.stderr) if c else "—"
                                                  for c in cells)]) + " |")
    if summary.run_level:
        lines += ["", "## Across reward models", "", "| metric | result | value ± stderr | 95% CI |",
                  "|---|---|---:|---:|"]
        for column, cell in summary.run_level:
            ci = (f"[{cell.ci_low:.3f}, {cell.ci_high:.3f}]"
                  if math.isfinite(cell.ci_low) and math.isfinite(cell.ci_high) else "—")
            lines.append(f"| {column.metric} | {column.label} | {format_value(cell.value, cell.stderr)} "
                         f"| {ci} |")
    lines += list(extra)
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
    figures = build_figures(summary, store)
    for name, figure in figures.items():
        figure.savefig(out / name, dpi=120)
        written.append(out / name)
    (out / REPORT_NAME).write_text(markdown(summary, list(figures), regret_markdown(store, run_id)),
                                   encoding="utf-8")
    return [*written, out / REPORT_NAME]
