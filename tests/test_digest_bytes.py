"""The shortcuts that make a rerun's keys and digests cheap write the same bytes as the plain
definitions: content keys of strings, integers and None against ``canonical_json`` (the
encoder's own output), and a metric digest's sequences fed in one piece against a recursive
feed written here from the digest's byte format (``run/metric_digest.py``: ``_feed``) — so
keys and digests stored before the shortcuts still match."""

from __future__ import annotations

import hashlib
import math
import random
import string
import struct
from dataclasses import fields, is_dataclass, replace
from typing import Any

import numpy as np
import pytest

from rmaudit.components import VERDICTS, JudgedPairs, PairInputs
from rmaudit.components.keys import KEY_LENGTH, canonical_json, content_key
from rmaudit.run.metric_digest import inputs_digest

ALPHABET = string.printable + 'é\u2028\u2029\x00\x1f"\\ü😀'


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 30)))


def random_part(rng: random.Random) -> Any:
    return rng.choice(
        [
            random_text(rng),
            rng.randint(-(10**20), 10**20),
            None,
            True,
            False,
            1.5,
            [random_text(rng)],
            {"k": random_text(rng)},
        ]
    )


def test_content_keys_hash_the_canonical_json_of_their_parts():
    rng = random.Random(7)
    for _ in range(3000):
        parts = [random_part(rng) for _ in range(rng.randint(0, 5))]
        expected = hashlib.sha256(canonical_json(parts).encode()).hexdigest()[:KEY_LENGTH]
        assert content_key(*parts) == expected, parts


def reference_feed(h: Any, value: Any) -> None:
    """The digest's byte format, one value at a time."""
    if value is None:
        h.update(b"N")
    elif isinstance(value, bool | np.bool_):
        h.update(b"T" if value else b"F")
    elif isinstance(value, int | np.integer):
        h.update(b"i%d;" % int(value))
    elif isinstance(value, float | np.floating):
        h.update(b"f" + struct.pack("<d", float(value)))
    elif isinstance(value, str):
        encoded = value.encode()
        h.update(b"s" + b"b%d:" % len(encoded) + encoded)
    elif isinstance(value, np.ndarray):
        h.update(f"a{value.dtype.str}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif is_dataclass(value) and not isinstance(value, type):
        h.update(f"d{type(value).__module__}.{type(value).__qualname__}:".encode())
        for f in fields(value):
            reference_feed(h, f.name)
            reference_feed(h, getattr(value, f.name))
    elif isinstance(value, tuple | list):
        h.update(b"l%d:" % len(value))
        for item in value:
            reference_feed(h, item)
    elif isinstance(value, dict):
        h.update(b"m%d:" % len(value))
        for key, item in value.items():
            reference_feed(h, key)
            reference_feed(h, item)
    else:
        raise TypeError(type(value))


def reference_digest(inputs: Any) -> str:
    h = hashlib.blake2b(b"rmaudit metric digest 1", digest_size=20)
    reference_feed(h, inputs)
    return h.hexdigest()


def pair_inputs(rng: random.Random, metas: list[dict[str, Any]], subsets: list[Any]) -> PairInputs:
    n = len(metas)
    gen = np.random.default_rng(rng.randint(0, 1000))
    return PairInputs(
        tuple(f"{i:020x}" for i in range(n)),
        gen.normal(size=n),
        gen.normal(size=n),
        tuple(subsets),
        tuple(metas),
        {"prompt": {0.25: (gen.normal(size=n), gen.normal(size=n))}},
        tuple(random_text(rng) for _ in range(n)),
    )


@pytest.mark.parametrize(
    "meta",
    [
        lambda rng, i: {"chosen_style": i % 3, "rejected_style": (i // 3) % 3},
        lambda rng, i: {},
        lambda rng, i: {"source": random_text(rng), "n": -i},
        lambda rng, i: {"flag": bool(i % 2)},  # not in the one-piece form: fed one by one
        lambda rng, i: {"weight": i / 3},
        lambda rng, i: {"nested": {"a": i}},
    ],
    ids=["styles", "empty", "text and ints", "bools", "floats", "nested"],
)
def test_pair_inputs_digest_as_the_byte_format_says(meta):
    rng = random.Random(3)
    metas = [meta(rng, i) for i in range(40)]
    subsets = [rng.choice([None, "chat", random_text(rng)]) for _ in range(40)]
    inputs = pair_inputs(rng, metas, subsets)
    assert inputs_digest(inputs) == reference_digest(inputs)
    # one pair's meta or subset changed changes it
    changed_meta = replace(inputs, meta=({**metas[0], "x": 1}, *inputs.meta[1:]))
    changed_subset = replace(inputs, subsets=("other", *inputs.subsets[1:]))
    digests = {inputs_digest(x) for x in (inputs, changed_meta, changed_subset)}
    assert len(digests) == 3


def test_a_judges_verdicts_and_replies_digest_as_the_byte_format_says():
    """A judge's replies in both orders (pairs of texts) are fed in one piece too."""
    rng = random.Random(5)
    n = 30
    verdicts = JudgedPairs(
        tuple(rng.choice(VERDICTS) for _ in range(n)),
        tuple(rng.choice(VERDICTS) for _ in range(n)),
        np.array([rng.random() for _ in range(n)]),
        np.array([math.nan] + [rng.random() for _ in range(n - 1)]),
        replies=tuple((random_text(rng), random_text(rng)) for _ in range(n)),
    )
    inputs = replace(pair_inputs(rng, [{}] * n, [None] * n), verdicts=verdicts)
    assert inputs_digest(inputs) == reference_digest(inputs)
    one_reply = replace(verdicts, replies=(("other", ""), *verdicts.replies[1:]))
    assert inputs_digest(replace(inputs, verdicts=one_reply)) != inputs_digest(inputs)
