"""Fixtures for the API components' tests: a local OpenAI-compatible server, a secret key in
the environment, and a request cache in the test's own folder (never the user's)."""

from __future__ import annotations

import pytest
from _api_support import KEY_ENV, SECRET

from rmaudit.testing.fake_openai import FakeOpenAI

pytest.importorskip("openai", reason="the api extra (the openai SDK) is not installed")


@pytest.fixture(autouse=True)
def api_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    monkeypatch.setenv("RMAUDIT_CACHE_DIR", str(tmp_path / "cache"))


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
