"""A small RewardBench 2 data file in the real schema (allenai/reward-bench-2's columns), and
RewardBench 2's scores computed independently of rmaudit, as reward-bench's scripts compute
them: for the suite's tests (tests/test_audit_rewardbench2.py, tests/api/).

The completions' lengths are chosen so that the ``length`` baseline meets every case: a row it
gets right alone, a two-way and a three-way tie at the top, a row it gets wrong; and a Ties
question with both a ref and a tied group (accurate and not, a zero spread)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

DATA = Path("reward-bench-2") / "data" / "test-00000-of-00001.parquet"
SUBSETS = ("Factuality", "Precise IF", "Math", "Safety", "Focus")
#: (chosen, rejected) lengths per best-of-4 row: alone at the top, 2-way tie, 3-way tie, wrong
BEST_OF_FOUR = ((9, (3, 4, 5)), (7, (7, 2, 1)), (6, (6, 6, 2)), (2, (8, 3, 4)))
#: Ties: (id, correct lengths, incorrect lengths)
TIES = (
    ("ref:1", (10,), (4, 6)),
    ("tied:1", (9, 7, 7), (3, 5)),
    ("ref:2", (3,), (3, 8)),
    ("tied:2", (6, 6), (2,)),
    ("ref:3", (12,), (2, 2, 2)),
    ("tied:3", (8, 5), (6, 1)),
)
_METADATA = {
    "category": None,
    "correct": None,
    "index": None,
    "instruction_id_list": [],
    "label": None,
    "method": None,
    "models": [],
    "prompt_norm": None,
    "subcategory": None,
    "valid": None,
}


def _completions(lengths: tuple[int, ...], first: int) -> list[str]:
    """Completions of these lengths, each its own letter (so no two of a row are alike)."""
    return [chr(ord("a") + first + j) * n for j, n in enumerate(lengths)]


def rb2_rows() -> list[dict[str, Any]]:
    rows = []

    def add(ident: str, subset: str, prompt: str, chosen: list[str], rejected: list[str]):
        rows.append(
            {
                "id": ident,
                "prompt": prompt,
                "chosen": chosen,
                "rejected": rejected,
                "num_correct": len(chosen),
                "num_incorrect": len(rejected),
                "total_completions": len(chosen) + len(rejected),
                "models": ["m"] * (len(chosen) + len(rejected)),
                "subset": subset,
                "additional_metadata": dict(_METADATA),
            }
        )

    for subset in SUBSETS:
        for i, (good, bad) in enumerate(BEST_OF_FOUR):
            add(
                str(i),
                subset,
                f"{subset}: question {i}?",
                _completions((good,), 0),
                _completions(bad, 1),
            )
    for ident, good, bad in TIES:
        add(
            ident,
            "Ties",
            f"Ties: name one {ident}",
            _completions(good, 0),
            _completions(bad, len(good)),
        )
    return rows


def write_rb2(root: Path) -> list[dict[str, Any]]:
    """The data file under ``root`` (a --data-dir); returns its rows."""
    pa = pytest.importorskip("pyarrow")
    parquet = pytest.importorskip("pyarrow.parquet")
    rows = rb2_rows()
    path = root / DATA
    path.parent.mkdir(parents=True, exist_ok=True)
    parquet.write_table(pa.Table.from_pylist(rows), path)
    return rows


def reference_ties(groups: list[tuple[str, list[float], list[float]]]) -> float:
    """reward-bench's process_single_model read independently: per (kind, number) group
    (accurate, d_corr or None, m_ci), then 0.3·tied_acc + 0.3·ref_acc + 0.2·pref +
    0.2·pref_hard + 0.01·margin (tanh, NaN as 0)."""
    pooled: dict[tuple[str, int], tuple[list[float], list[float]]] = {}
    for ident, correct, incorrect in groups:
        kind, number = ident.split(":")
        good, bad = pooled.setdefault((kind, int(number)), ([], []))
        good += list(correct)
        bad += list(incorrect)
    stats = {
        key: (
            min(good) - max(bad) > 0,
            max(good) - min(good) if len(good) > 1 else None,
            min(good) - max(bad),
        )
        for key, (good, bad) in pooled.items()
    }
    ref = {n: s for (k, n), s in stats.items() if k == "ref"}
    tied = {n: s for (k, n), s in stats.items() if k == "tied"}
    both = sorted(set(ref) & set(tied))
    d = np.array([tied[n][1] for n in both], float)
    m_tied = np.array([tied[n][2] for n in both], float)
    m_worst = np.minimum(np.array([ref[n][2] for n in both], float), m_tied)
    with np.errstate(divide="ignore", invalid="ignore"):
        margin = np.nan_to_num(np.tanh(m_worst / d - 1), nan=0.0)
    return float(
        0.3 * np.mean([s[0] for s in tied.values()])
        + 0.3 * np.mean([s[0] for s in ref.values()])
        + 0.2 * np.mean(m_tied > d)
        + 0.2 * np.mean(m_worst > d)
        + 0.01 * np.mean(margin)
    )


def reference_scores(rows: list[dict[str, Any]], score) -> dict[str, float]:
    """Every subset's score and the final one, of ``score(prompt, completion)``: best-of-4 as
    reward-bench's reroll_and_score_dataset (1 / #top when the first completion is on top)."""
    by_subset: dict[str, list[float]] = {}
    ties = []
    for row in rows:
        values = [score(row["prompt"], c) for c in [*row["chosen"], *row["rejected"]]]
        if row["subset"] == "Ties":
            n = row["num_correct"]
            ties.append((row["id"], values[:n], values[n:]))
            continue
        top = max(values)
        credit = 1 / sum(v == top for v in values) if values[0] == top else 0.0
        by_subset.setdefault(row["subset"], []).append(credit)
    out = {subset: float(np.mean(credits)) for subset, credits in by_subset.items()}
    out["Ties"] = reference_ties(ties)
    out["score"] = float(np.mean(list(out.values())))
    return out
