"""The shift sweep and the reliability diagram in ``rmaudit tui``, through the panel hook."""

from __future__ import annotations

import asyncio
import sqlite3
import textwrap

import pytest

pytest.importorskip("textual")

from _support import curves_panel  # noqa: E402

from rmaudit.recipe import load_recipe  # noqa: E402
from rmaudit.run import Runner  # noqa: E402
from rmaudit.store import Store  # noqa: E402
from rmaudit.tui.widgets.pairs import ShiftView  # noqa: E402
from rmaudit.tui.widgets.plots import CurvePlot, band_colour  # noqa: E402

RECIPE = """
[prompts.source]
name = "simulated-helpful"

[prompts.sampler]
name = "random"
k = 3

[responses]
per_prompt = 4

[responses.policy]
name = "simulated-policy"

[oracle]
name = "simulated-judge"
samples = 1

[pairs.source]
name = "benchmark-pairs"

[pairs.shift]
levels = [0, 0.5]
targets = ["response", "both"]

[pairs.shift.perturber]
name = "char-noise"

[[reward_models]]
label = "honest"
name = "simulated-rm"

[[metrics]]
name = "calibration"

[[metrics]]
name = "shift-curves"
"""


def drawn_bars(plot: CurvePlot) -> list[tuple[float, float, float]]:
    """(x, low, high) of every point of the bands plotext was asked to draw: each band is
    two lines, its low edge then its high edge, in the faded shade of its series' colour."""
    monitor = plot.canvas.plt.monitor
    faded = {band_colour(s.colour) for s in plot.series}
    edges = [
        (xs, ys)
        for xs, ys, colours in zip(monitor.x, monitor.y, monitor.color, strict=True)
        if colours[0] in faded
    ]
    return [
        (x, low, high)
        for (xs, lows), (_, highs) in zip(edges[::2], edges[1::2], strict=True)
        for x, low, high in zip(xs, lows, highs, strict=True)
    ]


async def panels(db, tab_title: str):
    async with curves_panel(db, tab_title, size=(160, 50)) as (titles, panel, _):
        return titles, panel


async def shift_views(db):
    """The shift panel's title, series and legend for each quantity, stepping with v."""
    async with curves_panel(db, "Shift sweep", size=(80, 24)) as (titles, panel, pilot):
        views = []
        for _ in range(len(panel.QUANTITIES) + 1):
            legend = str(panel.query_one(".plot-legend").render())
            views.append(
                (
                    panel.title,
                    panel.y_label,
                    [(s.label, s.colour, s.marker) for s in panel.series],
                    panel.series[0].x.tolist(),
                    legend,
                    drawn_bars(panel),
                )
            )
            await pilot.press("v")
            await pilot.pause()
        return titles, panel, views


def test_the_pair_panels_show_the_stored_shift_curves_and_reliability_diagram(tmp_path):
    recipe = tmp_path / "r.toml"
    recipe.write_text(textwrap.dedent(RECIPE))
    db = tmp_path / "audit.db"
    store = Store.open(db)
    Runner(load_recipe(recipe), store).run()
    store.close()

    titles, shift, views = asyncio.run(shift_views(db))
    assert titles == ["Shift sweep", "Reliability diagram"]  # nothing left to the generic panel
    assert isinstance(shift, ShiftView) and shift.bands
    # one quantity at a time; v steps through all five and back to the first
    assert [title.split(" against")[0] for title, *_ in views] == [
        "accuracy ↑",
        "mean confidence ↑",
        "ECE ↓",
        "AUROC ↑",
        "FPR@95 ↓",
        "accuracy ↑",
    ]
    assert [y_label for _, y_label, *_ in views[:2]] == ["accuracy", "mean confidence"]
    with sqlite3.connect(db) as conn:
        stored = conn.execute(
            "select key, x, value, stderr from curves where key like 'shift_%' order by point"
        ).fetchall()
    for (_, _, series, x, legend, bars), quantity in zip(
        views, ["accuracy", "confidence", "ece", "auroc", "fpr95", "accuracy"], strict=True
    ):
        # every quantity's band is each point's stored value ± its stderr (ECE, AUROC and
        # FPR@95: the bootstrap's), for both targets
        expected = [
            (px, value - stderr, value + stderr)
            for key, px, value, stderr in stored
            if key in (f"shift_{quantity}_response", f"shift_{quantity}_both")
        ]
        assert len(expected) == 4 and sorted(bars) == pytest.approx(sorted(expected))
        # the RM by its colour (the first RM's), the target by its line style
        assert series == [("honest · response", "#1f77b4", "•"), ("honest · both", "#1f77b4", "x")]
        assert x == [0.0, 0.5]
        # the legend is under the plot, not drawn on it: the RM, then each target's style
        assert (
            "━━ honest" in legend
            and "•• response shifted" in legend
            and "xx both shifted" in legend
            and "band: ± stderr" in legend
        )

    _, diagram = asyncio.run(panels(db, "Reliability diagram"))
    assert isinstance(diagram, CurvePlot) and diagram.x_label == "mean confidence"
    assert [s.label for s in diagram.series] == ["honest", "perfectly calibrated (y = x)"]
    diagonal = diagram.series[-1]
    assert diagonal.x.tolist() == diagonal.y.tolist() == [0.5, 1.0]
    # the band spans each bin's stored Wilson 95% interval, not the point ± its stderr
    bars = drawn_bars(diagram)
    assert bars
    with sqlite3.connect(db) as conn:
        stored = conn.execute(
            "select x, value, stderr, ci_low, ci_high from curves "
            "where key = 'reliability_diagram' order by point"
        ).fetchall()
    assert sorted(bars) == pytest.approx(
        sorted((x, low, high) for x, _, _, low, high in stored if None not in (low, high))
    )
    assert any(
        abs((high - value) - (value - low)) > 1e-3 for _, value, _, low, high in stored
    )  # asymmetric: a Wilson interval
