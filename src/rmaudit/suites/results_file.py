"""What ``rmaudit audit`` keeps of an audit: every suite's headline numbers per model with
their ±, interval, sample size and data, and the verdict — printed by ``--json`` and always
written beside the DB, named after it (:data:`RESULTS_SUFFIX`; docs/audit.md, "Output")."""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from pathlib import Path
from typing import Any

from rmaudit.components.records import PROVENANCE_PARTS
from rmaudit.components.vocabulary import RETA_CURVE, SKIPPED_STAGE, is_best_of_n_curve
from rmaudit.results.comparison import compare_headlines, compare_stored
from rmaudit.results.comparison_text import comparison_json
from rmaudit.results.scoring_checks import checks_json, run_scoring_checks
from rmaudit.results.step_aggregation import aggregation_comparisons
from rmaudit.store import Store
from rmaudit.store.records import RunRow

from . import RESULTS_SUFFIX
from .audit_verdict import AgainstBar, SuiteResult
from .judge_results import judge_values
from .publisher_figures import PublisherFigures, figures_json

FORMAT = "rmaudit-audit-results"
FORMAT_VERSION = 3
#: the provenance parts that are the suite's data (not the models' scores files)
DATA_PARTS = tuple(part for part in PROVENANCE_PARTS if part != "RMs")
#: the failures stage of the records a suite's pair source could not use (run/pairs.py)
_REJECTED_STAGE = "pairs"


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def results_json(
    store: Store,
    results: list[SuiteResult],
    versions: dict[str, str],
    db: str,
    publishers: dict[str, list[PublisherFigures]] | None = None,
) -> dict[str, Any]:
    """The audit as JSON (NaN → null); ``publishers``: each suite's recorded judges' figures
    under their publishers' rules, by suite name."""
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "db": db,
        "suites": [
            _suite(store, r, versions[r.suite.name], (publishers or {}).get(r.suite.name, []))
            for r in results
        ],
    }


def _suite(
    store: Store, result: SuiteResult, version: str, publishers: list[PublisherFigures]
) -> dict[str, Any]:
    run_id = result.run_id
    data = _data(store, run_id, version)
    rejected = len(store.read.failures(run_id, _REJECTED_STAGE))
    total, unit = _extent(store, store.read.run(run_id))
    # each metric's prompts left out as undefined there (their reason starts with its label)
    skipped = Counter(
        error.split(": ", 1)[0] for _, error in store.read.failures(run_id, SKIPPED_STAGE)
    )
    labels = {rm_key: label for label, rm_key in store.read.reward_models(run_id)}
    checks = checks_json(run_scoring_checks(store, run_id))
    params = {
        (labels.get(r.rm_key), r.metric, r.key): r.params for r in store.read.metric_rows(run_id)
    }

    def metric(label: str, headline, cell) -> dict[str, Any]:
        stored = params.get((label, headline.metric, headline.key), {})
        left_out = skipped.get(headline.metric, 0)
        # what the ± is across: RM-Bench's levels, its records (prompts); a subset, its pairs;
        # a step metric, the questions (problems) its solutions answer
        n, across = (
            (stored["records"], "prompts")
            if "records" in stored
            else (stored["questions"], "questions")
            if "questions" in stored
            else (stored.get("pairs", total - left_out), unit)
        )
        return {
            "value": _number(cell.value),
            "stderr": _number(cell.stderr),
            "ci_low": _number(cell.ci_low),
            "ci_high": _number(cell.ci_high),
            "approximate": cell.approximate or None,
            "n": n,
            "unit": across,
            "skipped": left_out,
            "data": data,
        }

    judged = judge_values(store, run_id)
    curves = _curves(store, run_id, labels)
    published = {figures.label: figures_json(figures) for figures in publishers}
    aggregations = aggregation_comparisons(store, run_id)
    return {
        "suite": result.suite.name,
        "run_id": run_id,
        "data": data,
        "rejected_records": rejected,
        "headline": result.suite.headlines[0].name,
        "chance": result.suite.headlines[0].chance,
        "comparisons": [
            comparison_json(c)
            for c in [
                *filter(None, [compare_headlines(store, [run_id])]),
                *compare_stored(store, [run_id], [h.key for h in result.suite.headlines]),
            ]
        ],
        **({"aggregations": [comparison_json(c) for c in aggregations]} if aggregations else {}),
        "models": [
            {
                "label": m.label,
                "baseline": m.baseline,
                "passes": m.passes,
                "untrusted": m.untrusted,
                # the convention of the first number where it is the model's own headline
                "convention": m.convention or None,
                "against": [_against(c) for c in m.against_bars],
                "metrics": {
                    h.name: metric(m.label, h, m.cells[h.name]) for h in result.suite.headlines
                },
                **({"judge": judged[m.label]} if m.label in judged else {}),
                **({"publisher": published[m.label]} if m.label in published else {}),
                **({"curves": curves[m.label]} if m.label in curves else {}),
                "scoring_checks": checks.get(m.label),
            }
            for m in result.models
        ],
    }


def _data(store: Store, run_id: str, version: str) -> dict[str, Any]:
    """The suite's data: its version, and its files with their SHA-256."""
    return {
        "version": version,
        "files": [
            {"location": s.location, "sha256": s.digest}
            for s in store.read.run_sources(run_id)
            if s.kind == "file" and s.part in DATA_PARTS
        ],
    }


def _curves(
    store: Store, run_id: str, labels: dict[str, str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """Model label → its RETA and best-of-n curves: each point's x, value, ± and interval."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for row in store.read.curve_rows(run_id):
        if row.key != RETA_CURVE and not is_best_of_n_curve(row.key):
            continue
        curve = found.setdefault(labels[row.rm_key], {}).setdefault(
            row.key, {"label": row.label, "x_label": row.x_label, "points": []}
        )
        curve["points"].append(
            {
                name: None if value is None or not math.isfinite(value) else value
                for name, value in (
                    ("x", row.x),
                    ("value", row.value),
                    ("stderr", row.stderr),
                    ("ci_low", row.ci_low),
                    ("ci_high", row.ci_high),
                )
            }
        )
    return found


def _extent(store: Store, run: RunRow) -> tuple[int, str]:
    """How many units the run's numbers are over: its prompts, or its pairs."""
    benchmark = store.items.benchmark(run.benchmark_id) if run.benchmark_id else None
    if benchmark is not None:
        return len(store.read.selection_prompts(benchmark.selection_key)), "prompts"
    return store.read.pair_count(run.pair_set_key or ""), "pairs"


def _against(c: AgainstBar) -> dict[str, Any]:
    """A model's verdict against one bar (``length``, chance), with its paired difference."""
    paired = c.paired
    return {
        "bar": c.bar,
        "value": _number(c.cell.value),
        "stderr": _number(c.cell.stderr),
        "outcome": c.outcome,
        "required": c.required,
        "paired": None
        if paired is None
        else {
            "difference": _number(paired.value),
            "stderr": _number(paired.stderr),
            "ci_low": _number(paired.ci_low),
            "ci_high": _number(paired.ci_high),
            "p": _number(paired.p_value),
        },
    }


def dumps(payload: dict[str, Any]) -> str:
    return json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_results(path: Path, text: str) -> None:
    """Write the file (:func:`dumps` of the results) whole or not at all: a killed audit
    leaves the previous one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def results_location(db: str, report_dir: Path | str | None, explicit: Path | str | None) -> Path:
    """``--results FILE``, else the DB's name ending in :data:`RESULTS_SUFFIX`, in ``--report
    DIR`` or beside the DB."""
    if explicit:
        return Path(explicit)
    name = Path(db).stem + RESULTS_SUFFIX
    return Path(report_dir) / name if report_dir else Path(db).parent / name


def replaced_audit(path: Path, db: str) -> str | None:
    """The DB of another audit whose results ``path`` holds (None: none, or this DB's)."""
    try:
        earlier = json.loads(path.read_text(encoding="utf-8")).get("db")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(earlier, str) or Path(earlier).resolve() == Path(db).resolve():
        return None
    return earlier
