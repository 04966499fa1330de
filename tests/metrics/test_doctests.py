"""The examples in rmaudit.metrics docstrings are run, so they stay true to the code."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import rmaudit.metrics

MODULES = [rmaudit.metrics.__name__] + [
    found.name
    for found in pkgutil.walk_packages(rmaudit.metrics.__path__, rmaudit.metrics.__name__ + ".")
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    assert doctest.testmod(importlib.import_module(name)).failed == 0


def test_the_examples_are_found():
    # walk_packages finding nothing would make every case above pass vacuously
    assert "rmaudit.metrics.rewardbench2.ties" in MODULES
    assert doctest.testmod(importlib.import_module("rmaudit.metrics.rewardbench2.ties")).attempted
