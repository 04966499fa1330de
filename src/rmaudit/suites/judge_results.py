"""A judge's ``judge-audit`` values in the results file (and, on a best-of-n suite, its
``oracle-correlation`` with the gold labels): every value (overall and per subset) with its ±,
interval and what it is over, under the model's ``"judge"`` key."""

from __future__ import annotations

import math
from typing import Any

from rmaudit.store import Store

JUDGE_METRIC = "judge-audit"
#: a rating judge's correlation with the gold labels (best-of-n suites)
CORRELATION_METRIC = "oracle-correlation"


def judge_values(store: Store, run_id: str) -> dict[str, dict[str, Any]]:
    """Reward-model label → its judge-audit values by key (absent for RMs without verdicts)."""
    labels = {rm_key: label for label, rm_key in store.read.reward_models(run_id)}
    found: dict[str, dict[str, Any]] = {}
    for row in store.read.metric_rows(run_id):
        if row.metric not in (JUDGE_METRIC, CORRELATION_METRIC):
            continue
        params = row.params
        found.setdefault(labels[row.rm_key], {})[row.key] = {
            "label": row.label,
            **{k: _number(getattr(row, k)) for k in ("value", "stderr", "ci_low", "ci_high")},
            **params,
        }
    return found


def _number(value: Any) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)
