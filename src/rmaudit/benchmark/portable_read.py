"""A portable benchmark file (:mod:`.portable`) read and checked before anything is stored:
every problem is one line naming the file's line and the field."""

from __future__ import annotations

import gzip
import io
import math
from pathlib import Path
from typing import IO, Any

from rmaudit.components.data_text import parse_json, text_lines
from rmaudit.errors import BadInput

from .header import check_header

FORMAT = "rmaudit-benchmark"
FORMAT_VERSION = 1


def open_file(path: Path, mode: str, *, gzipped: bool | None = None) -> IO[str]:
    """A benchmark file opened as text (gzip-compressed where its name ends in ``.gz``)."""
    if path.suffix == ".gz" if gzipped is None else gzipped:
        return io.TextIOWrapper(gzip.GzipFile(path, mode + "b"), encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def short(text: str, limit: int = 60) -> str:
    """A text from the file as an error shows it."""
    return text if len(text) <= limit else text[:limit] + "…"


#: how an expected Python type reads to someone editing a JSON file
JSON_KINDS = {
    dict: "a JSON object",
    list: "a JSON array",
    str: "a string",
    int: "a whole number",
    (int, float): "a number",
    bool: "true or false",
}


def _require(record: dict, key: str, kind: type | tuple[type, ...], where: str, field: str) -> Any:
    if key not in record:
        raise BadInput("missing field", file=where, field=f"{field}{key}")
    value = record[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise BadInput(
            f"expected {JSON_KINDS.get(kind, kind)}", file=where, field=f"{field}{key}", value=value
        )
    return value


def _optional(record: dict, key: str, kind: type | tuple[type, ...], where: str, field: str) -> Any:
    """An optional field: absent or null, else of ``kind`` (a number also finite)."""
    if record.get(key) is None:
        return None
    value = _require(record, key, kind, where, field)
    if isinstance(value, float) and not math.isfinite(value):
        raise BadInput("expected a finite number", file=where, field=f"{field}{key}", value=value)
    return value


def read_benchmark(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Parse and check a benchmark file; every problem names the line and the field."""
    header = None
    records, lines = [], []
    for number, line in text_lines(path):
        where = f"{path}:{number}"
        if not line.strip():
            continue
        record = parse_json(line, where)
        if not isinstance(record, dict):
            raise BadInput("expected a JSON object", file=where)
        if header is None:
            if record.get("format") != FORMAT:
                raise BadInput(
                    f"not an rmaudit benchmark file (expected format {FORMAT!r})",
                    file=where,
                    field="format",
                    value=record.get("format"),
                ) from None
            if record.get("format_version") != FORMAT_VERSION:
                raise BadInput(
                    f"unsupported format version (this rmaudit reads {FORMAT_VERSION})",
                    file=where,
                    field="format_version",
                    value=record.get("format_version"),
                )
            header = check_header(_require(record, "benchmark", dict, where, ""), where)
            continue
        records.append(check_prompt_record(record, where, budgeted="design" in header))
        lines.append(number)
    _refuse_repeated_prompts(path, records, lines)
    if header is None:
        raise BadInput("empty benchmark file", file=str(path))
    if not records:
        raise BadInput("benchmark file has no prompts", file=str(path))
    return header, records


def _refuse_repeated_prompts(path: Path, records: list[dict[str, Any]], lines: list[int]) -> None:
    """The same prompt twice would be counted twice by every metric: name both lines."""
    first: dict[str, int] = {}
    for record, line in zip(records, lines, strict=True):
        text = record["prompt"]["text"]
        if text in first:
            raise BadInput(
                f"the same prompt as line {first[text]}; a prompt appears once, with all its "
                "responses",
                file=f"{path}:{line}",
                field="prompt.text",
                value=short(text),
            )
        first[text] = line


def check_prompt_record(record: dict, where: str, *, budgeted: bool = False) -> dict:
    prompt = _require(record, "prompt", dict, where, "")
    text = _require(prompt, "text", str, where, "prompt.")
    _optional(prompt, "meta", dict, where, "prompt.")
    if not text.strip():
        raise BadInput("empty prompt text", file=where, field="prompt.text", value=text)
    responses = _require(record, "responses", list, where, "")
    if len(responses) < 2:
        raise BadInput(
            "a prompt needs at least two responses",
            file=where,
            field="responses",
            value=len(responses),
        )
    indices = []
    for i, response in enumerate(responses):
        field = f"responses[{i}]."
        if not isinstance(response, dict):
            raise BadInput("expected a JSON object", file=where, field=field.rstrip("."))
        _require(response, "text", str, where, field)
        indices.append(_require(response, "sample_index", int, where, field))
        _optional(response, "meta", dict, where, field)
        if budgeted:
            pi = _require(response, "inclusion_probability", (int, float), where, field)
            if not (math.isfinite(pi) and 0 < pi <= 1):
                raise BadInput(
                    "expected a probability in (0, 1]",
                    file=where,
                    field=field + "inclusion_probability",
                    value=pi,
                )
            if response.get("label") is None:
                continue  # the design left it unlabelled
        label = _require(response, "label", dict, where, field)
        score = _require(label, "score", (int, float), where, field + "label.")
        if not math.isfinite(score):
            raise BadInput(
                "expected a finite oracle score",
                file=where,
                field=field + "label.score",
                value=score,
            )
        samples = _optional(label, "samples", list, where, field + "label.") or []
        for j, sample in enumerate(samples):
            _optional(
                {f"samples[{j}]": sample}, f"samples[{j}]", (int, float), where, field + "label."
            )
        _optional(label, "cost_usd", (int, float), where, field + "label.")
        for key in ("prompt_tokens", "completion_tokens"):
            _optional(label, key, int, where, field + "label.")
    if sorted(indices) != list(range(len(responses))):
        raise BadInput(
            f"sample_index values must be 0..{len(responses) - 1}, each once",
            file=where,
            field="responses[].sample_index",
            value=sorted(indices)[:10],
        )
    return record
