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
from _random import Random  # random.Random's core: the same stream, without its Python layer

_SEPARATOR = "\x1f"
_TWO_PI = 2.0 * math.pi


def key_digest(*parts: object) -> bytes:
    """Return a 16-byte BLAKE2b digest of ``parts``: each rendered with ``str``, UTF-8, and
    followed by the separator 0x1F (hashed in one piece: the same digest as part by part)."""
    text = _SEPARATOR.join(map(str, parts)) + _SEPARATOR
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class Draws:
    """A small stream of uniforms and normals seeded by a content key.

    The stream is ``random.Random(seed).random()``'s for the key's seed: ``_random.Random``
    is the class ``random.Random`` derives from, and seeding it with an integer is exactly
    what ``random.Random(seed)`` does (its Python layer adds only ``gauss`` and the other
    distributions, unused here), for a third of the cost of a draw."""

    __slots__ = ("_rng",)

    def __init__(self, *parts: object) -> None:
        self._rng = Random(int.from_bytes(key_digest(*parts), "little"))

    def uniform(self) -> float:
        """A uniform draw in [0, 1)."""
        return self._rng.random()

    def normal(self) -> float:
        """A standard normal draw (Box-Muller on two uniforms)."""
        u1 = 1.0 - self._rng.random()  # in (0, 1], so the log is finite
        u2 = self._rng.random()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)

    def normals(self, count: int) -> list[float]:
        """``count`` successive :meth:`normal` draws (the same numbers, one call)."""
        random, sqrt, log, cos = self._rng.random, math.sqrt, math.log, math.cos
        out = []
        for _ in range(count):
            u1 = 1.0 - random()
            out.append(sqrt(-2.0 * log(u1)) * cos(_TWO_PI * random()))
        return out

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
        """One element of the non-empty sequence ``items`` (``integer(0, len - 1)``'s)."""
        n = len(items)
        return items[min(int(self._rng.random() * n), n - 1)]

    def sample(self, items, k: int) -> list:
        """``k`` distinct elements of ``items`` in random order (partial Fisher-Yates; each
        swap partner is ``integer(i, len - 1)``'s)."""
        if k <= 0:  # draws nothing either way
            return []
        pool = list(items)
        n = len(pool)
        k = min(k, n)
        random = self._rng.random
        for i in range(k):
            j = i + min(int(random() * (n - i)), n - 1 - i)
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
