"""An asynchronous client for OpenAI-compatible HTTP APIs (OpenAI, vLLM, TGI, ...).

What every API-backed component needs, in one place: requests run concurrently under a
limit; 429s, 5xx replies, timeouts and dropped connections are retried with exponential
backoff and jitter (honouring ``Retry-After``); every reply is cached on disk under a hash of
the request, so a rerun — or a resumed, killed run — pays for nothing twice; and the API
key is read from the environment when requests are about to be sent, sent in a header, and
never stored, logged or shown (error messages are scrubbed of it).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import Field

from rmaudit.components import ComponentOptions
from rmaudit.errors import BadInput
from rmaudit.hashing import content_key
from rmaudit.options import OPERATIONAL, SHARED_LIMIT

from .cache import RequestCache, default_cache_path

T = TypeVar("T")

#: Longest wait between two attempts, whatever the backoff or Retry-After says.
MAX_BACKOFF_S = 60.0
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Price(ComponentOptions):
    """USD per million tokens, as API price lists give it."""

    prompt: float = Field(ge=0, description="USD per 1M prompt (input) tokens")
    completion: float = Field(ge=0, description="USD per 1M completion (output) tokens")

    def cost(self, prompt_tokens: float, completion_tokens: float) -> float:
        return (prompt_tokens * self.prompt + completion_tokens * self.completion) / 1e6


class ApiOptions(ComponentOptions):
    """Where the API is and how to talk to it; shared by every API-backed component.  How
    requests are made or accounted is OPERATIONAL: it never changes what they return."""

    base_url: str = Field(description="e.g. https://api.openai.com/v1 or http://localhost:8000/v1")
    api_key_env: Annotated[str | None, OPERATIONAL] = Field(
        "OPENAI_API_KEY", description="NAME of the environment variable holding the key "
                                      "(None or '': send no key)")
    # the API's rate limit is the whole run's: executors split it among workers
    concurrency: Annotated[int, OPERATIONAL, SHARED_LIMIT] = Field(
        16, ge=1, description="requests in flight at once")
    timeout_s: Annotated[float, OPERATIONAL] = Field(60.0, gt=0, description="per-request timeout")
    max_retries: Annotated[int, OPERATIONAL] = Field(
        6, ge=0, description="retries of a request on 429, 5xx and timeouts")
    backoff_s: Annotated[float, OPERATIONAL] = Field(
        1.0, ge=0, description="first backoff; doubles per retry, with jitter")
    cache: Annotated[Path | None, OPERATIONAL] = Field(
        None, description="request cache file (default: user cache dir)")
    price: Annotated[Price | None, OPERATIONAL] = Field(
        None, description="USD per 1M tokens, for cost accounting")


class ApiError(RuntimeError):
    """The API kept failing after every retry: a run failure (rerun to resume)."""


def estimate_tokens(text: str) -> float:
    """Approximate token count: about 4 characters per token for English (OpenAI's rule of thumb)."""
    return len(text) / 4.0


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, even inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class ApiClient:
    """Built once per component from its :class:`ApiOptions`; opens a session per batch."""

    def __init__(self, options: ApiOptions) -> None:
        if not re.match(r"https?://", options.base_url):
            raise BadInput("expected an http:// or https:// URL", field="base_url",
                           value=options.base_url)
        env = options.api_key_env or None
        if env is not None and not _ENV_NAME.fullmatch(env):
            # never echo the value: it is most likely the key itself
            raise BadInput("expected the NAME of an environment variable holding the key "
                           "(e.g. OPENAI_API_KEY), not the key", field="api_key_env")
        self.options = options
        self.base_url = options.base_url.rstrip("/")
        self.api_key_env = env
        self._cache: RequestCache | None = None
        self._jitter = random.Random()

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
            raise BadInput(f"environment variable {self.api_key_env} is not set; it must hold "
                           f"the API key for {self.base_url}", field="api_key_env")
        return key

    def run(self, work: Callable[["ApiSession"], Awaitable[T]]) -> T:
        """Open a session (one HTTP connection pool, one concurrency limit) and run ``work``."""
        return run_sync(self._run(work))

    async def _run(self, work: Callable[["ApiSession"], Awaitable[T]]) -> T:
        try:
            import httpx
        except ImportError:
            raise BadInput("OpenAI-compatible components need httpx: "
                           "pip install 'rmaudit[api]'") from None
        key = self.api_key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with httpx.AsyncClient(headers=headers, timeout=self.options.timeout_s) as http:
            return await work(ApiSession(self, http, key))

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with "equal jitter" (half fixed, half random), so clients that
        failed together do not retry together; at least the server's Retry-After."""
        ceiling = min(MAX_BACKOFF_S, self.options.backoff_s * 2 ** attempt)
        delay = ceiling / 2 + self._jitter.uniform(0, ceiling / 2)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, MAX_BACKOFF_S)


class ApiSession:
    """Requests of one batch: concurrent under the client's limit, cached, retried."""

    def __init__(self, client: ApiClient, http: Any, key: str | None) -> None:
        self.client = client
        self.http = http
        self._key = key
        self._limit = asyncio.Semaphore(client.options.concurrency)

    async def post(self, endpoint: str, payload: dict[str, Any], *,
                   cache_key: str | None) -> dict[str, Any]:
        """POST ``payload`` to ``base_url + endpoint``; the reply's JSON body.

        ``cache_key`` None skips the request cache (the caller caches finer-grained items).
        """
        if cache_key is not None:
            cached = self.client.cache.get(cache_key)
            if cached is not None:
                return cached
        async with self._limit:
            body = await self._post_with_retries(endpoint, payload)
        if cache_key is not None:
            self.client.cache.put(cache_key, endpoint, body)
        return body

    async def _post_with_retries(self, endpoint: str, payload: dict[str, Any]) -> dict[str, Any]:
        import httpx

        url = self.client.base_url + endpoint
        retries = self.client.options.max_retries
        for attempt in range(retries + 1):
            retry_after = None
            try:
                reply = await self.http.post(url, json=payload)
            except httpx.TimeoutException:
                problem = f"no reply within {self.client.options.timeout_s:g} s"
            except httpx.TransportError as error:
                problem = f"connection failed ({type(error).__name__}: {error})"
            else:
                if reply.status_code == 200:
                    try:
                        body = reply.json()
                    except json.JSONDecodeError:
                        problem = "HTTP 200 with a body that is not JSON"
                    else:
                        if isinstance(body, dict):
                            return body
                        problem = "HTTP 200 with a JSON body that is not an object"
                elif reply.status_code == 429 or reply.status_code >= 500:
                    problem = f"HTTP {reply.status_code}"
                    retry_after = _seconds(reply.headers.get("retry-after"))
                else:
                    raise self._refusal(url, reply)
            if attempt < retries:
                await asyncio.sleep(self.client.backoff(attempt, retry_after))
        raise ApiError(self._scrub(f"POST {url}: gave up after {retries + 1} attempts "
                                   f"(last: {problem}); rerun to resume"))

    def _refusal(self, url: str, reply: Any) -> BadInput:
        """A 4xx other than 429: retrying cannot help, the recipe or the key must change."""
        if reply.status_code in (401, 403):
            # the server's text may quote part of the key: show none of it
            return BadInput(f"POST {url}: HTTP {reply.status_code}, the server refused the key "
                            f"in ${self.client.api_key_env}", field="api_key_env")
        detail = reply.text[:300].replace("\n", " ")
        try:
            detail = reply.json()["error"]["message"][:300]
        except (ValueError, KeyError, TypeError):
            pass
        return BadInput(self._scrub(f"POST {url}: HTTP {reply.status_code}: {detail} "
                                    f"(check base_url, model and the options)"))

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text


def _seconds(header: str | None) -> float | None:
    try:
        return max(0.0, float(header)) if header else None
    except ValueError:  # an HTTP date: rare for APIs; the backoff applies
        return None
