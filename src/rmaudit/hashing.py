"""Content keys: stable hashes of JSON-able values (DESIGN.md, content-addressed store)."""

import hashlib
import json
from typing import Any

KEY_LENGTH = 20  # hex digits: 80 bits, collision-free for any benchmark we will see


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def content_key(*parts: Any) -> str:
    """Hash of the canonical JSON of ``parts``."""
    return hashlib.sha256(canonical_json(list(parts)).encode()).hexdigest()[:KEY_LENGTH]


def prompt_id(text: str) -> str:
    """Prompts are identified by their text, whichever source they came from."""
    return content_key("prompt", text)


def response_id(policy_key: str, prompt: str, sample_index: int) -> str:
    """A response is the ``sample_index``-th sample of a policy for a prompt."""
    return content_key("response", policy_key, prompt, sample_index)
