"""Reading a score out of a judge's reply.

Judges answer in many shapes: MT-bench's ``Rating: [[7]]``, the RETA templates' bare ``7``,
``7/10``, ``Score: 7.5``.  :func:`parse_score` tries the explicit forms first, so a reply
that explains itself ("... the 3 steps are right. Rating: [[8]]") gives the rating, not
the first number it mentions.  A reply with no score in the scale is unparseable (None):
the caller records it as a failure rather than guessing.
"""

from __future__ import annotations

import math
import re

_NUMBER = r"(-?\d+(?:\.\d+)?)"
# most explicit first: a later pattern only applies when no earlier one matches
_PATTERNS = (
    re.compile(r"\[\[\s*" + _NUMBER + r"\s*\]\]"),  # Rating: [[7]]
    re.compile(r"\b(?:rating|score)\b\s*(?:is|of)?\s*[:=]?\s*\**\s*" + _NUMBER, re.I),  # Score: 7
    re.compile(_NUMBER + r"\s*(?:/|out of)\s*10\b", re.I),  # 7/10
    re.compile(r"^\s*\**\s*" + _NUMBER + r"\s*\**\s*\.?\s*$"),  # 7
)


def parse_score(reply: str, low: float = 1.0, high: float = 10.0) -> float | None:
    """The score in ``reply``, or None when it has none inside ``[low, high]``."""
    for pattern in _PATTERNS:
        match = pattern.search(reply)
        if match:
            value = float(match.group(1))
            return value if math.isfinite(value) and low <= value <= high else None
    return None
