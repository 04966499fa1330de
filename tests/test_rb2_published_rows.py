"""A model's published RewardBench 2 scores (``rb2-scores:FILE``) are matched to the data's
rows by row id and position, never by text: two rows that share a completion keep their own
scores, rows in another order are matched by id (or refused where their ids cannot say), and
the ids most published files get wrong (reward-bench #273) are matched by position.  Each
number is checked against RewardBench 2's formulas on the file's own per-row score lists
(tests/_rb2_data.py's independent reading)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _rb2_data import DATA, rb2_rows, reference_ties
from test_audit_rewardbench2 import audit_json, numbers, stored_scores


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def write_data(root: Path, rows: list[dict]) -> Path:
    pa = pytest.importorskip("pyarrow")
    parquet = pytest.importorskip("pyarrow.parquet")
    path = root / DATA
    path.parent.mkdir(parents=True, exist_ok=True)
    parquet.write_table(pa.Table.from_pylist(rows), path)
    return root


def published(path: Path, rows: list[dict], scores: list[list[float]], ids=None) -> Path:
    """reward-bench's columns for ``rows`` in this order, each row's completions scored by its
    own list (the chosen ones first); ``ids`` in place of the rows' own."""
    columns = {
        "id": ids or [r["id"] for r in rows],
        "subset": [r["subset"] for r in rows],
        "num_correct": [r["num_correct"] for r in rows],
        "scores": scores,
        "model": "org/published",
    }
    path.write_text(json.dumps(columns), encoding="utf-8")
    return path


def by_formula(rows: list[dict], scores: list[list[float]]) -> dict[str, float]:
    """Each subset's score and the final one from each row's own score list: best-of-4 as
    reward-bench's reroll_and_score_dataset, Ties by its process_single_model."""
    credits: dict[str, list[float]] = {}
    ties = []
    for row, values in zip(rows, scores, strict=True):
        if row["subset"] == "Ties":
            n = row["num_correct"]
            ties.append((row["id"], values[:n], values[n:]))
            continue
        top = max(values)
        credit = 1 / sum(v == top for v in values) if values[0] == top else 0.0
        credits.setdefault(row["subset"], []).append(credit)
    out = {subset: float(np.mean(c)) for subset, c in credits.items()}
    out["Ties"] = reference_ties(ties)
    out["score"] = float(np.mean(list(out.values())))
    return out


def lengths(rows: list[dict]) -> list[list[float]]:
    return [[float(len(c)) for c in [*r["chosen"], *r["rejected"]]] for r in rows]


def audited(rmaudit, data: Path, path: Path, db: Path) -> dict[str, dict]:
    args = ("--data-dir", str(data), "--db", str(db))
    return numbers(audit_json(rmaudit, f"rb2-scores:{path}", *args), "published")


def refused(rmaudit, data: Path, path: Path, db: Path):
    """The audit of a published scores file that must be refused: exit 2, one line, no DB."""
    done = rmaudit(
        "audit", f"rb2-scores:{path}", "--suite", "rewardbench-2", "--data-dir", str(data),
        "--db", str(db),
    )  # fmt: skip
    assert done.code == 2, done.err
    assert not db.exists()
    return done


def check(found: dict[str, dict], expected: dict[str, float]) -> None:
    assert set(found) == set(expected)
    for name, value in found.items():
        assert value["value"] == pytest.approx(expected[name], abs=1e-12), name


def test_two_rows_that_share_a_completion_keep_their_own_scores(rmaudit, tmp_path):
    """Two Math rows with the same prompt and correct completion, which the file scores 5 in
    one row and 0 in the other: each row's credit is from its own scores (1 and 0), not the
    first score kept for both."""
    rows = rb2_rows()
    shared = {"prompt": "Math: shared?", "subset": "Math", "num_correct": 1, "num_incorrect": 3}
    for ident, rejected in (("s1", ["b", "cc", "ddd"]), ("s2", ["ee", "f", "g"])):
        rows.append({**rows[0], **shared, "id": ident, "chosen": ["xxxxx"], "rejected": rejected})
    data = write_data(tmp_path / "data", rows)
    scores = lengths(rows)
    scores[-2] = [5.0, 1.0, 1.0, 1.0]  # s1: its correct completion on top
    scores[-1] = [0.0, 1.0, 2.0, 3.0]  # s2: the same completion at the bottom
    path = published(tmp_path / "published.json", rows, scores)
    found = audited(rmaudit, data, path, tmp_path / "rb2.db")
    check(found, by_formula(rows, scores))
    assert found["Math"]["n"] == 6


def test_rows_in_another_order_are_matched_by_id(rmaudit, tmp_path):
    """The file's Math rows rotated by one and its Focus rows reversed, every id unique: each
    row is found by its id, and the numbers are those of the data's order."""
    rows = rb2_rows()
    data = write_data(tmp_path / "data", rows)
    scores = [[s + 0.5 * k for k, s in enumerate(row)] for row in lengths(rows)]
    math = [i for i, r in enumerate(rows) if r["subset"] == "Math"]
    focus = [i for i, r in enumerate(rows) if r["subset"] == "Focus"]
    order = list(range(len(rows)))
    for i, j in zip(math, math[1:] + math[:1], strict=True):
        order[i] = j
    for i, j in zip(focus, focus[::-1], strict=True):
        order[i] = j
    moved = [rows[k] for k in order]
    path = published(tmp_path / "published.json", moved, [scores[k] for k in order])
    db = tmp_path / "rb2.db"
    check(audited(rmaudit, data, path, db), by_formula(rows, scores))
    # each completion scored as its own row's list says (a subset's mean alone would not
    # tell: rows matched in order carry their lists to other rows' completions)
    stored = stored_scores(db, "published")
    for row, values in zip(rows, scores, strict=True):
        completions = [*row["chosen"], *row["rejected"]]
        assert [stored[(row["prompt"], c)] for c in completions] == values


def test_rows_in_another_order_whose_ids_repeat_are_refused(rmaudit, tmp_path):
    """Rotated Math rows where two rows share an id cannot be matched by it: one line naming
    the file's row, exit 2, nothing written."""
    rows = rb2_rows()
    math = [i for i, r in enumerate(rows) if r["subset"] == "Math"]
    rows[math[3]]["id"] = rows[math[2]]["id"]  # the data's last two Math rows share an id
    data = write_data(tmp_path / "data", rows)
    order = list(range(len(rows)))
    for i, j in zip(math, math[1:] + math[:1], strict=True):
        order[i] = j
    moved = [rows[k] for k in order]
    path = published(tmp_path / "published.json", moved, [lengths(rows)[k] for k in order])
    db = tmp_path / "rb2.db"
    (line,) = refused(rmaudit, data, path, db).err.strip().splitlines()
    assert "row 1 of subset 'Math' has the id of the data's row 2" in line and str(path) in line


def test_ids_the_file_gives_twice_are_matched_by_position(rmaudit, tmp_path):
    """reward-bench #273: the first Factuality rows carry the ids of later rows, so those ids
    appear twice in the file and key nothing: every row is matched by its position."""
    rows = rb2_rows()
    factuality = [i for i, r in enumerate(rows) if r["subset"] == "Factuality"]
    ids = [r["id"] for r in rows]
    ids[factuality[0]], ids[factuality[1]] = ids[factuality[2]], ids[factuality[3]]
    data = write_data(tmp_path / "data", rows)
    scores = [[s * (1 + k % 2) for k, s in enumerate(row)] for row in lengths(rows)]
    path = published(tmp_path / "published.json", rows, scores, ids=ids)
    check(audited(rmaudit, data, path, tmp_path / "rb2.db"), by_formula(rows, scores))


def test_a_rejected_data_row_refuses_the_published_scores_naming_its_line(rmaudit, tmp_path):
    """Published scores are matched by each row's position in its subset, which a row the
    reader rejects would shift: one line naming the data file and the rejected row's line
    (its place among the file's rows), exit 2, nothing written."""
    rows = rb2_rows()
    bad = 4  # the fifth row says it has more correct completions than it holds
    rows[bad]["num_correct"] += 1
    data = write_data(tmp_path / "data", rows)
    path = published(tmp_path / "published.json", rows, lengths(rows))
    db = tmp_path / "rb2.db"
    (line,) = refused(rmaudit, data, path, db).err.strip().splitlines()
    assert f"1 rows of the RewardBench 2 data are rejected (first: line {bad + 1}," in line, line
    assert line.startswith(f"Error: {data / DATA}: ") and "num_correct: expected 1," in line
