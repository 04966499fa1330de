"""Labelled benchmarks assembled from files made elsewhere, in two layouts
(docs/bring-your-own-data.md):

* **AlpacaEval**: several ``model_outputs.json`` files (records ``instruction``, ``output``,
  ``generator``), each giving one response per prompt, and ``annotations.json`` files (records
  ``instruction``, ``output_2``, ``generator_2``, ``preference`` ∈ [1, 2]) whose preference is
  the oracle score.  reward-bench's best-of-n files (``tulu-2-dpo-13b.K.json.gz``) are this
  layout: file K holds sample K of every prompt.
* **generic JSON Lines** (schema: docs/benchmark-layout.schema.json): one record per prompt,
  ``{"prompt": str, "responses": [str, ...], "oracle": [number | null, ...]}`` with optional
  ``"id"``, ``"response_ids"`` and ``"scores": {"<RM>": [number, ...]}``.

Each response is its own response — keyed by (prompt, sample index), never by its text — so
two samples of one prompt with the same text keep their own labels.  Responses without a
label are counted and left out.  The benchmark's keys hash the files' contents, so it never
shares keys with a benchmark rmaudit built or one made from other files.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rmaudit.benchmark.keyed_files import text_key
from rmaudit.benchmark.tabular import read_rows
from rmaudit.components import BenchmarkContent, Source
from rmaudit.components.keys import content_key
from rmaudit.components.options import file_digest, file_source
from rmaudit.errors import BadInput


def natural_order(paths: Sequence[Path]) -> list[Path]:
    """Paths sorted with their numbers as numbers (``x.2`` before ``x.10``)."""
    return sorted(
        paths,
        key=lambda p: [
            int(part) if part.isdigit() else part for part in re.split(r"(\d+)", p.name)
        ],
    )


def expand(root: Path, patterns: Sequence[str], field_name: str) -> list[Path]:
    """The files of ``patterns`` (globs relative to ``root``), each pattern in natural order."""
    found: list[Path] = []
    for pattern in patterns:
        matched = natural_order([p for p in root.glob(pattern) if p.is_file()])
        if not matched:
            raise BadInput(
                f"no file matches {pattern!r} in {root}", field=field_name, value=pattern
            )
        found += [p for p in matched if p not in found]
    return found


@dataclass
class _Prompt:
    text: str
    responses: list[dict[str, Any]] = field(default_factory=list)


def _string(row: dict[str, Any], name: str, where: str) -> str:
    value = row.get(name)
    if not isinstance(value, str):
        raise BadInput(
            "expected a string", file=where, field=name, value=value if name in row else ...
        )
    return value


def _score(raw: Any, where: str, name: str) -> float | None:
    """A label: a finite number, or None (unlabelled)."""
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        raise BadInput("expected a finite number or null", file=where, field=name, value=raw)
    return float(raw)


def _content(
    title: str,
    prompts: dict[str, _Prompt],
    policy_key: str,
    oracle_key: str,
    sources: list[Source],
    oracle_description: str,
    notes: list[str],
    policy: dict[str, Any],
    oracle: dict[str, Any],
) -> BenchmarkContent:
    """Keep the labelled responses (numbered 0.. within their prompt) and the prompts with any."""
    records, unlabelled, empty = [], 0, 0
    for prompt in prompts.values():
        kept = [r for r in prompt.responses if r["label"]["score"] is not None]
        unlabelled += len(prompt.responses) - len(kept)
        if not kept:
            empty += 1
            continue
        for i, response in enumerate(kept):
            response["sample_index"] = i
        records.append({"prompt": {"text": prompt.text, "meta": {}}, "responses": kept})
    if not records:
        raise BadInput("no labelled response in the files", file=sources[0].location)
    if unlabelled:
        notes.insert(0, f"{unlabelled:,} unlabelled responses left out")
    if empty:
        notes.insert(1, f"{empty} prompts without a labelled response left out")
    header = {
        "title": title,
        "policy_key": policy_key,
        "oracle_key": oracle_key,
        "simulated": False,
        "components": {
            policy_key: {"kind": "reference_policy", **policy, "simulated": False},
            oracle_key: {"kind": "oracle", **oracle, "simulated": False},
        },
    }
    return BenchmarkContent(header, records, tuple(notes), tuple(sources), oracle_description)


def alpacaeval(
    outputs: Sequence[Path], annotations: Sequence[Path], *, title: str
) -> BenchmarkContent:
    """The AlpacaEval layout: file k of ``outputs`` gives sample k of each prompt; an
    annotation labels the output with the same (instruction, generator, text)."""
    prompts = _alpacaeval_outputs(outputs)
    labels: dict[tuple[str, str, str], tuple[float, str]] = {}
    annotators: set[str] = set()
    for path in annotations:
        for where, row in read_rows(path):
            key = (
                text_key(_string(row, "instruction", where)),
                str(row.get("generator_2") or ""),
                text_key(_string(row, "output_2", where)),
            )
            score = _score(row.get("preference"), where, "preference")
            if score is None:
                continue
            annotators.add(str(row.get("annotator") or "unnamed annotator"))
            if key in labels and labels[key][0] != score:
                raise BadInput(
                    f"two different preferences for the same (instruction, "
                    f"generator_2, output_2) ({labels[key][0]!r} at {labels[key][1]})",
                    file=where,
                    field="preference",
                    value=score,
                )
            labels.setdefault(key, (score, where))
    notes = _label_outputs(prompts, labels)
    digests = [file_digest(p) for p in outputs]
    label_digests = [file_digest(p) for p in annotations]
    policy_key = content_key("alpacaeval-outputs", digests)
    oracle_key = content_key("alpacaeval-annotations", label_digests)
    described = "AlpacaEval " + ", ".join(sorted(annotators)) if annotators else "AlpacaEval"
    sources = [
        *(file_source("prompts and responses", p) for p in outputs),
        *(file_source("labels", p, described) for p in annotations),
    ]
    return _content(
        title,
        prompts,
        policy_key,
        oracle_key,
        sources,
        described,
        notes,
        {
            "name": "alpacaeval-outputs",
            "version": 1,
            "options": {"files": [p.name for p in outputs], "sha256": digests},
        },
        {
            "name": "alpacaeval-annotations",
            "version": 1,
            "options": {"files": [p.name for p in annotations], "sha256": label_digests},
        },
    )


def _alpacaeval_outputs(outputs: Sequence[Path]) -> dict[str, _Prompt]:
    """Each prompt's outputs, file k giving sample k, unlabelled and keyed for the annotations
    by (instruction, generator, text)."""
    prompts: dict[str, _Prompt] = {}
    for k, path in enumerate(outputs):
        for where, row in read_rows(path):
            text = _string(row, "instruction", where)
            output = _string(row, "output", where)
            generator = str(row.get("generator") or path.name)
            prompt = prompts.setdefault(text_key(text), _Prompt(text))
            prompt.responses.append(
                {
                    "text": output,
                    "meta": {"sample": k, "generator": generator, "file": path.name},
                    "label": {"score": None},
                    "_where": where,
                    "_key": (text_key(text), generator, text_key(output)),
                }
            )
    return prompts


def _label_outputs(
    prompts: dict[str, _Prompt], labels: dict[tuple[str, str, str], tuple[float, str]]
) -> list[str]:
    """Each output labelled by the annotation with its key; a note when some annotations match
    no output."""
    matched = set()
    for prompt in prompts.values():
        for response in prompt.responses:
            key = response.pop("_key")
            response.pop("_where")
            if key in labels:
                response["label"]["score"] = labels[key][0]
                matched.add(key)
    notes = []
    if len(matched) < len(labels):
        first = next(where for key, (_, where) in labels.items() if key not in matched)
        notes.append(f"{len(labels) - len(matched)} annotations match no output (first: {first})")
    return notes


def generic(
    path: Path, *, title: str
) -> tuple[BenchmarkContent, dict[str, dict[tuple[str, str], float]]]:
    """The generic JSON Lines layout; also each RM's scores in it, by (prompt, response) text
    key, for the ``scores-file`` reward model (match = 'text')."""
    prompts: dict[str, _Prompt] = {}
    rm_scores: dict[str, dict[tuple[str, str], float]] = {}
    for where, row in read_rows(path, "jsonl"):
        text = _string(row, "prompt", where)
        responses, oracle, ids = _generic_lists(row, where)
        if text_key(text) in prompts:
            raise BadInput(
                "the same prompt again (one record per prompt)",
                file=where,
                field="prompt",
                value=text[:80],
            )
        prompt = prompts[text_key(text)] = _Prompt(text)
        for i, response in enumerate(responses):
            meta = {
                "sample": i,
                **({"id": str(ids[i])} if ids is not None else {}),
                **({"prompt_id": str(row["id"])} if "id" in row else {}),
            }
            prompt.responses.append(
                {
                    "text": response,
                    "meta": meta,
                    "label": {"score": _score(oracle[i], where, f"oracle[{i}]")},
                }
            )
        for rm, values in (row.get("scores") or {}).items():
            _add_rm_scores(rm_scores.setdefault(rm, {}), rm, values, text, responses, where)
    digest = file_digest(path)
    content = _content(
        title,
        prompts,
        content_key("benchmark-jsonl-responses", digest),
        content_key("benchmark-jsonl-oracle", digest),
        [
            file_source("prompts and responses", path),
            file_source("labels", path, f"oracle scores in {path.name}"),
        ],
        f"oracle scores in {path.name}",
        [],
        {"name": "benchmark-jsonl", "version": 1, "options": {"file": path.name, "sha256": digest}},
        {"name": "benchmark-jsonl", "version": 1, "options": {"file": path.name, "sha256": digest}},
    )
    return content, rm_scores


def _generic_lists(
    row: dict[str, Any], where: str
) -> tuple[list[str], list[Any], list[Any] | None]:
    """A generic record's responses, their oracle scores and their ids (or None), checked to
    be lists of one entry per response."""
    responses = row.get("responses")
    oracle = row.get("oracle")
    if not isinstance(responses, list) or not all(isinstance(r, str) for r in responses):
        raise BadInput(
            "expected a list of strings",
            file=where,
            field="responses",
            value=responses if "responses" in row else ...,
        )
    if not isinstance(oracle, list) or len(oracle) != len(responses):
        raise BadInput(
            f"expected a list of {len(responses)} oracle scores (one per response)",
            file=where,
            field="oracle",
            value=oracle if "oracle" in row else ...,
        )
    ids = row.get("response_ids")
    if ids is not None and (not isinstance(ids, list) or len(ids) != len(responses)):
        raise BadInput(
            f"expected a list of {len(responses)} ids",
            file=where,
            field="response_ids",
            value=ids,
        )
    return responses, oracle, ids


def _add_rm_scores(
    table: dict[tuple[str, str], float],
    rm: str,
    values: Any,
    text: str,
    responses: list[str],
    where: str,
) -> None:
    """One record's scores by ``rm`` added to its table, keyed by (prompt, response) text."""
    if not isinstance(values, list) or len(values) != len(responses):
        raise BadInput(
            f"expected a list of {len(responses)} scores",
            file=where,
            field=f"scores.{rm}",
            value=values,
        )
    for i, value in enumerate(values):
        score = _score(value, where, f"scores.{rm}[{i}]")
        key = (text_key(text), text_key(responses[i]))
        if score is not None:
            if key in table and table[key] != score:
                raise BadInput(
                    "the same response text under this prompt has two different scores",
                    file=where,
                    field=f"scores.{rm}[{i}]",
                    value=score,
                )
            table[key] = score
