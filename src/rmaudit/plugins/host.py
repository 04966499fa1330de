"""The plugin host: built-ins by module path, third parties by entry point, loaded lazily.

Loading follows pytest, llm and Datasette:

* built-in plugins (``DEFAULT_PLUGINS``) register through the same hooks a third party uses;
* distributions expose plugins through the ``rmaudit`` entry-point group; they are loaded
  the first time a component, a command or the plugin list is asked for, never at import time;
* finding the commands plugins add loads the entry-point plugins only (built-ins add none, and
  import most of rmaudit), so ``rmaudit --help`` stays fast; built-ins always come first;
* ``RMAUDIT_DISABLE_PLUGIN_AUTOLOAD=1`` loads no entry points at all;
  ``RMAUDIT_LOAD_PLUGINS=a,b`` loads only the named distributions (empty: none);
* a plugin that fails to import is reported (``load_failures``) and skipped;
* ``check_pending()`` turns a misspelt hook name into a loud error.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import os
import warnings
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

from rmaudit import __version__
from rmaudit.errors import BadInput
from rmaudit.plugins import hookspecs

if TYPE_CHECKING:
    from rmaudit.components import Component

ENTRY_POINT_GROUP = "rmaudit"
BUILTIN_SOURCE = "rmaudit"

DEFAULT_PLUGINS = (
    "rmaudit.default_plugins.prompt_sources",
    "rmaudit.default_plugins.prompt_samplers",
    "rmaudit.default_plugins.embedders",
    "rmaudit.default_plugins.simulated",
    "rmaudit.default_plugins.reward_models",
    "rmaudit.default_plugins.huggingface",
    "rmaudit.default_plugins.openai_compat",
    "rmaudit.default_plugins.served",
    "rmaudit.default_plugins.llm_judge_oracle",
    "rmaudit.default_plugins.oracles",
    "rmaudit.default_plugins.policies",
    "rmaudit.default_plugins.metrics",
    "rmaudit.default_plugins.panels",
    "rmaudit.default_plugins.perturbers",
    "rmaudit.default_plugins.rewrite_perturbers",
    "rmaudit.default_plugins.pair_sources",
    "rmaudit.default_plugins.pair_metrics",
    "rmaudit.default_plugins.calibration_metrics",
    "rmaudit.default_plugins.rewardbench2",
    "rmaudit.default_plugins.shift_metrics",
    "rmaudit.default_plugins.regret",
    "rmaudit.default_plugins.benchmark_sources",
    "rmaudit.default_plugins.baselines",
    "rmaudit.default_plugins.judge_rm",
    "rmaudit.default_plugins.judge_metrics",
    "rmaudit.default_plugins.sim_judges",
    "rmaudit.default_plugins.verdicts_file",
    "rmaudit.default_plugins.recorded_judges",
    "rmaudit.default_plugins.rewardmath",
    "rmaudit.default_plugins.one_to_many",
    "rmaudit.default_plugins.solution_sources",
    "rmaudit.default_plugins.process_models",
    "rmaudit.default_plugins.process_metrics",
)

#: kind → name of its collector hook
HOOK_OF_KIND = {
    "prompt_source": "register_prompt_sources",
    "prompt_sampler": "register_prompt_samplers",
    "embedder": "register_embedders",
    "reference_policy": "register_reference_policies",
    "oracle": "register_oracles",
    "reward_model": "register_reward_models",
    "process_reward_model": "register_process_reward_models",
    "shift_perturber": "register_shift_perturbers",
    "metric": "register_metrics",
    "benchmark_source": "register_benchmark_sources",
}


@dataclass(frozen=True)
class Registered:
    """A component class and the plugin it came from."""

    cls: type[Component]
    source: str  # distribution name ("rmaudit" for built-ins)
    plugin: str  # pluggy plugin name (module path or entry-point name)

    @property
    def qualified_name(self) -> str:
        return f"{self.source}:{self.cls.name}"


@dataclass(frozen=True)
class PluginInfo:
    name: str
    distribution: str
    version: str
    hooks: tuple[str, ...]
    builtin: bool


pm = pluggy.PluginManager("rmaudit")
pm.add_hookspecs(hookspecs)

_distribution_of: dict[str, tuple[str, str]] = {}  # plugin name → (distribution, version)
load_failures: list[str] = []
_builtins_loaded = False
_entry_points_loaded = False


def load_plugins() -> None:
    """Register the built-ins, then the entry-point plugins, once (idempotent)."""
    global _builtins_loaded
    if _builtins_loaded:
        return
    _builtins_loaded = True
    # plugins registered before (entry points loaded for their commands) move after the built-ins
    early = pm.list_name_plugin()
    for _, plugin in early:
        pm.unregister(plugin)
    for module_path in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(module_path), name=module_path)
        _distribution_of[module_path] = (BUILTIN_SOURCE, __version__)
    for name, plugin in early:
        pm.register(plugin, name=name)
    load_entry_point_plugins()
    pm.check_pending()


def installed_entry_points() -> list[EntryPoint]:
    """The ``rmaudit`` entry points that autoloading would load, from installed metadata alone
    (nothing imported): none under RMAUDIT_DISABLE_PLUGIN_AUTOLOAD, and only those named (by
    entry point or distribution) in RMAUDIT_LOAD_PLUGINS when it is set."""
    if os.environ.get("RMAUDIT_DISABLE_PLUGIN_AUTOLOAD"):
        return []
    allowlist = os.environ.get("RMAUDIT_LOAD_PLUGINS")
    allowed = None if allowlist is None else {p.strip() for p in allowlist.split(",") if p.strip()}
    return [
        entry_point
        for entry_point in entry_points(group=ENTRY_POINT_GROUP)
        if allowed is None or entry_point.name in allowed or _distribution(entry_point) in allowed
    ]


def _distribution(entry_point: EntryPoint) -> str:
    return entry_point.dist.name if entry_point.dist else entry_point.name


def load_entry_point_plugins() -> None:
    """Register the plugins of installed distributions once (idempotent), without the
    built-ins: all that finding a plugin command needs."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for entry_point in installed_entry_points():
        dist = _distribution(entry_point)
        if pm.get_plugin(entry_point.name) is not None:
            continue
        try:
            plugin = entry_point.load()
            pm.register(plugin, name=entry_point.name)
        except Exception as error:  # a broken third-party plugin must not take the host down
            message = (
                f"plugin {entry_point.name!r} ({dist}) failed to load and was skipped: {error}"
            )
            load_failures.append(message)
            warnings.warn(message, RuntimeWarning, stacklevel=2)
            continue
        version = entry_point.dist.version if entry_point.dist else "unknown"
        _distribution_of[entry_point.name] = (dist, version)
    pm.check_pending()


def load_plugins_dir(directory: str) -> None:
    """Register every ``*.py`` file of ``directory`` as a plugin (like Datasette's --plugins-dir).

    A file that fails to import (a syntax error, an exception) or implements a hook that does
    not exist (a misspelled name) is ``BadInput`` naming the file: the user asked for it."""
    load_plugins()
    for path in sorted(Path(directory).glob("*.py")):
        name = str(path)
        if pm.get_plugin(name) is not None:
            continue
        spec = importlib.util.spec_from_file_location(f"rmaudit_plugins_dir.{path.stem}", path)
        if spec is None or spec.loader is None:
            raise BadInput("not a Python module rmaudit can import", file=name)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except SyntaxError as error:
            raise BadInput(
                f"syntax error: {error.msg}", file=name, field=f"line {error.lineno}"
            ) from None
        except Exception as error:
            raise BadInput(
                f"the plugin failed to load: {type(error).__name__}: {error}", file=name
            ) from None
        pm.register(module, name=name)
        _distribution_of[name] = (f"plugins-dir:{path.stem}", "")
        try:
            pm.check_pending()
        except pluggy.PluginValidationError:
            pm.unregister(module)
            unknown = _unknown_hook(module)
            close = difflib.get_close_matches(unknown, _hook_names(), n=1)
            raise BadInput(
                "not a hook rmaudit has"
                + (
                    f"; did you mean {close[0]!r}?"
                    if close
                    else f"; known: {', '.join(_hook_names())}"
                ),
                file=name,
                field=unknown,
            ) from None


def _hook_names() -> list[str]:
    return sorted(
        name
        for name in dir(hookspecs)
        if getattr(getattr(hookspecs, name), "rmaudit_spec", None) is not None
    )


def _unknown_hook(module: Any) -> str:
    known = set(_hook_names())
    return next(
        (
            name
            for name in dir(module)
            if name not in known
            and getattr(getattr(module, name), "rmaudit_impl", None) is not None
        ),
        "?",
    )


def _load(builtins: bool) -> None:
    if builtins:
        load_plugins()
    else:
        load_entry_point_plugins()


def registered(kind: str, *, builtins: bool = True) -> list[Registered]:
    """Every component class of ``kind``, in registration order (``builtins=False``: those of
    third-party plugins only, without importing the built-ins)."""
    # the component base classes (numpy, pydantic) load with the first component asked for,
    # not with the plugin host: listing commands needs none of them
    from rmaudit.components import KINDS

    _load(builtins)
    hook_name = HOOK_OF_KIND[kind]
    base = KINDS[kind]
    found: list[Registered] = []
    for impl in reversed(getattr(pm.hook, hook_name).get_hookimpls()):
        source = _distribution_of.get(impl.plugin_name, (impl.plugin_name, ""))[0]
        if not builtins and source == BUILTIN_SOURCE:
            continue

        def register(cls: Any, _plugin: str = impl.plugin_name, _source: str = source) -> None:
            if not (isinstance(cls, type) and issubclass(cls, base)):
                raise TypeError(
                    f"plugin {_plugin!r} registered {cls!r} with {hook_name}; "
                    f"expected a subclass of {base.__name__}"
                )
            if not cls.name:
                raise TypeError(f"plugin {_plugin!r}: {cls.__name__} has no name")
            found.append(Registered(cls, _source, _plugin))

        impl.function(register=register)
    return found


def distribution_of(cls: type[Component]) -> tuple[str, str]:
    """(distribution, version) of the plugin that registered a component class; ("", "")
    for a class no plugin registered."""
    for found in registered(cls.kind):
        if found.cls is cls:
            return _distribution_of.get(found.plugin, (found.plugin, ""))
    return ("", "")


def component_names(kind: str) -> list[str]:
    return [r.cls.name for r in registered(kind)]


def resolve(
    kind: str, name: str, *, field: str | None = None, file: str | None = None
) -> Registered:
    """Find a component by ``name`` or ``plugin:name``, with "did you mean" on a miss."""
    candidates = registered(kind)
    source, _, bare = name.rpartition(":")
    matches = [r for r in candidates if r.cls.name == bare and (not source or r.source == source)]
    if len(matches) == 1:
        return matches[0]
    label = kind.replace("_", " ")
    if len(matches) > 1:
        sources = ", ".join(r.qualified_name for r in matches)
        raise BadInput(
            f"{label} name is registered by more than one plugin ({sources}); "
            f"address it as plugin:name",
            file=file,
            field=field,
            value=name,
        )
    names = sorted({r.cls.name for r in candidates})
    close = difflib.get_close_matches(bare, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(names)}"
    raise BadInput(f"unknown {label}{hint}", file=file, field=field, value=name)


def plugin_infos(*, builtins: bool = True) -> list[PluginInfo]:
    """The registered plugins (``builtins=False``: third-party ones only, as for registered())."""
    _load(builtins)
    infos = []
    for name, plugin in pm.list_name_plugin():
        hooks = tuple(sorted(c.name for c in pm.get_hookcallers(plugin) or ()))
        dist, version = _distribution_of.get(name, (name, ""))
        if builtins or dist != BUILTIN_SOURCE:
            infos.append(PluginInfo(name, dist, version, hooks, dist == BUILTIN_SOURCE))
    return infos
