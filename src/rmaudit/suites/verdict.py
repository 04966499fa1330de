"""Each suite's headline numbers per model, read back from its run, and whether a model beats
the ``length`` baseline (an RM that does not is no better than preferring longer answers)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from rmaudit.results.summary import load_summary
from rmaudit.store import Store

from . import Suite
from .models import BASELINES, LENGTH_BASELINE


@dataclass(frozen=True)
class ModelResult:
    label: str
    baseline: bool
    #: headline name → value (NaN where the run stored none)
    values: dict[str, float]
    #: whether the first headline is better than length's (None: a baseline, or no length row)
    beats_length: bool | None


@dataclass(frozen=True)
class SuiteResult:
    suite: Suite
    run_id: str
    models: list[ModelResult]

    @property
    def flagged(self) -> list[str]:
        return [m.label for m in self.models if m.beats_length is False]


def suite_result(store: Store, suite: Suite, run_id: str, baselines: set[str]) -> SuiteResult:
    """``baselines``: the labels of the run's baseline RMs (not the user's models)."""
    summary = load_summary(store, run_id)
    higher = {(c.metric, c.key): c.higher_is_better for c in summary.columns}
    first = suite.headlines[0]
    rows = []
    for label, rm_key in summary.reward_models:
        cells = {h.name: summary.cells.get((rm_key, h.metric, h.key)) for h in suite.headlines}
        rows.append(
            (label, {name: cell.value if cell else math.nan for name, cell in cells.items()})
        )
    length = next(
        (
            values
            for label, values in rows
            if label == LENGTH_BASELINE and LENGTH_BASELINE in baselines
        ),
        None,
    )
    models = []
    for label, values in rows:
        baseline = label in baselines
        beats = None
        if not baseline and length is not None and math.isfinite(length[first.name]):
            value = values[first.name]
            better = higher.get((first.metric, first.key), True)
            beats = math.isfinite(value) and (
                value > length[first.name] if better else value < length[first.name]
            )
        models.append(ModelResult(label, baseline, values, beats))
    return SuiteResult(suite, run_id, models)


def baseline_labels(tables: list[dict]) -> set[str]:
    """The labels of the baseline RMs among a recipe's reward-model tables."""
    return {
        t["label"]
        for t in tables
        if t["label"] in BASELINES and t["name"] == BASELINES[t["label"]]["name"]
    }


def flag_lines(results: list[SuiteResult]) -> list[str]:
    """One line per model that does not beat ``length`` on a suite's first headline."""
    return [
        f"⚠ {label} does not beat the length baseline on {r.suite.name} "
        f"({r.suite.headlines[0].name}): it is no better than preferring longer responses"
        for r in results
        for label in r.flagged
    ]


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def results_json(results: list[SuiteResult], versions: dict[str, str], db: str) -> dict:
    """What ``rmaudit audit --json`` prints (NaN → null)."""
    return {
        "db": db,
        "suites": [
            {
                "suite": r.suite.name,
                "run_id": r.run_id,
                "data": versions[r.suite.name],
                "headline": r.suite.headlines[0].name,
                "models": [
                    {
                        "label": m.label,
                        "baseline": m.baseline,
                        "beats_length": m.beats_length,
                        "metrics": {name: _number(v) for name, v in m.values.items()},
                    }
                    for m in r.models
                ],
            }
            for r in results
        ],
    }


def _cell(value: float) -> str:
    return f"{value:.4f}" if math.isfinite(value) else "—"


def index_markdown(results: list[SuiteResult], reports: dict[str, Path], db: str) -> str:
    """``--report DIR``'s DIR/report.md: each suite's headline numbers and its own report."""
    lines = [
        "# rmaudit audit",
        "",
        f"Stored in `{db}`; each suite's plots and full report are "
        "linked below.  Text from the data appears only in the suites' reports.",
        "",
    ]
    for r in results:
        names = [h.name for h in r.suite.headlines]
        lines += [
            f"## {r.suite.name}: {r.suite.title}",
            "",
            f"[report]({reports[r.suite.name].relative_to(reports[r.suite.name].parents[1]).as_posix()})"
            f" · run `{r.run_id}` · {r.suite.measures}",
            "",
            "| model | " + " | ".join(names) + " | vs length |",
            "|---|" + "---:|" * len(names) + "---|",
        ]
        for m in r.models:
            verdict = {
                None: "baseline" if m.baseline else "",
                True: "beats length",
                False: "⚠ does not beat length",
            }[m.beats_length]
            label = m.label.replace("|", "\\|").replace("`", "'")
            lines.append(
                f"| `{label}` | "
                + " | ".join(_cell(m.values[n]) for n in names)
                + f" | {verdict} |"
            )
        lines.append("")
    return "\n".join(lines)
