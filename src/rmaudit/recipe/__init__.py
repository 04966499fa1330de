"""Recipes: a TOML file read and validated into typed component specs (docs/recipes.md).

:mod:`.loader` reads the recipe and builds its :class:`Recipe`; :mod:`.validation` checks an
options table against its component's model; :mod:`.executor_options` is the ``[executor]``
table.  Every problem is one ``BadInput`` line naming the file, the field and the value.
"""

from .loader import (
    ComponentSpec,
    Recipe,
    check_pool_size,
    component_spec,
    load_recipe,
    metric_entry,
    parse_recipe,
)
from .validation import validate_options

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
