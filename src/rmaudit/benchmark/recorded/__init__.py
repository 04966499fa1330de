"""Judges run elsewhere, read from the files their publishers released: LLMBar's evaluator
outputs (:mod:`.llmbar`) and JudgeBench's (:mod:`.judgebench`), each record a pair with the
judge's verdicts in both orders, and where they lie under a data folder (docs/judges.md,
"Real judges").  The components that audit them are in
:mod:`rmaudit.default_plugins.recorded_judges`."""

from __future__ import annotations

from typing import Any


def shortened(value: Any) -> Any:
    """A value short enough for a one-line message: its repr cut at 60 characters."""
    text = repr(value)
    return value if len(text) <= 60 else text[:60] + "…"
