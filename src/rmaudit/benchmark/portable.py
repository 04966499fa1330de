"""Portable benchmark files: prompts + responses + oracle labels, so one team pays for the
labels and everyone else audits their RMs on them for free (RETA paper Sec. 3.3, Table 1).

The file is JSON Lines (gzip-compressed when the name ends in ``.gz``): a header line
``{"format": "rmaudit-benchmark", "format_version": 1, "benchmark": {...}}`` then one line
per prompt ``{"prompt": {...}, "responses": [{"id", "sample_index", "text", "meta",
"label": {"score", "samples", ...}}, ...]}``.  A budgeted benchmark (docs/budget.md) has
``benchmark.design`` in the header, every response, ``"label": null`` on those the design left
unlabelled, and each response's ``"inclusion_probability"``, so its estimates stay unbiased
wherever it is imported.  Import checks every line first and then writes everything in one
transaction: a bad file changes nothing; a file already stored (an export imported back into
its own DB) adds nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rmaudit.components.keys import content_key, prompt_id, response_id
from rmaudit.errors import BadInput
from rmaudit.store import Store, utc_now
from rmaudit.store.item_records import (
    Inclusion,
    LabelledResponse,
    StoredLabel,
    StoredPrompt,
    StoredResponse,
)
from rmaudit.store.records import BenchmarkRow, ComponentRow, LabelDesignRecord

from .portable_read import FORMAT, FORMAT_VERSION, open_file, short


def export_benchmark(store: Store, benchmark_id: str, path: Path) -> int:
    """Write the benchmark to ``path``; return the number of prompts written."""
    bench = store.items.benchmark(benchmark_id)
    if bench is None:
        raise BadInput("no such benchmark in the DB", field="benchmark", value=benchmark_id)
    components = store.items.components([bench.policy_key, bench.oracle_key])
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "benchmark": {
            "id": bench.id,
            "title": bench.title,
            "selection_key": bench.selection_key,
            "policy_key": bench.policy_key,
            "per_prompt": bench.per_prompt,
            "oracle_key": bench.oracle_key,
        }
        | ({"design": bench.design.as_json()} if bench.design is not None else {})
        | {
            "simulated": bench.simulated,
            "components": {
                c.key: {
                    "kind": c.kind,
                    "name": c.name,
                    "version": c.version,
                    "options": c.options,
                    "simulated": c.simulated,
                }
                for c in components
            },
        },
    }
    prompts = store.read.selection_prompts(bench.selection_key)
    tmp = path.with_name(path.name + ".partial")
    with open_file(tmp, "w", gzipped=path.suffix == ".gz") as out:
        out.write(json.dumps(header, ensure_ascii=False) + "\n")
        for _, pid, text, meta in prompts:
            labelled = store.read.labelled_responses(bench, pid)
            record = {
                "prompt": {"id": pid, "text": text, "meta": meta},
                "responses": [_response_record(row) for row in labelled],
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    tmp.replace(path)  # readers never see a half-written export
    return len(prompts)


def _response_record(row: LabelledResponse) -> dict[str, Any]:
    label = None
    if row.score is not None:
        label = {
            "score": row.score,
            "samples": list(row.samples),
            "cost_usd": row.cost_usd,
            "prompt_tokens": row.prompt_tokens,
            "completion_tokens": row.completion_tokens,
        }
    record: dict[str, Any] = {
        "id": row.id,
        "sample_index": row.sample_index,
        "text": row.text,
        "meta": row.meta,
    }
    record["label"] = label
    if row.inclusion_probability is not None:
        record["inclusion_probability"] = row.inclusion_probability
    return record


def imported_keys(
    header: dict[str, Any], records: list[dict[str, Any]], store: Store | None = None
) -> tuple[str, str, list[str], int]:
    """(benchmark id, selection key, prompt ids, responses per prompt) of a checked benchmark
    file's contents, as :func:`store_benchmark` stores them.  A file exported from ``store``
    itself keeps the keys it was exported under (its header's id and selection), so importing
    it back adds nothing."""
    prompt_ids = [prompt_id(r["prompt"]["text"]) for r in records]
    per_prompt = max(len(r["responses"]) for r in records)
    if store is not None and _exported_from(store, header, prompt_ids, per_prompt):
        return header["id"], header["selection_key"], prompt_ids, per_prompt
    selection_key = content_key("imported-selection", prompt_ids)
    parts = ["benchmark", selection_key, header["policy_key"], per_prompt, header["oracle_key"]]
    if header.get("design") is not None:
        parts.append(header["design"])
    return content_key(*parts), selection_key, prompt_ids, per_prompt


def _exported_from(store: Store, header: dict, prompt_ids: list[str], per_prompt: int) -> bool:
    stored = store.items.benchmark(header["id"]) if isinstance(header.get("id"), str) else None
    return (
        stored is not None
        and stored.selection_key == header.get("selection_key")
        and stored.policy_key == header["policy_key"]
        and stored.oracle_key == header["oracle_key"]
        and stored.per_prompt == per_prompt
        and store.items.selection(stored.selection_key) == prompt_ids
    )


def header_design(header: dict[str, Any]) -> LabelDesignRecord | None:
    """The label design of a checked file's header (None: every response labelled)."""
    design = header.get("design")
    return None if design is None else LabelDesignRecord.from_json(design)


def refuse_conflicts(
    store: Store,
    header: dict[str, Any],
    records: list[dict[str, Any]],
    *,
    file: str,
    response_ids: Sequence[str] | None = None,
) -> None:
    """``BadInput`` naming the first response of the file stored under the same key with
    another text, or labelled by the same oracle with another score: storing would keep the
    stored rows (insert or ignore) and silently audit them instead of the file's.
    ``response_ids``: the records' response ids in order, where the caller has them."""
    policy_key, oracle_key = header["policy_key"], header["oracle_key"]
    if response_ids is None:
        prompt_ids = imported_keys(header, records, store)[2]
        response_ids = [
            response_id(policy_key, pid, r["sample_index"])
            for pid, record in zip(prompt_ids, records, strict=True)
            for r in record["responses"]
        ]
    positions = (
        (i, j, r) for i, record in enumerate(records) for j, r in enumerate(record["responses"])
    )
    located = dict(zip(response_ids, positions, strict=True))
    stored_texts = {row.id: row.text for row in store.items.responses(list(located))}
    stored_scores = store.items.label_scores(oracle_key, list(located))
    for rid, (i, j, response) in located.items():
        where = f"records[{i}].responses[{j}]"
        if rid in stored_texts and stored_texts[rid] != response["text"]:
            raise BadInput(
                "the DB holds another text under this response's key (same "
                "policy_key, prompt and sample_index); give the file a new "
                "policy_key, or use another DB",
                file=file,
                field=f"{where}.text",
                value=short(response["text"]),
            )
        if response.get("label") is None:
            continue
        score = float(response["label"]["score"])
        if rid in stored_scores and stored_scores[rid] != score:
            raise BadInput(
                f"the DB holds another label for this response from the same oracle "
                f"({stored_scores[rid]!r}); give the file a new oracle_key, or use "
                f"another DB",
                file=file,
                field=f"{where}.label.score",
                value=score,
            )


def store_benchmark(
    store: Store, header: dict[str, Any], records: list[dict[str, Any]], *, origin: str
) -> str:
    """Write a checked benchmark (from :func:`~.portable_read.read_benchmark`) not stored yet in one
    transaction; call :func:`refuse_conflicts` first."""
    policy_key, oracle_key = header["policy_key"], header["oracle_key"]
    benchmark_id, selection_key, prompt_ids, per_prompt = imported_keys(header, records, store)
    items = store.items
    with store.transaction():
        for key, c in (header.get("components") or {}).items():
            component = (c.get("kind"), c.get("name"), c.get("version"), c.get("options"))
            items.add_component(ComponentRow(key, *component, bool(c.get("simulated"))))
        items.add_benchmark(
            BenchmarkRow(
                id=benchmark_id,
                title=header["title"],
                selection_key=selection_key,
                policy_key=policy_key,
                per_prompt=per_prompt,
                oracle_key=oracle_key,
                simulated=bool(header.get("simulated")),
                origin=origin,
                created_at=utc_now(),
                design=header_design(header),
            )
        )
        items.add_prompts(
            StoredPrompt(pid, record["prompt"]["text"], record["prompt"].get("meta") or {})
            for pid, record in zip(prompt_ids, records, strict=True)
        )
        items.add_selection(selection_key, prompt_ids)
        responses, labels, inclusion = [], [], {}
        for pid, record in zip(prompt_ids, records, strict=True):
            for r in record["responses"]:
                rid = response_id(policy_key, pid, r["sample_index"])
                index, text, meta = r["sample_index"], r["text"], r.get("meta") or {}
                responses.append(StoredResponse(rid, pid, policy_key, index, text, meta))
                if r.get("inclusion_probability") is not None:
                    drawn = r["label"] is not None
                    inclusion[rid] = Inclusion(float(r["inclusion_probability"]), drawn)
                label = r["label"]
                if label is None:  # left unlabelled by the benchmark's design
                    continue
                labels.append(
                    StoredLabel(
                        rid,
                        oracle_key,
                        float(label["score"]),
                        tuple(label.get("samples") or ()),
                        float(label.get("cost_usd") or 0.0),
                        int(label.get("prompt_tokens") or 0),
                        int(label.get("completion_tokens") or 0),
                    )
                )
        items.add_responses(responses)
        items.add_labels(labels)
        items.add_inclusion(benchmark_id, inclusion)
    return benchmark_id
