"""JudgeBench's pairs (*JudgeBench: A Benchmark for Evaluating LLM-based Judges*, arXiv
2410.12784; github.com/ScalerLab/JudgeBench ``data/``): records ``{pair_id, source, question,
response_A, response_B, label}`` with ``label`` ``"A>B"`` or ``"B>A"`` naming the correct
response, and the category each ``source`` belongs to (the paper's Table 1)."""

from __future__ import annotations

from typing import Any

from rmaudit.components.kinds import PairSource
from rmaudit.components.records import PairLoad, SourcedPair

from .parsers import PathLike, RecordProblem, _distinct, _parse, _shown, _string

#: (prefix of a record's ``source``, its category), as JudgeBench's run_judge.py reports them
CATEGORIES = (
    ("mmlu-pro", "Knowledge"),
    ("livebench-reasoning", "Reasoning"),
    ("livebench-math", "Math"),
    ("livecodebench", "Coding"),
)


def judgebench_category(source: str) -> str:
    """The category of a pair's ``source`` (a source of none of them stands for itself)."""
    return next((name for prefix, name in CATEGORIES if source.startswith(prefix)), source)


def parse_judgebench(path: PathLike, *, strict: bool = False) -> PairLoad:
    """Pairs from JudgeBench records: the correct response chosen, the subset its category;
    ``meta`` keeps ``pair_id``, ``source`` and ``label``."""

    def build(record: dict[str, Any], line: int) -> list[SourcedPair]:
        question = _string(record, "question", "prompt")
        a, b = _string(record, "response_A", "response"), _string(record, "response_B", "response")
        label = record.get("label")
        if label not in ("A>B", "B>A"):
            raise RecordProblem('label neither "A>B" nor "B>A"', "label", _shown(label))
        good, bad = (a, b) if label == "A>B" else (b, a)
        _distinct(good, bad, "response_B" if label == "A>B" else "response_A")
        source = _string(record, "source", "source")
        meta = {"pair_id": record.get("pair_id"), "source": source, "label": label, "line": line}
        return [PairSource.text_pair(question, good, bad, judgebench_category(source), meta)]

    return _parse(path, build, strict=strict)
