"""Preference-pair datasets: parse files of (prompt, chosen, rejected) into pairs.

Parsers for generic JSON Lines / JSON / CSV files with a field mapping, Anthropic HH-RLHF
dialogues, RM-Bench style variants, LLMBar and JudgeBench (:mod:`.judgebench`).  None of them
drops a record silently: each record gives pairs or a rejection naming its file, line and
reason (a :class:`rmaudit.components.PairLoad` holds both), and ``strict=True`` turns the first
rejection into a :class:`rmaudit.errors.BadInput`.
"""

from rmaudit.benchmark.pairs.judgebench import parse_judgebench
from rmaudit.benchmark.pairs.parsers import (
    PARSERS,
    parse_hh,
    parse_llmbar,
    parse_pairs,
    parse_rm_bench,
    split_hh_dialogues,
)

__all__ = [
    "PARSERS",
    "parse_hh",
    "parse_judgebench",
    "parse_llmbar",
    "parse_pairs",
    "parse_rm_bench",
    "split_hh_dialogues",
]
