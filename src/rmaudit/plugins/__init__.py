"""The plugin host (:mod:`.host`) and the hook specifications (:mod:`.hookspecs`).

Built-in components register by module path, third parties by the ``rmaudit`` entry-point
group, both through the same hooks; a component name resolves to its class here
(docs/architecture.md, "Plugin kinds").  Import the host's functions from this package.
"""

from .host import (
    BUILTIN_SOURCE,
    DEFAULT_PLUGINS,
    ENTRY_POINT_GROUP,
    HOOK_OF_KIND,
    PluginInfo,
    Registered,
    component_names,
    distribution_of,
    installed_entry_points,
    load_entry_point_plugins,
    load_plugins,
    load_plugins_dir,
    plugin_infos,
    pm,
    registered,
    resolve,
)

__all__ = [
    "BUILTIN_SOURCE",
    "DEFAULT_PLUGINS",
    "ENTRY_POINT_GROUP",
    "HOOK_OF_KIND",
    "PluginInfo",
    "Registered",
    "component_names",
    "distribution_of",
    "installed_entry_points",
    "load_entry_point_plugins",
    "load_plugins",
    "load_plugins_dir",
    "plugin_infos",
    "pm",
    "registered",
    "resolve",
]
