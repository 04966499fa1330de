"""A run's stored results as JSON (``rmaudit runs [RUN] --json``), for notebooks and
leaderboards: every metric value (RM label, metric, key, params, value, stderr, CI) and every
curve, with the run's sources and skipped prompts.  NaN (no stderr, no CI) is ``null``."""

from __future__ import annotations

import json
import math
from typing import Any

from rmaudit.components import RUN_LEVEL, MetricValue
from rmaudit.components.vocabulary import SKIPPED_STAGE
from rmaudit.errors import BadInput
from rmaudit.results.labelling import Labelling, labelling
from rmaudit.results.leaderboard import leaderboard, leaderboard_json
from rmaudit.results.noise_dependence import noise_dependence
from rmaudit.results.scoring_checks import checks_json, run_scoring_checks
from rmaudit.results.summary import load_summary
from rmaudit.store import Store
from rmaudit.store.records import BenchmarkRow, CurvePointRow, RunRow

FORMAT = "rmaudit-results"
FORMAT_VERSION = 1


def _number(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def run_results(store: Store, run_id: str) -> dict[str, Any]:
    try:
        run = store.read.run(run_id)
    except KeyError:
        raise BadInput(
            "no such run in the DB", file=store.path, field="run", value=run_id
        ) from None
    benchmark = store.items.benchmark(run.benchmark_id) if run.benchmark_id else None
    labels: dict[str, str | None] = {
        rm_key: label for label, rm_key in store.read.reward_models(run_id)
    }
    labels[RUN_LEVEL] = None  # results across every RM of the run

    metrics = _metric_rows(store, run_id, labels)
    curves = _curves(store, run_id, labels)
    found = _labelling(store, run, benchmark)
    noise = noise_dependence(run, found)
    return {
        "id": run_id,
        "title": run.title,
        "status": run.status,
        "simulated": run.simulated,
        "benchmark_id": run.benchmark_id,
        "recipe_path": run.recipe_path,
        "created_at": run.created_at,
        "reward_models": [label for label in labels.values() if label is not None],
        "labelling": None if found is None else found.as_json(),
        "noise_dependent": None if noise is None else noise.as_json(),
        "metrics": metrics,
        "curves": curves,
        "sources": [
            {
                "part": r.part,
                "entry": r.entry,
                "role": r.role,
                "kind": r.kind,
                "location": r.location,
                "digest": r.digest,
                "note": r.note,
                "simulated": r.simulated,
            }
            for r in store.read.run_sources(run_id)
        ],
        "skipped_prompts": [
            {"prompt_id": pid, "reason": error}
            for pid, error in store.read.failures(run_id, SKIPPED_STAGE)
        ],
        "scoring_checks": checks_json(run_scoring_checks(store, run_id)),
        "leaderboard": leaderboard_json(leaderboard(store, load_summary(store, run_id))),
    }


def _rm_label(labels: dict[str, str | None], row: MetricValue | CurvePointRow) -> str | None:
    return labels.get(row.rm_key, row.rm_key)


def _metric_rows(store: Store, run_id: str, labels: dict[str, str | None]) -> list[dict[str, Any]]:
    """Every stored metric value of the run, as JSON."""
    return [
        {
            "rm": _rm_label(labels, r),
            "metric": r.metric,
            "key": r.key,
            "label": r.label,
            "params": r.params,
            "value": _number(r.value),
            "stderr": _number(r.stderr),
            "ci_low": _number(r.ci_low),
            "ci_high": _number(r.ci_high),
            "higher_is_better": bool(r.higher_is_better),
        }
        for r in store.read.metric_rows(run_id)
    ]


def _curves(store: Store, run_id: str, labels: dict[str, str | None]) -> list[dict[str, Any]]:
    """Every stored curve of the run, its points gathered per (RM, metric, key), as JSON."""
    curves: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in store.read.curve_rows(run_id):
        curve = curves.setdefault(
            (r.rm_key, r.metric, r.key),
            {
                "rm": _rm_label(labels, r),
                "metric": r.metric,
                "key": r.key,
                "label": r.label,
                "x_label": r.x_label,
                "x": [],
                "value": [],
                "stderr": [],
                "ci_low": [],
                "ci_high": [],
            },
        )
        for column in ("x", "value", "stderr", "ci_low", "ci_high"):
            curve[column].append(_number(getattr(r, column)))
    return list(curves.values())


def runs_json(store: Store, run_ids: list[str]) -> str:
    return json.dumps(
        {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "runs": [run_results(store, rid) for rid in run_ids],
        },
        ensure_ascii=False,
        indent=1,
        allow_nan=False,
    )


def _labelling(store: Store, run: RunRow, benchmark: BenchmarkRow | None) -> Labelling | None:
    return None if benchmark is None else labelling(store, run, benchmark)
