"""An asynchronous client for OpenAI-compatible HTTP APIs (OpenAI, vLLM, TGI, ...).

What every API-backed component needs, in one place: requests run concurrently under a limit; the
official ``openai`` SDK sends them and retries 429s, 5xx replies, timeouts, dropped connections and
broken bodies with exponential backoff and jitter, honouring ``Retry-After``
(:mod:`rmaudit.backends.openai_api.sdk`); every reply is cached on disk under a hash of the request,
so a rerun — or a resumed, killed run — pays for nothing twice; and the API key is read from the
environment when requests are about to be sent, sent in a header, and never stored, logged or shown
(error messages are scrubbed of it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any, TypeVar, cast

from rmaudit.components.keys import content_key
from rmaudit.errors import BadInput

from .cache import RequestCache, default_cache_path
from .options import ApiConnection, RetriesSpent

T = TypeVar("T")

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, even inside a running event loop."""
    import asyncio  # here, not at import: the built-in plugins load this module every run
    from concurrent.futures import ThreadPoolExecutor

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class ApiClient:
    """Built once per component from its connection options (:class:`ApiConnection`); opens a
    session per batch."""

    def __init__(self, options: ApiConnection) -> None:
        env = options.api_key_env or None
        if env is not None and not _ENV_NAME.fullmatch(env):
            # never echo the value: it is most likely the key itself
            raise BadInput(
                "expected the NAME of an environment variable holding the key "
                "(e.g. OPENAI_API_KEY), not the key",
                field="api_key_env",
            )
        self.options = options
        self.base_url = options.base_url.rstrip("/")
        self.api_key_env = env
        self._cache: RequestCache | None = None

    @property
    def cache(self) -> RequestCache:
        if self._cache is None:  # created on first use, so a dry run writes no file
            self._cache = RequestCache(self.options.cache or default_cache_path())
        return self._cache

    def request_key(self, endpoint: str, payload: dict[str, Any], extra: Any = None) -> str:
        """Cache key of a request: server, endpoint, body and ``extra`` (e.g. a sample index)."""
        return content_key("api-request", self.base_url, endpoint, payload, extra)

    def api_key(self) -> str | None:
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise BadInput(
                f"environment variable {self.api_key_env} is not set; it must hold "
                f"the API key for {self.base_url}",
                field="api_key_env",
            )
        return key

    def run(self, work: Callable[[ApiSession], Awaitable[T]], *, ready: bool = False) -> T:
        """Open a session (one HTTP connection pool, one concurrency limit) and run ``work``;
        ``ready``: its requests are a component's ready call (:meth:`ApiSession.post`)."""
        return run_sync(self._run(work, ready))

    async def _run(self, work: Callable[[ApiSession], Awaitable[T]], ready: bool) -> T:
        session = ApiSession(self, ready=ready)
        try:
            return await work(session)
        finally:
            await session.close()

    def sender(self) -> Any:
        """An SDK sender (:class:`rmaudit.backends.openai_api.sdk.Sender`); the key is read now,
        when a
        request is about to be sent: a batch whose replies are all cached needs none."""
        try:
            from .sdk import Sender
        except ImportError:
            raise BadInput(
                "OpenAI-compatible components need the openai SDK: pip install 'rmaudit[api]'"
            ) from None
        return Sender(self.base_url, self.api_key(), self.api_key_env, self.options)


class _Stopped(Exception):
    """A request not sent: another of its batch failed (:meth:`ApiSession.gather`)."""


class ApiSession:
    """Requests of one batch: concurrent under the client's limit, cached, retried."""

    def __init__(self, client: ApiClient, *, ready: bool = False) -> None:
        self.client = client
        self.ready = ready
        self._sender: Any = None  # opened on the first request the cache cannot answer
        import asyncio

        self._limit = asyncio.Semaphore(client.options.concurrency)
        #: set when a call of :meth:`gather` failed: no request is sent after that
        self._stopped = False

    async def gather(self, calls: Iterable[Awaitable[T]]) -> list[T]:
        """Every call's result, in order, the calls run concurrently.  When one fails, no
        request starts after it, and the ones already started are awaited (their retries
        included) before the first call's error is raised: their replies are cached, so the
        rerun does not pay for them again."""
        import asyncio

        ended = await asyncio.gather(*(self._watched(c) for c in calls), return_exceptions=True)
        errors = [e for e in ended if isinstance(e, BaseException)]
        if errors:
            # a call not sent because another failed is not the error (a nested gather's
            # sibling can stop before the failing call's own gather raises)
            raise next((e for e in errors if not isinstance(e, _Stopped)), errors[0])
        return cast(list[T], ended)

    async def _watched(self, call: Awaitable[T]) -> T:
        try:
            return await call
        except Exception:
            # in the failing call's own step, before the slot its request freed is taken
            self._stopped = True
            raise

    async def close(self) -> None:
        if self._sender is not None:
            await self._sender.__aexit__(None, None, None)

    async def post(
        self,
        endpoint: str,
        payload: dict[str, Any],
        *,
        cache_key: str | None,
        usable: Callable[[dict[str, Any]], bool] | None = None,
    ) -> dict[str, Any]:
        """POST ``payload`` to ``base_url + endpoint``; the reply's JSON body.

        ``cache_key`` None skips the request cache (the caller caches finer-grained items).
        A reply ``usable`` rejects (a judge reply with no score) is neither cached nor served
        from the cache: a rerun asks again.
        """
        if cache_key is not None:
            cached = self.client.cache.get(cache_key)
            if cached is not None and (usable is None or usable(cached)):
                return cached
        if self._sender is None:
            self._sender = self.client.sender()
        async with self._limit:
            if self._stopped:
                raise _Stopped
            body = await (self._ready_post if self.ready else self._sender.post)(endpoint, payload)
        if cache_key is not None and (usable is None or usable(body)):
            self.client.cache.put(cache_key, endpoint, body)
        return body

    async def _ready_post(self, endpoint: str, payload: dict[str, Any]) -> dict[str, Any]:
        """A ready call, made before a run writes anything: a URL where nothing answers (no
        connection, or no reply within ``timeout_s``) is ``BadInput`` at the first attempt,
        not after every retry; another failure (a busy server's 429 or 5xx) is retried as
        usual, and ``BadInput`` once the retries are spent."""
        url = self.client.base_url
        try:
            return await self._sender.post(endpoint, payload, retries=0)
        except RetriesSpent as error:
            if error.silent:
                raise BadInput(
                    f"nothing answers at this URL: its ready call got {error.last}; check "
                    "the URL and that the server runs (a slow one: timeout_s, "
                    f"--request-timeout, now {self.client.options.timeout_s:g} s); nothing "
                    "was written",
                    field="base_url",
                    value=url,
                ) from None
        try:
            return await self._sender.post(endpoint, payload)
        except RetriesSpent as error:
            raise BadInput(
                f"the ready call: POST {error.url} gave up after {error.attempts + 1} "
                f"attempts (last: {error.last}); nothing was written",
                field="base_url",
                value=url,
            ) from None
