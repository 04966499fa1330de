"""Shared helpers for the simulated-world tests."""

from __future__ import annotations

import pytest

from rmaudit.backends.simulated import builtin_prompts


@pytest.fixture(scope="session")
def prompts() -> list[dict]:
    return builtin_prompts()
