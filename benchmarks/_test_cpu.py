"""A pytest plugin that prints each test's CPU seconds beside its wall seconds at the end of
the session, for benchmarks/README.md ("The test suite's slowest tests"): CPU is this
process's user + system time plus its reaped children's (the subprocesses a test starts and
waits for), so a figure holds at any load, where ``--durations``' wall time does not.

    PYTHONPATH=$PWD/src:$PWD/benchmarks python -m pytest -q -p no:xdist -p _test_cpu FILES
"""

from __future__ import annotations

import resource
import time

import pytest

_seconds: dict[str, tuple[float, float]] = {}


def _cpu() -> float:
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, wall = _cpu(), time.perf_counter()
    yield  # setup, call and teardown
    _seconds[item.nodeid] = (_cpu() - cpu, time.perf_counter() - wall)


def pytest_terminal_summary(terminalreporter):
    for nodeid, (cpu, wall) in sorted(_seconds.items(), key=lambda item: -item[1][0]):
        terminalreporter.write_line(f"CPU {cpu:7.2f} s  wall {wall:7.2f} s  {nodeid}")
