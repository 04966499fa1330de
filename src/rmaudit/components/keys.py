"""Content keys: stable hashes of JSON-able values (docs/architecture.md, "Content-addressed,
resumable store")."""

import hashlib
import json
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

KEY_LENGTH = 20  # hex digits: 80 bits, collision-free for any benchmark we will see


#: ``json.dumps`` with these options builds an encoder per call; a run keys ~10⁵ items
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def canonical_json(value: Any) -> str:
    return _CANONICAL.encode(value)


def content_key(*parts: Any) -> str:
    """Hash of the canonical JSON of ``parts``."""
    return hashlib.sha256(_canonical_parts(parts).encode()).hexdigest()[:KEY_LENGTH]


#: the canonical JSON of the scalars keys are mostly made of, as the encoder writes them
_SCALARS: dict[type, Callable[[Any], str]] = {
    str: encode_basestring,
    int: int.__repr__,
    type(None): lambda _: "null",
}


def _canonical_parts(parts: tuple[Any, ...]) -> str:
    """``canonical_json(list(parts))``, written directly when every part is a string, an
    integer or None (ids, texts, seeds): a run keys ~10⁵ items."""
    try:
        return "[" + ",".join([_SCALARS[type(part)](part) for part in parts]) + "]"
    except KeyError:
        return canonical_json(list(parts))


def prompt_id(text: str) -> str:
    """Prompts are identified by their text, whichever source they came from."""
    return content_key("prompt", text)


def response_id(policy_key: str, prompt: str, sample_index: int) -> str:
    """A response is the ``sample_index``-th sample of a policy for a prompt."""
    return content_key("response", policy_key, prompt, sample_index)


def response_ids(policy_key: str, prompt: str, count: int) -> list[str]:
    """``response_id`` of sample indices 0 … count − 1: the canonical JSON of a list is its
    items joined by commas, so the common head is written once, not once per sample (a
    benchmark's plan and run key every response of every prompt)."""
    head = canonical_json(["response", policy_key, prompt])[:-1]
    return [
        hashlib.sha256(f"{head},{index}]".encode()).hexdigest()[:KEY_LENGTH]
        for index in range(count)
    ]


def text_response_id(prompt: str, text: str) -> str:
    """A response of a preference-pair file: no policy wrote it, so its prompt and text name it."""
    return content_key("text-response", prompt, text)


def placed_response_id(prompt: str, text: str, place: str) -> str:
    """A response of a pair file whose text the file holds in more than one place (a
    completion two RewardBench 2 rows share): its prompt, its text and its place, so that each
    place keeps its own score."""
    return content_key("placed-response", prompt, text, place)


def pair_id(prompt: str, chosen: str, rejected: str, subset: str | None) -> str:
    """A preference pair: its prompt, chosen and rejected response ids and its subset."""
    return content_key("pair", prompt, chosen, rejected, subset)


def solution_id(prompt: str, steps: tuple[str, ...]) -> str:
    """A solution a PRM scores: its question (prompt id) and its steps, in order."""
    return content_key("solution", prompt, list(steps))


def shifted_prompt_id(perturber_key: str, seed: int, prompt: str) -> str:
    """A prompt perturbed by a perturber (its key includes the level p) with a sweep seed.

    Keyed by what determines the text, not by the text, so a rerun knows what is stored
    without perturbing anything again.
    """
    return content_key("shifted-prompt", perturber_key, seed, prompt)


def shifted_response_id(perturber_key: str | None, seed: int, response: str, prompt: str) -> str:
    """A response of a shift sweep: ``response`` perturbed (``perturber_key`` None: left as it
    is), answering ``prompt`` (the original prompt, or its shifted copy)."""
    return content_key("shifted-response", perturber_key, seed, response, prompt)
