"""Recipes: a TOML file read and validated into typed component specs (docs/recipes.md).

:mod:`.loader` reads the recipe and builds its :class:`Recipe` (:mod:`.model`);
:mod:`.validation` checks an options table against its component's model; :mod:`.checks`
checks the sections against each other; :mod:`.budget` is the ``[oracle]`` label budget and
the cheap judge; :mod:`.executor_options` is the ``[executor]`` table.  Every problem is one
``BadInput`` line naming the file, the field and the value.
"""

from .checks import check_pool_size, metric_entry
from .loader import load_recipe, parse_recipe
from .model import Recipe
from .validation import ComponentSpec, component_spec, validate_options

__all__ = [
    "ComponentSpec",
    "Recipe",
    "check_pool_size",
    "component_spec",
    "load_recipe",
    "metric_entry",
    "parse_recipe",
    "validate_options",
]
