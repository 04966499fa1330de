"""The order the suite runs in, and how ``pytest -n`` (pytest-xdist) hands it to its workers:
the longest tests first, so that none of them runs alone at the end while the other workers
wait (tests/conftest.py installs both).

xdist's default (``--dist load``) sends each worker a long run of consecutive tests at the
start, so the long tests sorted first would all land on one worker.  Here a unit of work is a
test module instead (its tests share the module's fixtures, built once), except in the files
of ``EACH_TEST_ALONE``, whose tests are independent and seconds long each: each is a unit of
its own.  Units go out one at a time, in collection order, to the first worker with fewer than
three tests left, as ``--dist loadscope`` sends them.  A ``--dist`` other than ``load`` (which
``-n`` alone means) is left alone.
"""

from __future__ import annotations

from typing import Any

import pytest

#: the test files that take longest, longest first (``--durations=0``, summed by file, on an
#: idle 2-core machine; benchmarks/README.md, "The test suite's slowest tests"): mypy, cold in a
#: fresh clone, then every file of 3 s or more.  A module is one unit of work, so a long one
#: handed out late runs alone at the end while the other worker waits (a 28 s TUI file did:
#: 21 s of one worker idle); the short files after these fill the tail.  Only the order depends
#: on this list: a file missing from it runs, after these, where collection puts it.
LONGEST = (
    "tests/test_types.py",
    "tests/test_benchmarks.py",
    "tests/test_report_html.py",
    "tests/hf/test_bench_gpu.py",
    "tests/hf/test_gpu_all.py",
    "tests/hf/test_hub_unreachable.py",
    "tests/tui/test_tui_hostile.py",
    "tests/tui/test_tui_snapshots.py",
    "tests/tui/test_tui_pilot.py",
    "tests/tui/test_tui_many_models.py",
    "tests/hf/test_hf_judge_hub.py",
    "tests/ray/test_ray_executor.py",
    "tests/hf/test_scoring_checks_run.py",
    "tests/hf/test_hf_resume.py",
    "tests/sampling/test_kdpp.py",
    "tests/tui/test_tui_running.py",
    "tests/test_report.py",
    "tests/metrics/test_reta.py",
    "tests/api/test_served_rm_faults.py",
    "tests/hf/test_scoring_checks.py",
    "tests/tui/test_tui_pairs.py",
    "tests/test_signals.py",
    "tests/api/test_request_cache.py",
    "tests/hf/test_served_rm.py",
    "tests/test_audit_brief.py",
    "tests/hf/test_hf_loading.py",
    "tests/hf/test_hf_interrupt.py",
    "tests/test_conformance_builtins.py",
    "tests/test_bench_store.py",
    "tests/test_hostile_strings.py",
    "tests/api/test_judge_rm.py",
    "tests/hf/test_hf_scoring_engine.py",
    "tests/api/test_llm_judge.py",
    "tests/test_concurrency.py",
    "tests/metrics/budget/test_budget_estimators.py",
    "tests/test_recorded_judges_published.py",
    "tests/regret/test_regret_views.py",
    "tests/hf/test_hf_reward_models.py",
    "tests/tui/test_tui_panels.py",
    "tests/test_resume.py",
)
#: files whose tests share no module fixture and each take seconds: one worker running all of
#: them in a row would be the suite's tail
EACH_TEST_ALONE = frozenset({"tests/test_benchmarks.py"})


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def longest_first(items: list[pytest.Item]) -> None:
    """Sort ``items`` in place: the files of ``LONGEST`` in its order, then the rest as
    collected (a stable sort: each file's tests keep their order)."""
    rank = {path: place for place, path in enumerate(LONGEST)}
    items.sort(key=lambda item: rank.get(_file_of(item.nodeid), len(rank)))


def by_module_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's scheduler for ``-n`` without ``--dist``: a module a unit of work (a test of
    ``EACH_TEST_ALONE`` a unit alone), in collection order."""
    from xdist.scheduler import LoadScopeScheduling

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = _file_of(nodeid)
            return nodeid if path in EACH_TEST_ALONE else path

    # loadscope sorts its units by size, largest first; here collection order is the order
    config.option.loadscopereorder = False
    return ByModule(config, log)
