"""One Ray instance for the whole test session: starting one costs seconds, and the machine
is small and shared (two CPUs, so a pool of two one-CPU workers fills it)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def ray_instance():
    """A local Ray started once; the ray executor of every recipe joins it (ray.init was
    already called) and leaves it running."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False)
    yield ray
    ray.shutdown()
