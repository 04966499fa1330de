"""OpenAI-compatible HTTP APIs: the shared client, its options and its request cache."""

from .cache import RequestCache, default_cache_path
from .client import ApiClient, ApiSession, run_sync
from .options import ApiConnection, ApiError, ApiOptions, CallEstimate, Price, estimate_tokens

__all__ = [
    "ApiClient",
    "ApiConnection",
    "ApiError",
    "ApiOptions",
    "ApiSession",
    "CallEstimate",
    "Price",
    "RequestCache",
    "default_cache_path",
    "estimate_tokens",
    "run_sync",
]
