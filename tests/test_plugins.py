"""The plugin host: hook specs, built-ins, entry points (with the env switches), plugins-dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pluggy
import pytest

from rmaudit.components import KINDS
from rmaudit.errors import BadInput
from rmaudit.plugins import hookspecs
from rmaudit.plugins import host as plugins


def test_every_kind_has_a_documented_hook_and_builtins():
    for kind, hook in plugins.HOOK_OF_KIND.items():
        spec = getattr(hookspecs, hook)
        assert spec.__doc__, hook
        assert KINDS[kind].__name__ in spec.__doc__, hook
    assert set(plugins.HOOK_OF_KIND) == set(KINDS)
    for kind in (
        "prompt_source",
        "prompt_sampler",
        "embedder",
        "reference_policy",
        "oracle",
        "reward_model",
        "metric",
    ):
        assert plugins.registered(kind), f"no built-in {kind}"


def test_every_builtin_component_has_a_docstring_and_options_model():
    for kind in plugins.HOOK_OF_KIND:
        for entry in plugins.registered(kind):
            assert entry.cls.summary(), entry.cls
            assert entry.cls.Options.model_config.get("extra") == "forbid", entry.cls


def test_resolve_suggests_close_names():
    with pytest.raises(BadInput, match="did you mean 'kdpp'"):
        plugins.resolve("prompt_sampler", "kddp", field="prompts.sampler.name")
    assert plugins.resolve("prompt_sampler", "rmaudit:kdpp").cls.name == "kdpp"


def test_misspelt_hook_fails_loudly():
    pm = pluggy.PluginManager("rmaudit")
    pm.add_hookspecs(hookspecs)

    class Typo:
        @pluggy.HookimplMarker("rmaudit")
        def register_metric(self, register):  # singular: not a hook
            pass

    pm.register(Typo())
    with pytest.raises(pluggy.PluginValidationError):
        pm.check_pending()


def _run(args, env_extra=None, cwd=None):
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "rmaudit", *args], capture_output=True, text=True, env=env, cwd=cwd
    )


@pytest.fixture
def installed_plugins(tmp_path):
    """Two distributions with entry points on a path: one good, one that raises on import."""
    site = tmp_path / "site"
    site.mkdir()
    for dist, module, body in [
        (
            "rmaudit_goodplugin",
            "goodplugin",
            '''
            from rmaudit import hookimpl
            from rmaudit.components import Metric, MetricOutput, MetricValue
            import numpy as np

            class MeanOracle(Metric):
                """Mean oracle score over all responses (a toy metric)."""
                name = "mean-oracle"
                def compute(self, inputs):
                    return MetricOutput(values=[MetricValue("mean_oracle", "mean J",
                        float(np.mean([j.mean() for j in inputs.oracle])))])

            @hookimpl
            def register_metrics(register):
                register(MeanOracle)
        ''',
        ),
        ("rmaudit_badplugin", "badplugin", 'raise ImportError("deliberately broken")\n'),
    ]:
        (site / f"{module}.py").write_text(textwrap.dedent(body))
        info = site / f"{dist}-1.2.3.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.2.3\n")
        (info / "entry_points.txt").write_text(f"[rmaudit]\n{module} = {module}\n")
    return {"PYTHONPATH": os.pathsep.join([str(site), *sys.path])}


def test_entry_points_load_and_a_broken_one_is_skipped(installed_plugins):
    result = _run(["plugins", "--json"], installed_plugins)
    assert result.returncode == 0, result.stderr
    listed = {p["distribution"]: p for p in json.loads(result.stdout)}
    assert listed["rmaudit_goodplugin"]["version"] == "1.2.3"
    assert listed["rmaudit_goodplugin"]["hooks"] == ["register_metrics"]
    assert listed["rmaudit_goodplugin"]["components"] == ["metric:mean-oracle"]
    assert "rmaudit_badplugin" not in listed
    assert "badplugin" in result.stderr and "deliberately broken" in result.stderr


def test_allowlist_and_autoload_switches(installed_plugins):
    only_good = _run(
        ["plugins", "--json"], {**installed_plugins, "RMAUDIT_LOAD_PLUGINS": "rmaudit_goodplugin"}
    )
    assert [p["distribution"] for p in json.loads(only_good.stdout)] == ["rmaudit_goodplugin"]
    assert "badplugin" not in only_good.stderr
    none = _run(["plugins", "--json"], {**installed_plugins, "RMAUDIT_LOAD_PLUGINS": ""})
    assert json.loads(none.stdout) == []
    off = _run(["plugins", "--json"], {**installed_plugins, "RMAUDIT_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert json.loads(off.stdout) == []


def test_plugins_all_lists_builtins_with_components():
    result = _run(["plugins", "--all", "--json"])
    listed = {p["name"]: p for p in json.loads(result.stdout)}
    sims = listed["rmaudit.default_plugins.simulated"]
    assert sims["distribution"] == "rmaudit"
    assert "reward_model:simulated-rm" in sims["components"]
    assert "register_reward_models" in sims["hooks"]
    # every component with its docstring's first paragraph, never cut mid-sentence; pair
    # sources as pair sources
    from rmaudit.default_plugins.pair_sources import RMBenchPairs
    from rmaudit.default_plugins.simulated import SimulatedJudgeComponent

    assert sims["descriptions"]["oracle:simulated-judge"] == " ".join(
        SimulatedJudgeComponent.__doc__.strip().split("\n\n")[0].split()
    )
    pairs = listed["rmaudit.default_plugins.pair_sources"]
    assert "pair_source:rm-bench" in pairs["components"]
    assert not any(c.startswith("prompt_source:") for c in pairs["components"])
    assert pairs["descriptions"]["pair_source:rm-bench"] == " ".join(
        RMBenchPairs.__doc__.strip().split("\n\n")[0].split()
    )


def test_plugins_table_describes_each_component_in_80_columns():
    result = _run(["plugins", "--all"], {"COLUMNS": "80"})
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    at = next(
        i
        for i, line in enumerate(lines)
        if line.startswith("│ rm-bench ") and "RM-Bench: each prompt's 3" in line
    )
    assert lines[at + 1].startswith("│ pair_source ")


def test_duplicate_names_need_plugin_prefix(tmp_path, fresh_host):
    plugin_dir = tmp_path / "plugins"
    plugin_dir.mkdir()
    (plugin_dir / "dupe.py").write_text(
        textwrap.dedent('''
        from rmaudit import hookimpl
        from rmaudit.components import PromptSampler

        class AllAgain(PromptSampler):
            """Another sampler called "all"."""
            name = "all"
            def sample(self, prompts, embeddings):
                return list(range(len(prompts)))

        @hookimpl
        def register_prompt_samplers(register):
            register(AllAgain)
    ''')
    )
    plugins.load_plugins_dir(str(plugin_dir))
    with pytest.raises(BadInput) as ambiguous:
        plugins.resolve("prompt_sampler", "all", field="prompts.sampler.name")
    assert "rmaudit:all" in str(ambiguous.value) and "plugins-dir:dupe:all" in str(ambiguous.value)
    assert (
        plugins.resolve("prompt_sampler", "rmaudit:all").cls.__module__
        == "rmaudit.default_plugins.prompt_samplers"
    )
    assert (
        plugins.resolve("prompt_sampler", "plugins-dir:dupe:all").cls.__module__
        == "rmaudit_plugins_dir.dupe"
    )


@pytest.fixture
def fresh_host(monkeypatch):
    """The plugin host as a new process finds it: nothing loaded (restored afterwards)."""
    fresh = pluggy.PluginManager("rmaudit")
    fresh.add_hookspecs(hookspecs)
    monkeypatch.setattr(plugins, "pm", fresh)
    monkeypatch.setattr(plugins, "_builtins_loaded", False)
    monkeypatch.setattr(plugins, "_entry_points_loaded", False)
    monkeypatch.setattr(plugins, "_distribution_of", {})
    monkeypatch.setattr(plugins, "load_failures", [])
    return fresh


def test_plugins_loaded_for_their_commands_still_come_after_the_builtins(
    installed_plugins, fresh_host, monkeypatch
):
    """Finding plugin commands (rmaudit --help) loads the entry points alone; the built-ins,
    loaded later, still come first."""
    monkeypatch.syspath_prepend(installed_plugins["PYTHONPATH"].split(os.pathsep)[0])
    with pytest.warns(RuntimeWarning, match="deliberately broken"):
        plugins.load_entry_point_plugins()
    early = [name for name, _ in fresh_host.list_name_plugin()]
    plugins.load_plugins()
    full = [name for name, _ in fresh_host.list_name_plugin()]
    assert "goodplugin" in early and not set(early) & set(plugins.DEFAULT_PLUGINS)
    assert full[: len(plugins.DEFAULT_PLUGINS)] == list(plugins.DEFAULT_PLUGINS)
    assert full[len(plugins.DEFAULT_PLUGINS) :] == early
