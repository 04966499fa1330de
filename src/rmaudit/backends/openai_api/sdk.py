"""Requests through the official ``openai`` SDK (the ``api`` extra), imported by
:class:`rmaudit.backends.openai_api.ApiClient` when a batch is about to be sent.

The SDK sends each request and retries 408, 409, 429 and 5xx replies, timeouts and dropped
connections with exponential backoff and jitter (0.5 s doubling to 8 s), or after the server's
``Retry-After`` when that is at most two minutes.  One thing is added: a 2xx reply whose body is
not a JSON object (an HTML error page from a proxy, a truncated body) is retried the same way.
When the SDK stops, its error becomes rmaudit's: :class:`BadInput` for a refusal that no retry
can fix, :class:`ApiError` (rerun to resume) otherwise, scrubbed of the key either way.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2  # the SDK's HTTP library
import openai

from rmaudit.errors import BadInput

from .options import ApiConnection, RetriesSpent

#: header the SDK sends with each attempt: how many retries came before it
RETRY_COUNT_HEADER = "x-stainless-retry-count"


class NotAJsonObject(httpx2.DecodingError):
    """A 2xx reply whose body is not a JSON object; the SDK retries it like a dropped connection."""


async def _require_json_object(response: httpx2.Response) -> None:
    if not response.is_success:
        return  # the SDK retries or reports it
    await response.aread()
    try:
        body = json.loads(response.content)
    except ValueError:
        raise NotAJsonObject(
            f"HTTP {response.status_code} with a body that is not JSON", request=response.request
        ) from None
    if not isinstance(body, dict):
        raise NotAJsonObject(
            f"HTTP {response.status_code} with a JSON body that is not an object",
            request=response.request,
        )


class Sender:
    """One batch's SDK client (one connection pool); use as ``async with``."""

    def __init__(
        self, base_url: str, key: str | None, key_env: str | None, options: ApiConnection
    ) -> None:
        self.base_url = base_url
        self.options = options
        self._key = key
        self._key_env = key_env
        http = openai.DefaultAsyncHttpxClient(event_hooks={"response": [_require_json_object]})
        # the SDK insists on a key; without one, each request omits the Authorization header
        self._sdk = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=key or "no-key",
            max_retries=options.max_retries,
            timeout=options.timeout_s,
            http_client=http,
        )
        self._request_options: Any = {} if key else {"headers": {"Authorization": openai.Omit()}}

    async def __aenter__(self) -> Sender:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._sdk.close()

    async def post(
        self, endpoint: str, payload: dict[str, Any], *, retries: int | None = None
    ) -> dict[str, Any]:
        """POST ``payload`` to ``base_url + endpoint``, retried by the SDK (``retries`` times,
        else ``max_retries``); the reply's JSON object."""
        options = self._request_options
        if retries is not None:
            options = {**options, "max_retries": retries}
        try:
            reply = await self._sdk.post(
                endpoint, body=payload, cast_to=httpx2.Response, options=options
            )
        except openai.APIError as error:
            raise self._failure(self.base_url + endpoint, error) from None
        return reply.json()

    def _failure(self, url: str, error: openai.APIError) -> Exception:
        if (
            isinstance(error, openai.APIStatusError)
            and 400 <= error.status_code < 500
            and error.status_code not in (408, 409, 429)
        ):
            return self._refusal(url, error)
        retries = error.request.headers.get(RETRY_COUNT_HEADER) if error.request else None
        attempts = (int(retries) if retries is not None else self.options.max_retries) + 1
        return RetriesSpent(
            url,
            attempts,
            self._scrub(self._problem(error)),
            # no connection at all (refused, no such host), or no reply in time
            silent=isinstance(error, openai.APITimeoutError)
            or isinstance(error.__cause__, httpx2.ConnectError),
        )

    def _problem(self, error: openai.APIError) -> str:
        """What went wrong on the last attempt."""
        if isinstance(error, openai.APIStatusError):
            return f"HTTP {error.status_code}"
        if isinstance(error, openai.APITimeoutError):
            return f"no reply within {self.options.timeout_s:g} s"
        cause = error.__cause__
        if isinstance(cause, NotAJsonObject):
            return str(cause)
        return f"connection failed ({type(cause or error).__name__}: {cause or error})"

    def _refusal(self, url: str, error: openai.APIStatusError) -> BadInput:
        """A 4xx the SDK does not retry: the recipe or the key must change, not the timing."""
        if error.status_code in (401, 403):
            # the server's text may quote part of the key: show none of it
            return BadInput(
                f"POST {url}: HTTP {error.status_code}, the server refused the key "
                f"in ${self._key_env}",
                field="api_key_env",
            )
        detail = error.response.text[:300].replace("\n", " ")
        try:
            detail = error.response.json()["error"]["message"][:300]
        except (ValueError, KeyError, TypeError):
            pass
        return BadInput(
            self._scrub(
                f"POST {url}: HTTP {error.status_code}: {detail} "
                f"(check base_url, model and the options)"
            )
        )

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text
