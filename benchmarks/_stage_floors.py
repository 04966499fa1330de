"""Each stage's floor for ``main_job_stages.py``: the same work done directly, no store and no
executor between (``floors``), timed in the interpreter that has just run the recipe."""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rmaudit.components import MetricInputs, Prompt, Response
from rmaudit.recipe import load_recipe
from rmaudit.run import build_components
from rmaudit.run.prompts import distinct_prompts

BATCH = 256


def cpu(work: Callable[[], Any]) -> float:
    started = time.process_time()
    work()
    return time.process_time() - started


def batched_calls(call: Callable[[Sequence[Any]], Any], items: list[Any]) -> None:
    for start in range(0, len(items), BATCH):
        call(items[start : start + BATCH])


def empty_text_caches() -> None:
    """Empty every cache of the simulated world, as a fresh interpreter has them."""
    for name, module in list(sys.modules.items()):
        if name.startswith("rmaudit.backends.simulated"):
            for value in vars(module).values():
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def stored_benchmark(db: Path) -> tuple[list[Prompt], dict[str, list[Response]], dict, dict]:
    """The run's prompts in order, each one's responses by sample index, the labels and each
    RM's scores (by RM label), as the DB holds them."""
    connection = sqlite3.connect(db)
    try:
        selection, per_prompt, oracle = connection.execute(
            "select selection_key, per_prompt, oracle_key from benchmarks"
        ).fetchone()
        prompts = [
            Prompt(pid, text)
            for pid, text in connection.execute(
                "select p.id, p.text from selections s join prompts p on p.id = s.prompt_id "
                "where s.selection_key = ? order by s.position",
                [selection],
            )
        ]
        responses: dict[str, list[Response]] = {p.id: [] for p in prompts}
        for rid, pid, index, text in connection.execute(
            "select id, prompt_id, sample_index, text from responses "
            "where sample_index < ? order by prompt_id, sample_index",
            [per_prompt],
        ):
            if pid in responses:
                responses[pid].append(Response(rid, pid, index, text))
        labels = dict(
            connection.execute(
                "select response_id, score from oracle_labels where oracle_key = ?", [oracle]
            )
        )
        scores = {
            label: dict(
                connection.execute(
                    "select response_id, score from rm_scores where rm_key = ?", [rm_key]
                )
            )
            for label, rm_key in connection.execute("select label, rm_key from run_reward_models")
        }
    finally:
        connection.close()
    return prompts, responses, labels, scores


def bulk_insert(db: Path) -> float:
    """Every row of ``db`` inserted into an empty copy of its schema in one transaction."""
    copy = db.with_name(db.stem + "-floor.db")
    source = sqlite3.connect(db)
    target = sqlite3.connect(copy, isolation_level=None)
    target.execute("pragma journal_mode = wal")
    target.execute("pragma synchronous = normal")
    try:
        schema = source.execute(
            "select type, name, sql from sqlite_master where sql is not null "
            "and name not like 'sqlite_%' order by type = 'index'"
        ).fetchall()
        for _, _, sql in schema:
            target.execute(sql)
        tables = {
            name: source.execute(f'select * from "{name}"').fetchall()
            for kind, name, _ in schema
            if kind == "table"
        }

        def insert() -> None:
            target.execute("begin")
            for name, rows in tables.items():
                if rows:
                    marks = ", ".join("?" * len(rows[0]))
                    target.executemany(f'insert into "{name}" values ({marks})', rows)
            target.execute("commit")

        return cpu(insert)
    finally:
        source.close()
        target.close()


def summary_reads(db: Path) -> float:
    connection = sqlite3.connect(db)
    try:
        (run_id,) = connection.execute("select id from runs").fetchone()
        return cpu(
            lambda: [
                connection.execute(f"select * from {table} where run_id = ?", [run_id]).fetchall()
                for table in ("metric_results", "curves", "per_prompt_results")
            ]
        )
    finally:
        connection.close()


def floors(recipe_path: str, db: Path) -> dict[str, float]:
    recipe = load_recipe(recipe_path)
    components = build_components(recipe)

    def part(spec: Any) -> Any:
        return components[spec.field]

    prompts, responses, labels, scores = stored_benchmark(db)
    source, sampler, embedder = part(recipe.source), part(recipe.sampler), part(recipe.embedder)
    pool = distinct_prompts(source.load())
    out = {"sampling": cpu(lambda: sampler.sample(pool, embedder.embed_prompts(pool)))}
    n = len(next(iter(responses.values())))
    requests = [(p, i) for p in prompts for i in range(n)]
    out["generation"] = cpu(lambda: batched_calls(part(recipe.policy).generate, requests))
    items = [(p, r) for p in prompts for r in responses[p.id]]
    empty_text_caches()
    out["labels"] = cpu(lambda: batched_calls(part(recipe.oracle).label, items))
    models = [part(spec) for spec in recipe.reward_models]
    out["scores"] = cpu(lambda: [batched_calls(m.score, items) for m in models])
    ids = tuple(p.id for p in prompts)
    oracle = tuple(np.array([labels[r.id] for r in responses[p.id]]) for p in prompts)
    metrics = [part(spec) for spec in recipe.metrics if type(part(spec)).scope == "rm"]

    def compute_metrics() -> None:
        for table in scores.values():
            inputs = MetricInputs(
                ids,
                oracle,
                tuple(np.array([table[r.id] for r in responses[p.id]]) for p in prompts),
            )
            for metric in metrics:
                metric.compute(inputs)

    out["metrics"] = cpu(compute_metrics)
    out["writes"] = bulk_insert(db)
    out["summary"] = summary_reads(db)
    return out
