"""Plugins add TUI panels through ``register_panels``; unclaimed curves get the generic panel."""

from __future__ import annotations

import asyncio
import types

import pytest
from _support import curves_panel
from textual.widgets import Static

from rmaudit import hookimpl
from rmaudit.plugins import load_plugins, pm
from rmaudit.results.panels import Panel
from rmaudit.tui.app import AuditApp
from rmaudit.tui.widgets.plots import ERROR_BAR, CurvePlot

RELIABILITY_ROWS = [  # a calibration metric's reliability diagram, as a later issue would store it
    (
        "insert into curves select run_id, rm_key, 'calibration', 'reliability', "
        "'reliability diagram', point, 'confidence', x, value, stderr, ci_low, ci_high "
        "from curves where key = 'reta_curve'",
        [],
    ),
]


async def curve_tabs(db) -> tuple[list[str], object]:
    """The Curves screen's tab titles and its last tab's panel."""
    async with curves_panel(db) as (titles, panel, _):
        return titles, panel


def test_an_unclaimed_curve_gets_the_generic_panel(db_copy):
    titles, panel = asyncio.run(curve_tabs(db_copy(RELIABILITY_ROWS)))
    assert titles == ["RETA curve", "Best-of-n", "Curve: reliability"]
    assert isinstance(panel, CurvePlot)
    assert panel.x_label == "confidence" and [s.label for s in panel.series] == ["honest", "length"]


def test_a_plugin_panel_shows_its_curve_without_editing_the_app(db_copy):
    def reliability_panel(context, curve_key):
        shown = sorted({k for _, _, k in context.summary.curves if k == "reliability"})
        return Static(
            f"reliability panel for {len(context.rm_keys)} RMs: {shown}", id="reliability"
        )

    plugin = types.SimpleNamespace(
        register_panels=hookimpl(
            lambda register: register(
                Panel("reliability", "Reliability", reliability_panel, curve_keys=("reliability",))
            )
        )
    )
    load_plugins()
    pm.register(plugin, name="test-reliability-panel")
    try:
        titles, panel = asyncio.run(curve_tabs(db_copy(RELIABILITY_ROWS)))
    finally:
        pm.unregister(name="test-reliability-panel")
    assert titles == [
        "RETA curve",
        "Best-of-n",
        "Reliability",
    ]  # no generic tab: the curve is claimed
    assert str(panel.render()) == "reliability panel for 2 RMs: ['reliability']"


RUN_LEVEL_ROWS = [  # a metric across RMs (scope = "run") stores its results under rm_key ''
    (
        "insert into metric_results (run_id, rm_key, metric, key, label, params, value, stderr, "
        "ci_low, ci_high, higher_is_better) select id, '', 'regret', 'kendall', 'Kendall τ', '{}', "
        "0.5, 0.1, 0.3, 0.7, 1 from runs",
        [],
    ),
    (
        "insert into curves select run_id, '', 'regret', 'regret_curve', 'regret curve', "
        "point, 'n', "
        "x, value, stderr, ci_low, ci_high from curves where key = 'bon_curve' and rm_key = "
        "(select rm_key from run_reward_models where label = 'honest')",
        [],
    ),
]


def test_results_across_rms_show_on_the_leaderboard_and_in_their_curve(db_copy):
    async def walk(db):
        app = AuditApp(db)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            run_level = app.screen.query_one("#run-level-table")
            rows = run_level.row_values() if run_level.display else []
            await pilot.press("c")
            await pilot.pause()
            screen = app.screen
            titles = [view.title for view in screen.views]
            screen.query_one("TabbedContent").active = f"panel-{len(titles) - 1}"
            await pilot.pause()
            return rows, titles, screen.active_panel()

    rows, titles, panel = asyncio.run(walk(db_copy(RUN_LEVEL_ROWS)))
    assert rows == [["regret", "Kendall τ", "0.5000±0.1000", "[0.300, 0.700]"]]
    assert titles[-1] == "Curve: regret_curve"
    assert [s.label for s in panel.series] == ["across RMs"]


def test_the_run_level_table_is_hidden_when_there_are_none(audit_db):
    async def walk():
        app = AuditApp(audit_db)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            return app.screen.query_one("#run-level-table").display

    assert asyncio.run(walk()) is False


ERROR_BAR_MARKERS = {ERROR_BAR}  # what an error bar is drawn with


def test_error_bars_are_drawn_under_every_line(audit_db):
    """plotext draws in order: each RM's line comes after every error bar, so no bar covers
    a line it crosses."""

    async def drawn():
        async with curves_panel(audit_db, "RETA curve") as (_, panel, pilot):
            await pilot.pause()
            monitor = panel.canvas.plt.monitor
            return [set(markers) for markers in monitor.marker], panel.series

    markers, series = asyncio.run(drawn())
    bars = [i for i, m in enumerate(markers) if m <= ERROR_BAR_MARKERS]
    lines = [i for i, m in enumerate(markers) if not m <= ERROR_BAR_MARKERS]
    assert len(series) == 2 and len(lines) == len(series) and bars
    assert max(bars) < min(lines)


def test_an_error_bar_spans_the_point_plus_and_minus_its_stderr(audit_db):
    """plotext's own error() draws y ± yerr/2, half the bar the title promises; each bar is
    drawn from the stored RETA curve's value − stderr to value + stderr."""

    async def drawn():
        async with curves_panel(audit_db, "RETA curve") as (_, panel, pilot):
            await pilot.pause()
            monitor = panel.canvas.plt.monitor
            return list(zip(monitor.x, monitor.y, monitor.marker, strict=True)), panel.series

    plotted, series = asyncio.run(drawn())
    bars = sorted(
        (xs[0], min(ys), max(ys))
        for xs, ys, markers in plotted
        if set(markers) <= ERROR_BAR_MARKERS
    )
    expected = sorted(
        (x, y - e, y + e)
        for s in series
        for x, y, e in zip(s.x, s.y, s.stderr, strict=True)
        if e > 0
    )
    assert len(bars) == len(expected) > 0
    assert bars == pytest.approx(expected)
