"""tests/_schedule.py's list of the longest files names files that exist, each once: a renamed
file would otherwise drop out of the order silently and run last, alone."""

from __future__ import annotations

from pathlib import Path

from _schedule import LONGEST

ROOT = Path(__file__).resolve().parents[1]


def test_every_file_of_the_longest_first_order_exists_once():
    assert len(set(LONGEST)) == len(LONGEST)
    assert [path for path in LONGEST if not (ROOT / path).is_file()] == []
