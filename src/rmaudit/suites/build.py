"""A suite and the models to audit, as a recipe: TOML text a user can keep, and the same
validated :class:`~rmaudit.recipe.Recipe` that ``rmaudit run`` reads from a file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rmaudit.recipe import Recipe, parse_recipe

from . import Suite
from .data import Located
from .judge_arguments import for_suite, has_pairwise_judge, has_rating_judge
from .math_suites import is_math, math_benchmark_table
from .model_arguments import with_rb2_data

#: the pair source of RewardBench 2's data file, whose path an rb2-scores model needs
_RB2_SOURCE = "rewardbench-2"


def suite_table(
    suite: Suite, located: Located, models: list[dict[str, Any]], *, sample: int | None
) -> dict[str, Any]:
    """The recipe's tables: the suite's files as one pair set (or its benchmark, or its
    solutions), its metrics, the models."""
    title = f"rmaudit audit --suite {suite.name}: {suite.title}"
    if suite.solutions is not None:  # process reward models on the suite's solutions
        solutions = {
            "name": suite.solutions,
            "files": [str(path) for path in located.paths],
            "data": located.version,
        }
        return {
            "title": title,
            "solutions": {"source": solutions},
            "process_reward_models": models,
            "metrics": [dict(m) for m in suite.metrics],
        }
    models = for_suite(models, pairs=suite.benchmark is None and not suite.rating_judges)
    rb2_data = next(
        (p for f, p in zip(suite.files, located.paths, strict=True) if f.source == _RB2_SOURCE),
        None,
    )
    models = with_rb2_data(models, rb2_data)
    if suite.benchmark is not None:
        benchmark = {**suite.benchmark, "root": str(located.root / suite.benchmark_root)}
        if is_math(suite):  # its texts where found, else no length baseline
            found = math_benchmark_table(suite, located, models)
            benchmark, models = found.benchmark, found.models
        metrics = [dict(m) for m in suite.metrics]
        if has_rating_judge(models):  # how well it predicts the gold labels: a cheap judge?
            metrics.append({"name": "oracle-correlation"})
        return {
            "title": title,
            "benchmark": benchmark,
            "reward_models": models,
            "metrics": metrics,
        }
    source: dict[str, Any] = {"name": "combined-pairs", "data": located.version}
    if sample is not None:
        source["sample"] = sample
    # a public file's odd records (an empty response, identical responses) are counted and
    # stored in the failures table, not fatal
    source["sources"] = [
        {"name": file.source, "path": str(path), "on_bad_record": "reject", **file.options}
        for file, path in zip(suite.files, located.paths, strict=True)
    ]
    pairs: dict[str, Any] = {"source": source}
    if suite.shift:  # recipes/shift.toml's sweep: levels 0, 0.05, ..., 0.75, every target
        pairs["shift"] = {"perturber": {"name": "word-perturb"}}
    metrics = [dict(m) for m in suite.metrics]
    if has_pairwise_judge(models):  # what a judge's verdicts in both orders say about it
        metrics.append({"name": "judge-audit"})
    return {"title": title, "pairs": pairs, "reward_models": models, "metrics": metrics}


def recipe_text(suite: Suite, table: dict[str, Any]) -> str:
    """The recipe as TOML, headed by what the suite is; ``rmaudit run`` runs it as is."""
    sourced = table.get("pairs") or table.get("solutions") or {}
    head = [
        f"# rmaudit audit suite {suite.name!r}: {suite.title}",
        f"# measures: {suite.measures}",
        f"# size: {suite.size}",
        f"# data: {sourced.get('source', {}).get('data', suite.origin)}",
        "# Save it as a file, edit it, and run it with: rmaudit run FILE",
        "",
    ]
    return "\n".join(head) + to_toml(table)


def suite_recipe(suite: Suite, table: dict[str, Any]) -> Recipe:
    """The validated recipe: what ``rmaudit run`` makes of :func:`recipe_text`, validated from
    the tables themselves (a judge's template stays the record it was read into)."""
    return parse_recipe(
        table,
        file=f"rmaudit audit --suite {suite.name}",
        text=recipe_text(suite, table),
        base_dir=Path.cwd(),
    )


def to_toml(table: dict[str, Any], prefix: str = "") -> str:
    """TOML for the tables a suite recipe holds: scalars, lists of scalars, tables and arrays
    of tables (None values are left out: TOML has no null)."""
    lines, tables, arrays = [], [], []
    for key, value in table.items():
        if value is None:
            continue
        if isinstance(value, dict):
            tables.append((key, value))
        elif _table_like(value):
            arrays.append((key, value))
        else:
            lines.append(f"{_key(key)} = {_value(value)}")
    out = "\n".join(lines) + ("\n" if lines else "")
    for key, value in tables:
        name = f"{prefix}{_key(key)}"
        # a table of tables only needs no header of its own: its sub-tables name it
        header = any(not _table_like(v) for v in value.values() if v is not None)
        out += (f"\n[{name}]\n" if header else "") + to_toml(value, f"{name}.")
    for key, values in arrays:
        name = f"{prefix}{_key(key)}"
        for value in values:
            out += f"\n[[{name}]]\n{to_toml(value, f'{name}.')}"
    return out


def _table_like(value: Any) -> bool:
    return isinstance(value, dict) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)
    )


def _key(key: str) -> str:
    return key if key.replace("-", "").replace("_", "").isalnum() else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, BaseModel):  # a record a table holds (a judge's template): as written
        return _value(value.model_dump(mode="json"))
    raise TypeError(f"no TOML form for {value!r}")
