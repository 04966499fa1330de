"""A regret study's results where users look: stored NDR curves, the TUI's regret panel (via
``register_panels``), ``rmaudit report`` (the Table 1/4 Markdown and a Fig. 8 PNG), and a
constant gold through the CLI."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import textwrap

import numpy as np
import pytest
from _support import curves_panel

from rmaudit.components.vocabulary import NDR_CURVE_PREFIX
from rmaudit.metrics import bon_kl
from rmaudit.metrics.regret import goodhart_from_accuracy
from rmaudit.report import GOODHART_FIGURE, REPORT_NAME, build_figures
from rmaudit.results.panels import registered_panels
from rmaudit.results.run_index import open_for_reading, resolve_run
from rmaudit.results.summary import load_summary

PROXIES = [
    "σ=0.25",
    "σ=0.5",
    "σ=1",
    "σ=2",
    "σ=4",
    "σ=8",
    "σ=0.5 + lottery loophole",
    "σ=0.5 + 20% flipped",
]


def summary_of(db):
    store = open_for_reading(db)
    try:
        return load_summary(store, resolve_run(store, None))
    finally:
        store.close()


def test_each_proxy_gets_a_run_level_ndr_curve_ending_at_the_tables_ndr(regret_db):
    summary = summary_of(regret_db)
    curves = {(metric, key): c for (rm, metric, key), c in summary.curves.items() if rm == ""}
    assert {key for metric, key in curves if metric == "regret (N×N)"} == {
        NDR_CURVE_PREFIX + p for p in PROXIES
    }  # the first RM, "gold", is the gold
    assert {key for metric, key in curves if metric == "regret (oracle gold)"} == {
        NDR_CURVE_PREFIX + p for p in ["gold", *PROXIES]
    }
    conn = sqlite3.connect(regret_db)
    params = json.loads(
        conn.execute(
            "select params from metric_results where metric = ? and key = 'ndr/mean'",
            ["regret (N×N)"],
        ).fetchone()[0]
    )
    conn.close()
    for proxy in PROXIES:
        curve = curves[("regret (N×N)", NDR_CURVE_PREFIX + proxy)]
        assert curve.x.tolist() == [2, 4, 8] and curve.x_label == "n"  # n of the held-out half
        assert curve.label == "NDR of best-of-n, gold = gold"
        assert curve.value[-1] == pytest.approx(params["ndr"][0][params["rms"].index(proxy)])
        assert np.all(np.isfinite(curve.stderr)) and np.all(curve.value <= 1 + 1e-12)


def test_the_regret_panel_is_registered_and_claims_the_ndr_curves():
    panel = next(p for p in registered_panels() if p.name == "regret")
    assert panel.metric_keys == ("ndr/mean",) and panel.claims(NDR_CURVE_PREFIX + "σ=1")
    assert not panel.claims("bon_curve")


def test_the_tui_shows_the_regret_panel_for_a_regret_run(regret_db):
    from rmaudit.tui.widgets.regret import GoodhartPlot, RegretView

    async def walk():
        async with curves_panel(regret_db, "Regret") as (titles, panel, pilot):
            tables = [t.row_values() for t in panel.query("StudyTableView")]
            goodhart = panel.query_one(GoodhartPlot)
            before = panel.ndr_plot.x_label
            await pilot.press("x")
            await pilot.pause()
            return titles, panel, tables, goodhart, before, panel.ndr_plot

    titles, panel, tables, goodhart, before, ndr_plot = asyncio.run(walk())
    assert titles == ["Best-of-n", "Regret"]  # no generic tab per NDR curve: the panel claims them
    assert isinstance(panel, RegretView)
    assert len(tables) == 2 and [row[0] for row in tables[0]][:4] == [
        "Pearson corr.",
        "Spearman corr.",
        "Kendall τ corr.",
        "accuracy",
    ]
    assert all(len(row) == 5 and "[" in row[1] for row in tables[0])  # value [CI] per statistic
    assert set(goodhart.points) == {"regret (N×N)", "regret (oracle gold)"}
    assert len(goodhart.points["regret (N×N)"]) == 9 * 8  # every (gold, proxy) pair
    assert len(goodhart.points["regret (oracle gold)"]) == 9
    assert before == "n (log2 axis)" and ndr_plot.x_label == "KL (nats)"
    # the NDR plot shows the oracle-gold study: every RM a proxy
    assert [s.label for s in ndr_plot.series] == ["gold", *PROXIES]
    assert ndr_plot.series[0].x[-1] == pytest.approx(bon_kl(8))


def test_report_has_the_regret_table_and_a_fig8_png(rmaudit, regret_db, tmp_path):
    out = tmp_path / "report"
    result = rmaudit("report", str(regret_db), "--out", str(out))
    assert result.code == 0, result.err
    names = {p.name for p in out.iterdir()}
    assert {GOODHART_FIGURE, "regret-N-N-ndr.png", "regret-oracle-gold-ndr.png"} <= names
    assert not any(NDR_CURVE_PREFIX.rstrip("/") in n for n in names)  # no PNG per proxy curve
    markdown = (out / REPORT_NAME).read_text()
    assert "## Regret study" in markdown
    assert "### regret (N×N): error metric vs policy regret (best-of-8 NDR)" in markdown
    header = "| error metric | Kendall τ corr. | Pearson corr. | Spearman corr. | MRR |"
    assert markdown.count(header) == 2
    conn = sqlite3.connect(regret_db)
    value, low, high = conn.execute(
        "select value, ci_low, ci_high from metric_results where "
        "metric = 'regret (N×N)' and key = 'spearman/accuracy'"
    ).fetchone()
    conn.close()
    row = next(x for x in markdown.splitlines() if x.startswith("| accuracy |"))
    assert row.split(" | ")[3] == f"{value:.3f} [{low:.2f}, {high:.2f}]≈"  # Spearman: approximate
    assert markdown.count("Point estimates are biased, mostly low, at few prompts") == 2
    # the study's mean NDR, as stored, closes its caption here and in `rmaudit runs RUN_ID`
    conn = sqlite3.connect(regret_db)
    label, mean_ndr, run_id = conn.execute(
        "select label, value, run_id from metric_results where "
        "metric = 'regret (N×N)' and key = 'ndr/mean'"
    ).fetchone()
    conn.close()
    line = f"{label} = {mean_ndr:.3f}"
    assert f". {line}." in markdown
    shown = rmaudit("runs", str(regret_db), run_id)
    assert f"; {line}" in " ".join(shown.out.split())  # wrapped to the terminal's width
    assert f"![{GOODHART_FIGURE.removesuffix('.png')}]({GOODHART_FIGURE})" in markdown


def test_the_fig8_figure_overlays_observed_pairs_on_the_closed_form_curve(regret_db):
    store = open_for_reading(regret_db)
    try:
        figures = build_figures(load_summary(store, resolve_run(store, None)), store)
    finally:
        store.close()
    ax = figures[GOODHART_FIGURE].axes[0]
    assert "accuracy" in ax.get_xlabel() and "NDR" in ax.get_ylabel()
    (figure_legend,) = figures[GOODHART_FIGURE].legends  # under the axes, off the data
    legend = [t.get_text() for t in figure_legend.get_texts()]
    assert legend[0].startswith("normal model") and len(legend) == 3
    assert "regret (N×N) (72 gold-proxy pairs)" in legend
    curve = ax.lines[0]
    x, y = curve.get_xdata(), curve.get_ydata()
    assert x[0] == 0.5 and x[-1] == 1.0
    assert np.allclose(y, goodhart_from_accuracy(x)["ndr"])
    assert [len(c.get_offsets()) for c in ax.collections] == [72, 9]
    by_n, by_kl = figures["regret-oracle-gold-ndr.png"].axes
    assert by_n.get_xscale() == "log" and by_kl.get_xlabel().startswith("KL")
    (ndr_legend,) = figures["regret-oracle-gold-ndr.png"].legends
    assert [t.get_text() for t in ndr_legend.get_texts()] == ["gold", *PROXIES]


CONSTANT_GOLD = """
title = "constant gold"
[prompts.source]
name = "simulated-helpful"
[prompts.sampler]
name = "random"
k = 6
seed = 0
[responses]
per_prompt = 4
[responses.policy]
name = "simulated-policy"
seed = 0
[oracle]
name = "simulated-judge"
[[reward_models]]
label = "gold"
name = "simulated-rm"
seed = 1
[[reward_models]]
label = "noisy"
name = "synthetic-proxy"
gold = { name = "simulated-rm", seed = 1 }
sigma = 1.0
[[reward_models]]
label = "constant"  # the mean of an RM and its negation: 0 everywhere
name = "ensemble"
members = [{ name = "simulated-rm", seed = 1 },
           { name = "synthetic-proxy", gold = { name = "simulated-rm", seed = 1 }, flip = 1.0 }]
[[metrics]]
name = "regret-correlation"
bootstrap = 10
"""


def test_a_constant_gold_exits_2_with_a_one_line_reason(rmaudit, tmp_path):
    recipe = tmp_path / "constant.toml"
    recipe.write_text(textwrap.dedent(CONSTANT_GOLD), encoding="utf-8")
    result = rmaudit("run", str(recipe), "--db", str(tmp_path / "c.db"))
    assert result.code == 2
    reason = [
        line for line in result.err.splitlines() if line.startswith("Error:")
    ]  # after progress
    assert len(reason) == 1 and reason[0] == result.err.strip().splitlines()[-1], result.err
    assert "metrics[0]" in result.err and "RM 'constant' as gold" in result.err
    assert "ranks nothing: its scores are all equal on every prompt" in result.err


def test_the_run_summary_labels_the_approximate_regret_intervals(regret_db):
    summary = summary_of(regret_db)
    cells = [cell for column, cell in summary.run_level if column.key != "ndr/mean"]
    # 24 prompts: below the 30 the intervals' coverage was measured at, so none is validated
    assert cells and all(
        cell.approximate.startswith("interval not validated at 24 prompts") for cell in cells
    )
    note = next(n for n in summary.notes if n.startswith("≈ across reward models"))
    assert f"{len(cells)} of {len(summary.run_level)} intervals are approximate" in note
