"""What the preference-pair parsers produce: pairs (each a :class:`SourcedPair`, as a pair
source gives it), and the records they could not use."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from rmaudit.components.records import SourcedPair


@dataclass(frozen=True)
class Rejected:
    """A record that gave no pair: where it starts in the file and why.

    ``reason`` is a short category ("missing field", "empty response", ...) so rejections can
    be counted by kind; ``field`` and ``value`` locate the problem when one field is at fault.
    """

    line: int
    reason: str
    field: str | None = None
    value: Any = None


@dataclass(frozen=True)
class ParseResult:
    """Everything a parser read from one file.

    Every record of the file either contributes pairs or is in ``rejected``:
    ``parsed + len(rejected) == records``.  A record may give several pairs (RM-Bench gives 9);
    each pair's ``meta["line"]`` is the line of the file its record starts on.
    """

    pairs: list[SourcedPair]
    rejected: list[Rejected]
    records: int

    @property
    def parsed(self) -> int:
        """How many records gave pairs."""
        return self.records - len(self.rejected)

    def reasons(self) -> Counter[str]:
        """Rejected records counted by reason."""
        return Counter(r.reason for r in self.rejected)
