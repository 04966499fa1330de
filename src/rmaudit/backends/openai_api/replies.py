"""Endpoints and reply fields of the OpenAI-compatible API that components read.

A reply is data from a server, not a promise: what is read from it here is always something a
run can store.  A text holding a lone surrogate (``"\\ud800"``, which JSON can carry and UTF-8
cannot) has it escaped as the six characters ``\\ud800``, and a token count that is not a whole
number of tokens counts 0, so a cached reply never fails a run at the same place again.
"""

from __future__ import annotations

import math
from typing import Any

CHAT = "/chat/completions"
EMBEDDINGS = "/embeddings"
#: the largest token count a reply is believed (SQLite stores integers up to 2^63)
_MOST_TOKENS = 2**53


def usage(body: dict[str, Any]) -> tuple[int, int]:
    """(prompt tokens, completion tokens) a reply reports; 0 where it reports none, or a
    count that is no whole number of tokens."""
    reported = body.get("usage")
    if not isinstance(reported, dict):
        return 0, 0
    return _count(reported.get("prompt_tokens")), _count(reported.get("completion_tokens"))


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if not (math.isfinite(value) and 0 <= value < _MOST_TOKENS and value == int(value)):
        return 0
    return int(value)


def storable(text: str) -> str:
    """``text`` with any lone surrogate escaped (``\\ud800`` as six characters): the rest of
    the text unchanged, and all of it encodable as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def chat_contents(body: dict[str, Any]) -> list[str | None]:
    """The message text of each choice of a chat completion (None where there is none), each
    :func:`storable`."""
    choices = body.get("choices")
    if not isinstance(choices, list):
        return [None]
    contents = []
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        contents.append(storable(content) if isinstance(content, str) else None)
    return contents
