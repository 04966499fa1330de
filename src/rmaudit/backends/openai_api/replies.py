"""Endpoints and reply fields of the OpenAI-compatible API that components read."""

from __future__ import annotations

from typing import Any

CHAT = "/chat/completions"
EMBEDDINGS = "/embeddings"


def usage(body: dict[str, Any]) -> tuple[int, int]:
    """(prompt tokens, completion tokens) a reply reports; 0 where it reports none."""
    reported = body.get("usage") or {}
    return int(reported.get("prompt_tokens") or 0), int(reported.get("completion_tokens") or 0)


def chat_contents(body: dict[str, Any]) -> list[str | None]:
    """The message text of each choice of a chat completion (None where there is none)."""
    choices = body.get("choices")
    if not isinstance(choices, list):
        return [None]
    contents = []
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        contents.append(content if isinstance(content, str) else None)
    return contents
