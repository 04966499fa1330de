"""Fixtures for the API components' tests: a local OpenAI-compatible server, a secret key in
the environment, a request cache in the test's own folder (never the user's), and the
client's backoff shortened."""

from __future__ import annotations

import pytest
from _api_support import KEY_ENV, SECRET

from rmaudit.testing.fake_openai import FakeOpenAI

pytest.importorskip("openai", reason="the api extra (the openai SDK) is not installed")


@pytest.fixture(autouse=True)
def api_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    monkeypatch.setenv("RMAUDIT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch):
    """The openai client waits 0.5 s, doubling, before it retries an error that brings no
    hint from the server (an HTML page on a 200, a dropped connection, a timeout), and offers
    no setting for it: here its first wait is 1 ms.  The retry is still made by its own code,
    and no test measures the wait.  A private name: should a release rename it, the tests
    wait the backoff again rather than fail (the SDK is not pinned)."""
    from openai import _base_client

    monkeypatch.setattr(_base_client, "INITIAL_RETRY_DELAY", 0.001, raising=False)


@pytest.fixture
def fake_openai():
    """Start servers: fake_openai(schedule, **options) -> a running FakeOpenAI (stopped after)."""
    servers = []

    def start(*args, **kwargs) -> FakeOpenAI:
        servers.append(FakeOpenAI(*args, **kwargs).start())
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def fake_served():
    """Start reward servers: fake_served(protocol, **options) -> a running RewardServer of
    tests/_served_rm.py scoring with Digest (stopped after)."""
    from _served_rm import Digest, RewardServer

    servers = []

    def start(protocol: str, **kwargs) -> RewardServer:
        servers.append(RewardServer(protocol, Digest(), **kwargs).start())
        return servers[-1]

    yield start
    for server in servers:
        server.stop()
