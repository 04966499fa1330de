"""Testing helpers for rmaudit plugins, loaded into pytest through the ``pytest11`` entry point.

With rmaudit installed, every pytest session gets two fixtures:

* ``rmaudit_db`` — an empty :class:`rmaudit.store.Store` in a temporary folder;
* ``register_plugin`` — a context manager that registers a plugin (a module or any object
  with ``@hookimpl`` functions) for the duration of a ``with`` block::

      def test_my_metric_is_found(register_plugin):
          with register_plugin(my_plugin_module):
              assert plugins.resolve("metric", "my-metric").cls is MyMetric

and the conformance checks of :mod:`rmaudit.testing.conformance` (``check_component`` for any
of the twelve kinds, ``check_metric``, ``check_oracle``, ``check_reward_model``,
``check_process_reward_model``, ``check_reference_policy``, ``check_shift_perturber``; one
check by name: ``check_names``, ``run_check``) that a plugin author calls on their own
components::

      from rmaudit.testing import check_metric

      def test_my_metric_conforms():
          check_metric(MyMetric)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from rmaudit.testing.conformance import (
    ConformanceError,
    check_component,
    check_metric,
    check_names,
    check_oracle,
    check_process_reward_model,
    check_reference_policy,
    check_reward_model,
    check_shift_perturber,
    run_check,
)
from rmaudit.testing.samples import (
    sample_benchmark,
    sample_prompts,
    sample_responses,
    sample_solutions,
)

__all__ = [
    "ConformanceError",
    "check_component",
    "check_metric",
    "check_names",
    "check_oracle",
    "check_process_reward_model",
    "check_reference_policy",
    "check_reward_model",
    "check_shift_perturber",
    "registered_plugin",
    "run_check",
    "sample_benchmark",
    "sample_prompts",
    "sample_responses",
    "sample_solutions",
]


@contextmanager
def registered_plugin(plugin: Any, name: str | None = None) -> Iterator[Any]:
    """Register ``plugin`` with rmaudit's plugin manager inside a ``with`` block, then remove it.

    The plugin's components are addressed in recipes as ``name`` or ``<name>:<component>``;
    ``name`` defaults to a module's ``__name__``.  A misspelt hook fails on entry, as it would
    for an installed plugin.
    """
    from rmaudit.plugins import host as plugins

    plugins.load_plugins()
    name = name or getattr(plugin, "__name__", None) or f"test-plugin-{id(plugin):x}"
    plugins.pm.register(plugin, name=name)
    plugins._distribution_of[name] = (name, "")
    try:
        plugins.pm.check_pending()
        yield plugin
    finally:
        plugins.pm.unregister(name=name)
        plugins._distribution_of.pop(name, None)


@pytest.fixture
def register_plugin():
    """``with register_plugin(module_or_object, name=None): ...`` — see
    :func:`registered_plugin`."""
    return registered_plugin


@pytest.fixture
def rmaudit_db(tmp_path):
    """An empty rmaudit database (:class:`rmaudit.store.Store`) at ``tmp_path / "rmaudit.db"``."""
    from rmaudit.store import Store

    store = Store.open(tmp_path / "rmaudit.db")
    yield store
    store.close()
