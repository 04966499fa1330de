"""Parsers for preference-pair files: generic (field mapping), Anthropic HH, RM-Bench, LLMBar.

Every parser reads one file and returns a :class:`PairLoad`: the pairs, the records it
rejected (each with its file:line and a reason), and how many records the file held.  Nothing is
dropped silently: ``result.parsed + len(result.rejected) == result.records``.  With
``strict=True`` the first bad record raises :class:`~rmaudit.errors.BadInput` naming
``file:line``, the field and the value instead.

Files are JSON Lines (one record per line; blank lines are not records), a JSON array of
records, or CSV with a header row; any of them may be gzip-compressed (``.gz``); or Parquet
(``.parquet``, a record per row, numbered from 1; needs pyarrow, the ``parquet`` extra: the
format the Hugging Face hub stores datasets in).  The format follows the name (``.csv``,
``.jsonl``, ``.parquet``; otherwise a file whose first character is ``[`` is a JSON array,
else JSON Lines).  A malformed JSON line or CSV row is a rejection with its line
number, as is a record equal to an earlier one (its pairs would count twice); a malformed
JSON *array* cannot be resynchronised, so it raises BadInput at the line of the error even
when not strict.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from rmaudit.benchmark.pairs.record_files import Malformed, file_records
from rmaudit.components.kinds import PairSource
from rmaudit.components.records import PairLoad, RejectedRecord, SourcedPair
from rmaudit.errors import BadInput

PathLike = str | Path
T = TypeVar("T")


class RecordProblem(ValueError):
    """Why one record gives no pair; parsers turn it into a :class:`RejectedRecord`."""

    def __init__(self, reason: str, field: str | None = None, value: Any = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.field = field
        self.value = value


def _parse(
    path: PathLike, build: Callable[[dict[str, Any], int], list[SourcedPair]], *, strict: bool
) -> PairLoad:
    """Run ``build`` on every record; collect its pairs or the reason it gave none."""
    return PairLoad(*read_records(path, build, strict=strict))


def read_records(
    path: PathLike, build: Callable[[dict[str, Any], int], list[T]], *, strict: bool
) -> tuple[list[T], list[RejectedRecord], int]:
    """Run ``build`` on every record: what the records gave, the records that gave nothing
    (with why; ``strict``: the first is BadInput) and how many records the file held."""
    path = Path(path)
    pairs: list[T] = []
    rejected: list[RejectedRecord] = []
    records = 0
    seen: dict[str, int] = {}  # each record's canonical JSON → the number of its first copy
    for line, record in file_records(path):
        records += 1
        try:
            if isinstance(record, Malformed):
                raise RecordProblem("malformed record", value=record.message)
            if not isinstance(record, dict):
                raise RecordProblem("not an object", value=type(record).__name__)
            first = seen.setdefault(json.dumps(record, sort_keys=True, default=str), records)
            if first != records:  # its pairs would count twice
                raise RecordProblem("duplicate record", value=f"the same as record {first}")
            pairs.extend(build(record, line))
        except RecordProblem as problem:
            if strict:
                value = ... if problem.value is None else problem.value
                raise BadInput(
                    problem.reason, file=f"{path}:{line}", field=problem.field, value=value
                ) from None
            where = f"{path}:{line}"
            rejected.append(RejectedRecord(where, problem.reason, problem.field, problem.value))
    return pairs, rejected, records


# --------------------------------------------------------------------------------------------
# Field checks


def _shown(value: Any) -> Any:
    """A value short enough for a one-line message."""
    return value[:60] + "…" if isinstance(value, str) and len(value) > 60 else value


def _string(record: dict[str, Any], name: str, what: str) -> str:
    """A non-blank string field; ``what`` names it in the reason ("empty response")."""
    if record.get(name) is None:
        raise RecordProblem("missing field", name)
    return _text(record[name], name, what)


def _text(value: Any, name: str, what: str) -> str:
    if not isinstance(value, str):
        raise RecordProblem("not a string", name, _shown(value))
    if not value.strip():
        raise RecordProblem(f"empty {what}", name, value)
    return value


def _distinct(chosen: str, rejected: str, field: str = "rejected") -> None:
    if chosen == rejected:
        raise RecordProblem("identical responses", field, _shown(rejected))


# --------------------------------------------------------------------------------------------
# Generic


def parse_pairs(
    path: PathLike,
    *,
    prompt: str = "prompt",
    chosen: str = "chosen",
    rejected: str = "rejected",
    subset: str | None = None,
    strict: bool = False,
) -> PairLoad:
    """Pairs from a JSON Lines, JSON or CSV file, one record per pair, with a field mapping.

    ``prompt``, ``chosen`` and ``rejected`` name the fields holding the texts; ``subset``, if
    given, names the field holding the subset label (then required in every record).  The
    other fields of a record are kept in the pair's ``meta``.  A record is rejected for a
    missing field, a non-string or blank text, or identical chosen and rejected responses.
    """
    mapped = {prompt, chosen, rejected} | ({subset} if subset else set())

    def build(record: dict[str, Any], line: int) -> list[SourcedPair]:
        text = _string(record, prompt, "prompt")
        good = _string(record, chosen, "response")
        bad = _string(record, rejected, "response")
        _distinct(good, bad, rejected)
        label = _string(record, subset, "subset") if subset else None
        meta = {k: v for k, v in record.items() if k not in mapped}
        return [PairSource.text_pair(text, good, bad, label, {**meta, "line": line})]

    return _parse(path, build, strict=strict)


# --------------------------------------------------------------------------------------------
# Anthropic HH-RLHF

_TURN = re.compile(r"(?:^|\n\n)(Human|Assistant): ?")


def _turns(dialogue: str, field: str) -> list[tuple[str, int, str]]:
    """(role, offset of its header, text) of each turn of an HH dialogue."""
    headers = list(_TURN.finditer(dialogue))
    if not headers or dialogue[: headers[0].start()].strip() or headers[0].group(1) != "Human":
        raise RecordProblem("not an HH dialogue", field, _shown(dialogue))
    ends = [h.start() for h in headers[1:]] + [len(dialogue)]
    return [
        (h.group(1), h.start(), dialogue[h.end() : end])
        for h, end in zip(headers, ends, strict=True)
    ]


def split_hh_dialogues(chosen: str, rejected: str) -> tuple[str, str, str, dict[str, Any]]:
    """Split two HH-RLHF dialogues into (prompt, chosen response, rejected response, meta).

    The dialogues alternate ``\\n\\nHuman:`` and ``\\n\\nAssistant:`` turns and share a prefix.
    Following the RETA paper (arXiv 2504.14838, Sec. 4, "For extraction of the prompt"), the prompt
    is the shared context before the response being compared — the dialogue text up to the first
    turn where the two differ, which must be an Assistant turn right after a Human one — and the
    responses are those two turns.  Turns after them ("excessive rounds", e.g. a response that
    itself contains a stray ``Assistant:`` header) are removed; ``meta["excess_turns"]`` says how
    many per side, ``meta["turns"]`` how many turns the prompt has.  The prompt keeps the HH text
    format (its ``\\n\\nHuman:`` / ``\\n\\nAssistant:`` headers), the responses are stripped of
    surrounding whitespace.

    Raises :class:`RecordProblem` for identical dialogues, dialogues that differ in a Human
    turn (different prompts) or have no diverging Assistant turn, and empty responses.

    >>> prompt, chosen, rejected, meta = split_hh_dialogues(
    ...     "\\n\\nHuman: Hi\\n\\nAssistant: Hello!",
    ...     "\\n\\nHuman: Hi\\n\\nAssistant: Go away.\\n\\nAssistant: Bye")
    >>> prompt, chosen, rejected
    ('\\n\\nHuman: Hi', 'Hello!', 'Go away.')
    >>> meta
    {'turns': 1, 'excess_turns': {'chosen': 0, 'rejected': 1}}
    """
    if chosen == rejected:
        raise RecordProblem("identical responses", "rejected", _shown(rejected))
    good, bad = _turns(chosen, "chosen"), _turns(rejected, "rejected")
    k = 0
    while k < min(len(good), len(bad)) and good[k][0] == bad[k][0] and good[k][2] == bad[k][2]:
        k += 1
    if k == min(len(good), len(bad)) or good[k][0] != bad[k][0]:
        raise RecordProblem("no diverging assistant turn", "rejected")
    if good[k][0] == "Human":
        raise RecordProblem(
            "dialogues differ in a human turn", "rejected", _shown(bad[k][2].strip())
        )
    if good[k - 1][0] != "Human":
        raise RecordProblem("no diverging assistant turn", "rejected")
    responses = []
    for field, turns in (("chosen", good), ("rejected", bad)):
        response = turns[k][2].strip()
        if not response:
            raise RecordProblem("empty response", field, turns[k][2])
        responses.append(response)
    meta = {"turns": k, "excess_turns": {"chosen": len(good) - k - 1, "rejected": len(bad) - k - 1}}
    return chosen[: good[k][1]], responses[0], responses[1], meta


def parse_hh(path: PathLike, *, subset: str | None = None, strict: bool = False) -> PairLoad:
    """Pairs from Anthropic HH-RLHF records ``{"chosen": dialogue, "rejected": dialogue}``.

    Each record's prompt and responses come from :func:`split_hh_dialogues`; ``subset`` labels
    every pair (e.g. ``"helpful-base"``).
    """

    def build(record: dict[str, Any], line: int) -> list[SourcedPair]:
        prompt, good, bad, meta = split_hh_dialogues(
            _string(record, "chosen", "dialogue"), _string(record, "rejected", "dialogue")
        )
        return [PairSource.text_pair(prompt, good, bad, subset, {**meta, "line": line})]

    return _parse(path, build, strict=strict)


# --------------------------------------------------------------------------------------------
# RM-Bench

RM_BENCH_STYLES = ("concise", "detailed", "detailed markdown")


def parse_rm_bench(path: PathLike, *, strict: bool = False) -> PairLoad:
    """Pairs from RM-Bench records: a prompt with 3 chosen and 3 rejected style variants.

    Each record gives the 9 pairs (chosen[i], rejected[j]), with ``meta["chosen_style"] = i``
    and ``meta["rejected_style"] = j`` (0 = concise, 1 = detailed plain text, 2 = detailed
    markdown: :data:`RM_BENCH_STYLES`) and ``meta["id"]``; the subset is the record's
    ``subset`` field.  A record is rejected whole if a list is not 3 non-blank strings or a
    chosen response equals a rejected one.
    """
    n_styles = len(RM_BENCH_STYLES)

    def variants(record: dict[str, Any], name: str) -> list[str]:
        values = record.get(name)
        if values is None:
            raise RecordProblem("missing field", name)
        if not isinstance(values, list) or len(values) != n_styles:
            raise RecordProblem(f"not a list of {n_styles} responses", name, _shown(values))
        return [_text(value, f"{name}[{i}]", "response") for i, value in enumerate(values)]

    def build(record: dict[str, Any], line: int) -> list[SourcedPair]:
        prompt = _string(record, "prompt", "prompt")
        chosen, rejected = variants(record, "chosen"), variants(record, "rejected")
        subset = _string(record, "subset", "subset") if "subset" in record else None
        for good in chosen:
            for j, bad in enumerate(rejected):
                _distinct(good, bad, f"rejected[{j}]")
        return [
            PairSource.text_pair(
                prompt,
                good,
                bad,
                subset,
                {"id": record.get("id"), "chosen_style": i, "rejected_style": j, "line": line},
            )
            for i, good in enumerate(chosen)
            for j, bad in enumerate(rejected)
        ]

    return _parse(path, build, strict=strict)


# --------------------------------------------------------------------------------------------
# LLMBar


def parse_llmbar(path: PathLike, *, subset: str | None = None, strict: bool = False) -> PairLoad:
    """Pairs from LLMBar records ``{input, output_1, output_2, label}``.

    ``label`` (the integer 1 or 2) names the better output, which becomes ``chosen``;
    ``meta["label"]`` keeps it so the original order can be recovered.  ``subset`` labels
    every pair (e.g. ``"llmbar-natural"``).
    """

    def build(record: dict[str, Any], line: int) -> list[SourcedPair]:
        prompt = _string(record, "input", "prompt")
        outputs = (_string(record, "output_1", "response"), _string(record, "output_2", "response"))
        if "label" not in record:
            raise RecordProblem("missing field", "label")
        label = record["label"]
        if isinstance(label, bool) or label not in (1, 2) or not isinstance(label, int):
            raise RecordProblem("label outside {1, 2}", "label", _shown(label))
        good, bad = outputs[label - 1], outputs[2 - label]
        _distinct(good, bad, f"output_{3 - label}")
        return [PairSource.text_pair(prompt, good, bad, subset, {"label": label, "line": line})]

    return _parse(path, build, strict=strict)


#: Parser of each format, by the name a recipe would use.
PARSERS: dict[str, Callable[..., PairLoad]] = {
    "pairs": parse_pairs,
    "hh": parse_hh,
    "rm-bench": parse_rm_bench,
    "llmbar": parse_llmbar,
}
