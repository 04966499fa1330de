"""The store's JSON columns, written (:func:`dumps`) and read back: a metric result's
``params``, an item's ``meta``, a component's ``options``, a run's recipe (``runs.recipe_json``),
a judge's ``samples`` and a run's scoring ``checks``.  The store parses each one here as
it reads the row, and its record (:mod:`.records`, :mod:`.item_records`, :mod:`.pair_records`,
:mod:`.scoring_checks`) holds the value, so no module above the store parses a column
(``tests/test_store_json_columns.py`` checks that)."""

from __future__ import annotations

import json
from typing import Any

from rmaudit.errors import BadInput


def dumps(value: Any) -> str:
    """JSON as stored: sorted keys, non-ASCII kept (one spelling per value)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def json_object(text: str | None, path: str, field: str) -> dict[str, Any]:
    """A column that holds a JSON object (NULL or JSON null: an empty one)."""
    if text is None or text == "":
        return {}
    value = _parsed(text, path, field)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _damaged(text, path, field)
    return value


def json_list(text: str | None, path: str, field: str) -> tuple[Any, ...]:
    """A column's JSON list (a label's numbers, a verdict's texts) as a tuple (NULL: empty)."""
    if text is None or text == "":
        return ()
    value = _parsed(text, path, field)
    if not isinstance(value, list):
        raise _damaged(text, path, field)
    return tuple(value)


def _parsed(text: str, path: str, field: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        raise _damaged(text, path, field) from None


def _damaged(text: Any, path: str, field: str) -> BadInput:
    return BadInput(
        "database is corrupted: not the JSON rmaudit stores there; restore it from a copy, or "
        "rerun its recipes into a new DB",
        file=path,
        field=field,
        value=text[:40] if isinstance(text, str | bytes) else text,
    )
