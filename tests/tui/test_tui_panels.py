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
from rmaudit.tui.widgets.plots import CurvePlot, band_colour, rgb

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


def plotted(plot: CurvePlot) -> list[tuple[list, list, tuple]]:
    """(x, y, colour) of every line plotext was asked to draw, in order."""
    monitor = plot.canvas.plt.monitor
    return [
        (list(xs), list(ys), colours[0])
        for xs, ys, colours in zip(monitor.x, monitor.y, monitor.color, strict=True)
    ]


def test_each_line_is_drawn_over_its_band_of_plus_and_minus_its_stderr(audit_db):
    """Each RM's band is two fine lines, value − stderr and value + stderr of the stored RETA
    curve, in a faded shade of its colour, drawn before every line (plotext draws in order:
    a band drawn later would cover the lines it crosses); no vertical bar per point, which a
    terminal cell shows as a stray tick."""

    async def drawn():
        async with curves_panel(audit_db, "RETA curve") as (_, panel, pilot):
            await pilot.pause()
            return plotted(panel), panel.series

    lines, series = asyncio.run(drawn())
    assert len(series) == 2 and len(lines) == 3 * len(series)
    bands, centres = lines[: 2 * len(series)], lines[2 * len(series) :]
    pairs_of_edges = zip(bands[::2], bands[1::2], strict=True)
    for s, band, centre in zip(series, pairs_of_edges, centres, strict=True):
        assert centre == (s.x.tolist(), s.y.tolist(), rgb(s.colour))
        (x_low, low, faded), (x_high, high, faded_too) = band
        assert x_low == x_high == s.x.tolist() and faded == faded_too == band_colour(s.colour)
        assert low == pytest.approx((s.y - s.stderr).tolist())
        assert high == pytest.approx((s.y + s.stderr).tolist())
        assert faded != rgb(s.colour) and any(e > 0 for e in s.stderr)
    assert not any(len(xs) == 2 and xs[0] == xs[1] for xs, _, _ in lines)
