"""The request cache is one SQLite file shared by every process on the machine (Ray workers
included): opening a new one from several processes at once must not fail."""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path

from rmaudit.backends.openai_api.cache import RequestCache, default_cache_path


def _open_and_put(path: str, i: int, start) -> None:
    start.wait()  # every process opens the new file at the same moment
    cache = RequestCache(Path(path))
    cache.put(f"key-{i}", "chat", {"reply": i})
    cache.close()


def test_processes_opening_a_new_cache_at_once_all_succeed(tmp_path):
    context = multiprocessing.get_context("fork")
    for trial in range(30):
        path = tmp_path / f"trial-{trial}" / "requests.sqlite"
        start = context.Barrier(6)
        workers = [
            context.Process(target=_open_and_put, args=(str(path), i, start)) for i in range(6)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=60)
        assert [w.exitcode for w in workers] == [0] * 6, f"trial {trial}"
        cache = RequestCache(path)
        assert [cache.get(f"key-{i}") for i in range(6)] == [{"reply": i} for i in range(6)]
        cache.close()


def test_the_cache_lives_in_rmaudit_cache_dir_else_the_user_cache_directory(tmp_path, monkeypatch):
    assert default_cache_path() == tmp_path / "cache" / "requests.sqlite"  # set by conftest
    monkeypatch.delenv("RMAUDIT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # the Linux convention
    if sys.platform.startswith("linux"):
        assert default_cache_path() == tmp_path / "xdg" / "rmaudit" / "requests.sqlite"
    assert default_cache_path().parent.name in ("rmaudit", "Cache")
