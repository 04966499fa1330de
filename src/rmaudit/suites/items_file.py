"""``rmaudit audit --write-items FILE``: the texts a reward model must score for the chosen
suites — every pair's responses and, for a suite with a shift sweep, every shifted copy
rmaudit makes — so that a user can score them elsewhere and come back with ``scores:FILE``.

One row per response: ``suite``, ``prompt``, ``response`` (the key under ``--match text``,
the default) and ``response_id`` (rmaudit's id, the key under ``--match rmaudit-id``); a
response that several suites share is written once, under the first.  JSON Lines or CSV by
the file's name (``.jsonl``, ``.csv``, each optionally ``.gz``).

For the suites of process reward models, one JSON row per solution: ``suite``, ``id`` (the
data's own), ``subset`` (error class or split), ``question`` and ``steps`` (the list of step
strings exactly as the data holds them); the same rows with ``step_scores`` added come back
as ``step-scores:FILE``, matched by question and steps (docs/prm.md).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rmaudit.components import Prompt, Response
from rmaudit.errors import BadInput
from rmaudit.run.solutions import SolutionSet

COLUMNS = ("suite", "prompt", "response", "response_id")
_FORMATS = (".jsonl", ".csv")


def items_format(path: Path) -> str:
    """``.jsonl`` or ``.csv`` from the file's name; anything else, or a folder that does not
    exist, is a BadInput."""
    if not path.parent.is_dir():
        raise BadInput("no such folder", field="--write-items", value=str(path))
    name = path.name.lower().removesuffix(".gz")
    for suffix in _FORMATS:
        if name.endswith(suffix):
            return suffix
    raise BadInput(
        "expected a file name ending .jsonl or .csv (optionally .gz)",
        field="--write-items",
        value=str(path),
    )


def item_rows(
    suite_items: Iterable[tuple[str, list[tuple[Prompt, Response]]]],
) -> list[dict[str, str]]:
    """One row per distinct response, in suite order."""
    rows: dict[str, dict[str, str]] = {}
    for suite, items in suite_items:
        for prompt, response in items:
            rows.setdefault(
                response.id,
                {
                    "suite": suite,
                    "prompt": prompt.text,
                    "response": response.text,
                    "response_id": response.id,
                },
            )
    return list(rows.values())


def check_solutions_format(path: Path) -> None:
    """Solutions are written as JSON Lines: their steps are lists."""
    if items_format(path) != ".jsonl":
        raise BadInput(
            "solutions are written as JSON Lines (their steps are lists): give a name ending "
            ".jsonl (optionally .gz)",
            field="--write-items",
            value=str(path),
        )


def solution_rows(suite_solutions: Iterable[tuple[str, SolutionSet]]) -> list[dict[str, Any]]:
    """One row per distinct solution, in suite order."""
    rows: dict[str, dict[str, Any]] = {}
    for suite, solution_set in suite_solutions:
        for sid, solution in zip(solution_set.ids, solution_set.solutions, strict=True):
            rows.setdefault(
                sid,
                {
                    "suite": suite,
                    "id": solution.ref,
                    "subset": solution.subset,
                    "question": solution.solution.question,
                    "steps": list(solution.steps),
                },
            )
    return list(rows.values())


def write_items(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` whole or not at all (a temporary file renamed into place)."""
    if items_format(path) == ".csv":
        buffer = io.StringIO(newline="")
        writer = csv.DictWriter(buffer, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
        text = buffer.getvalue()
    else:
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    data = text.encode("utf-8")
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(gzip.compress(data, mtime=0) if path.suffix.lower() == ".gz" else data)
    os.replace(partial, path)
