"""Moved to :mod:`rmaudit.components.keys` (rmaudit 0.3); this import path keeps working for
plugins written against 0.2 (docs/architecture.md, "Moved modules")."""

from rmaudit.components.keys import (
    KEY_LENGTH,
    canonical_json,
    content_key,
    pair_id,
    prompt_id,
    response_id,
    shifted_prompt_id,
    shifted_response_id,
    text_response_id,
)

__all__ = [
    "KEY_LENGTH",
    "canonical_json",
    "content_key",
    "pair_id",
    "prompt_id",
    "response_id",
    "shifted_prompt_id",
    "shifted_response_id",
    "text_response_id",
]
