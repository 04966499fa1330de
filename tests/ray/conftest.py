"""One Ray instance for the whole test session: starting one costs seconds, and the machine
is small and shared (two CPUs, so a pool of two one-CPU workers fills it)."""

from __future__ import annotations

import pytest

#: Ray gives its raylet a fixed 30 s to register at start-up ("The current node timed out
#: during startup"), which a machine far busier than the suite's target can exceed: a failed
#: start is retried this many times in all, each from a clean slate
STARTS = 3


@pytest.fixture(scope="session")
def ray_instance():
    """A local Ray started once; the ray executor of every recipe joins it (ray.init was
    already called) and leaves it running."""
    ray = pytest.importorskip("ray")
    for start in range(1, STARTS + 1):
        try:
            ray.init(num_cpus=2, include_dashboard=False, configure_logging=False)
            break
        except Exception as error:
            if "timed out during startup" not in str(error) or start == STARTS:
                raise
            ray.shutdown()
    yield ray
    ray.shutdown()
