"""The shift sweep and the reliability diagram in ``rmaudit tui``, through the panel hook."""

from __future__ import annotations

import asyncio
import textwrap

import pytest

pytest.importorskip("textual")

from _support import curves_panel  # noqa: E402
from rmaudit.recipe import load_recipe  # noqa: E402
from rmaudit.run import Runner  # noqa: E402
from rmaudit.store import Store  # noqa: E402
from rmaudit.tui.widgets.pairs import ShiftView  # noqa: E402
from rmaudit.tui.widgets.plots import CurvePlot  # noqa: E402

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


async def panels(db, tab_title: str):
    async with curves_panel(db, tab_title, size=(160, 50)) as (titles, panel, _):
        return titles, panel


def test_the_pair_panels_show_the_stored_shift_curves_and_reliability_diagram(tmp_path):
    recipe = tmp_path / "r.toml"
    recipe.write_text(textwrap.dedent(RECIPE))
    db = tmp_path / "audit.db"
    store = Store.open(db)
    Runner(load_recipe(recipe), store).run()
    store.close()

    titles, shift = asyncio.run(panels(db, "Shift sweep"))
    assert titles == ["Shift sweep", "Reliability diagram"]  # nothing left to the generic panel
    assert isinstance(shift, ShiftView)
    plots = [plot for row in shift.plots for plot in row]
    assert [plot.title for plot in plots] == ["accuracy ↑", "mean confidence ↑", "ECE ↓",
                                              "AUROC ↑", "FPR@95 ↓"]
    assert [s.label for s in plots[0].series] == ["honest · response", "honest · both"]
    assert plots[0].series[0].x.tolist() == [0.0, 0.5]

    _, diagram = asyncio.run(panels(db, "Reliability diagram"))
    assert isinstance(diagram, CurvePlot) and diagram.x_label == "mean confidence"
    assert [s.label for s in diagram.series] == ["honest", "perfectly calibrated"]
