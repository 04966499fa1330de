"""Deterministic pseudo-randomness keyed on content, not on call order.

Every random draw in the simulated world is a pure function of *what* is being drawn for
(a component, its seed, the texts involved), so results never depend on batching, call
order or which process did the work — the property the content-addressed store relies on.
Hashing the key with BLAKE2b and seeding a stdlib ``random.Random`` costs a few
microseconds, far cheaper than building a numpy ``Generator`` per response.  Only
``Random.random()`` is used, whose output for a given seed Python guarantees to be stable;
normals are made from it with Box-Muller rather than ``Random.gauss``.
"""

from __future__ import annotations

import hashlib
import math
import random

_SEPARATOR = b"\x1f"


def key_digest(*parts: object) -> bytes:
    """Return a 16-byte BLAKE2b digest of ``parts`` (each rendered with ``str``)."""
    hasher = hashlib.blake2b(digest_size=16)
    for part in parts:
        hasher.update(str(part).encode("utf-8"))
        hasher.update(_SEPARATOR)
    return hasher.digest()


class Draws:
    """A small stream of uniforms and normals seeded by a content key."""

    __slots__ = ("_rng",)

    def __init__(self, *parts: object) -> None:
        self._rng = random.Random(int.from_bytes(key_digest(*parts), "little"))

    def uniform(self) -> float:
        """A uniform draw in [0, 1)."""
        return self._rng.random()

    def normal(self) -> float:
        """A standard normal draw (Box-Muller on two uniforms)."""
        u1 = 1.0 - self._rng.random()  # in (0, 1], so the log is finite
        u2 = self._rng.random()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)

    def bernoulli(self, p: float) -> bool:
        """True with probability ``p``."""
        return self._rng.random() < p

    def poisson(self, lam: float) -> int:
        """A Poisson draw by inversion (fine for the small rates used here)."""
        threshold = math.exp(-lam)
        count, product = 0, self._rng.random()
        while product > threshold:
            count += 1
            product *= self._rng.random()
        return count

    def integer(self, low: int, high: int) -> int:
        """A uniform integer in [low, high] (inclusive)."""
        return low + min(int(self._rng.random() * (high - low + 1)), high - low)

    def choice(self, items):
        """One element of the non-empty sequence ``items``."""
        return items[self.integer(0, len(items) - 1)]

    def sample(self, items, k: int) -> list:
        """``k`` distinct elements of ``items`` in random order (partial Fisher-Yates)."""
        pool = list(items)
        k = min(k, len(pool))
        for i in range(k):
            j = self.integer(i, len(pool) - 1)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]


def standard_normal(*parts: object) -> float:
    """A single standard normal that is a pure function of ``parts``."""
    return Draws(*parts).normal()


def sigmoid(x: float) -> float:
    """The logistic function, safe for large ``|x|``."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)
