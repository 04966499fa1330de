"""The panel contract (``rmaudit.results.panels``): which tabs a run gets, with no UI toolkit
imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rmaudit.results.panels import Panel, PanelContext, panel_views, registered_panels
from rmaudit.results.summary import Column, Curve, RunSummary


def factory(context, curve_key):
    return ("built", curve_key)


def summary_with(curve_keys=(), metric_keys=()) -> RunSummary:
    summary = RunSummary(run={"id": "run"}, benchmark={}, reward_models=[("a", "rm-a")])
    for key in curve_keys:
        summary.curves[("rm-a", "metric", key)] = Curve(key, "x", None, None, None)
    summary.columns = [Column("metric", key, key, True) for key in metric_keys]
    return summary


def test_panels_apply_by_stored_keys_and_the_catch_all_takes_the_rest():
    panels = [
        Panel("reta", "RETA", factory, curve_keys=("reta_curve",)),
        Panel("shift", "Shift", factory, metric_keys=("auroc",)),
        Panel("absent", "Absent", factory, curve_keys=("nothing",)),
        Panel("any", "Curve", factory, catch_all=True),
    ]
    context = PanelContext(
        None, summary_with(("reta_curve", "reliability", "shift_curve"), ("auroc",)), ("rm-a",)
    )
    views = panel_views(context, panels)
    assert [v.title for v in views] == ["RETA", "Shift", "Curve: reliability", "Curve: shift_curve"]
    assert views[2].build(context) == ("built", "reliability")
    assert views[0].build(context) == ("built", None)


def test_the_built_in_panels_cover_the_built_in_curves():
    names = {p.name: p for p in registered_panels()}
    assert {"reta-curve", "best-of-n", "curve"} <= set(names)
    assert names["best-of-n"].curve_keys == ("bon_curve", "bon2_curve")
    assert names["curve"].catch_all


def test_register_panels_rejects_what_is_not_a_panel_and_duplicate_names():
    from rmaudit import hookimpl
    from rmaudit.plugins import load_plugins, pm

    class Bad:
        @hookimpl
        def register_panels(self, register):
            register(Panel("reta-curve", "again", factory))

    load_plugins()
    pm.register(Bad(), name="test-duplicate-panel")
    try:
        with pytest.raises(TypeError, match="registered twice"):
            registered_panels()
    finally:
        pm.unregister(name="test-duplicate-panel")


def test_collecting_panels_imports_no_ui_toolkit():
    code = (
        "import sys; from rmaudit.results.panels import registered_panels; registered_panels();"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'matplotlib')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_a_panel_claims_a_family_of_curves_by_prefix_and_run_level_keys_apply():
    panels = [
        Panel(
            "regret", "Regret", factory, metric_keys=("ndr/mean",), curve_prefixes=("ndr_curve/",)
        ),
        Panel("any", "Curve", factory, catch_all=True),
    ]
    summary = summary_with(("ndr_curve/a", "ndr_curve/b", "other"))
    context = PanelContext(None, summary, ("rm-a",))
    assert [v.title for v in panel_views(context, panels)] == ["Regret", "Curve: other"]
    summary = summary_with()  # no curves, but a result across RMs (rm_key '') names the panel
    summary.run_level = [(Column("regret", "ndr/mean", "mean NDR", True), None)]
    assert [v.title for v in panel_views(PanelContext(None, summary, ()), panels)] == ["Regret"]


def test_a_factory_named_by_path_is_imported_when_the_panel_is_built():
    panel = Panel("by-path", "By path", "test_panels:factory", curve_keys=("c",))
    context = PanelContext(None, summary_with(("c",)), ("rm-a",))
    assert panel_views(context, [panel])[0].build(context) == ("built", None)


def test_every_built_in_panel_has_a_view_in_the_tui():
    pytest.importorskip("textual")
    from rmaudit.default_plugins import panels
    from rmaudit.tui.panel_views import BUILT_IN_VIEWS

    built_in: list[Panel] = []
    panels.register_panels(register=built_in.append)
    assert {p.name for p in built_in} == {
        "reta-curve",
        "best-of-n",
        "curve",
        "shift",
        "reliability-diagram",
        "regret",
    }
    # no plugin module names the TUI: a built-in panel leaves its view to it, by name
    assert all(panel.factory is None for panel in built_in)
    assert set(BUILT_IN_VIEWS) == {p.name for p in built_in}
    assert all(callable(view) for view in BUILT_IN_VIEWS.values())


def test_only_a_built_in_panel_may_leave_out_its_factory():
    from rmaudit import hookimpl
    from rmaudit.plugins import load_plugins, pm

    class NoFactory:
        @hookimpl
        def register_panels(self, register):
            register(Panel("no-factory", "No factory", None, curve_keys=("c",)))

    load_plugins()
    pm.register(NoFactory(), name="test-panel-without-factory")
    try:
        with pytest.raises(TypeError, match="'no-factory' has no factory"):
            registered_panels()
    finally:
        pm.unregister(name="test-panel-without-factory")
    with pytest.raises(LookupError, match="built in"):
        Panel("no-factory", "No factory", None).build(None, None)
