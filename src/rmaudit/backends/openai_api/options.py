"""What every API-backed component's options share (where the API is, how to talk to it: the
connection; what its tokens cost), and the error a request that kept failing raises: the leaf
that the client and the SDK sender both import."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from rmaudit.components import ComponentOptions
from rmaudit.components.options import OPERATIONAL, SHARED_LIMIT, HttpUrl, OutputFile

#: the longest a request may wait for its reply: a day (longer is a typo)
MOST_TIMEOUT_S = 86_400.0


class Price(ComponentOptions):
    """USD per million tokens, as API price lists give it."""

    prompt: float = Field(ge=0, allow_inf_nan=False, description="USD per 1M prompt (input) tokens")
    completion: float = Field(
        ge=0, allow_inf_nan=False, description="USD per 1M completion (output) tokens"
    )

    def cost(self, prompt_tokens: float, completion_tokens: float) -> float:
        return (prompt_tokens * self.prompt + completion_tokens * self.completion) / 1e6


class ApiConnection(ComponentOptions):
    """Where an HTTP API is and how to talk to it: what the client needs, shared by every
    component that sends requests (a served reward model's server too).  How requests are
    made is OPERATIONAL: it never changes what they return."""

    base_url: HttpUrl = Field(
        description="e.g. https://api.openai.com/v1 or http://localhost:8000/v1"
    )
    api_key_env: Annotated[str | None, OPERATIONAL] = Field(
        "OPENAI_API_KEY",
        description="NAME of the environment variable holding the key (None or '': send no key)",
    )
    # the API's rate limit is the whole run's: executors split it among workers
    concurrency: Annotated[int, OPERATIONAL, SHARED_LIMIT] = Field(
        16, ge=1, description="requests in flight at once"
    )
    timeout_s: Annotated[float, OPERATIONAL] = Field(
        60.0,
        gt=0,
        le=MOST_TIMEOUT_S,
        allow_inf_nan=False,
        description="seconds a request waits for its reply before it is tried again",
    )
    max_retries: Annotated[int, OPERATIONAL] = Field(
        6,
        ge=0,
        description="retries of a request on 429, 5xx, timeouts and broken replies "
        "(backoff 0.5 s doubling to 8 s, or the Retry-After)",
    )
    cache: Annotated[OutputFile | None, OPERATIONAL] = Field(
        None,
        description="request cache file, relative to the recipe's folder (default: user cache dir)",
    )


class ApiOptions(ApiConnection):
    """An OpenAI-compatible API and what its tokens cost; shared by every component over one.
    How requests are accounted is OPERATIONAL: it never changes what they return."""

    price: Annotated[Price | None, OPERATIONAL] = Field(
        None, description="USD per 1M tokens, for cost accounting"
    )


@dataclass(frozen=True)
class CallEstimate:
    """What ``calls`` calls to a priced API are expected to use, its tokens at
    :func:`estimate_tokens`' ≈ 4 characters a token."""

    calls: int
    prompt_tokens: float
    completion_tokens: float

    @property
    def tokens(self) -> float:
        return self.prompt_tokens + self.completion_tokens

    def usd(self, price: Price | None) -> float | None:
        """Their USD at ``price``; None without one."""
        return None if price is None else price.cost(self.prompt_tokens, self.completion_tokens)


class ApiError(RuntimeError):
    """The API kept failing after every retry, or replied what no component can read: a run
    failure (rerun to resume)."""


class RetriesSpent(ApiError):
    """A request failed on every attempt.  ``last``: what went wrong on the last one;
    ``silent``: nothing answered at the URL (no connection) or no reply came in time."""

    def __init__(self, url: str, attempts: int, last: str, *, silent: bool = False) -> None:
        super().__init__(
            f"POST {url}: gave up after {attempts} attempt{'s' if attempts > 1 else ''} "
            f"(last: {last}); rerun to resume"
        )
        self.url, self.attempts, self.last, self.silent = url, attempts, last, silent


def estimate_tokens(text: str) -> float:
    """Approximate token count: about 4 characters per token for English (OpenAI's rule of
    thumb)."""
    return len(text) / 4.0
