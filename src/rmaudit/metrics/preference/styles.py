"""RM-Bench's easy / normal / hard accuracies from the 3 × 3 matrix of chosen style × rejected
style accuracies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._validation import check_integer
from rmaudit.metrics.preference._inputs import ArrayLike, check_labels
from rmaudit.metrics.preference.accuracy import pair_credit


@dataclass(frozen=True, eq=False)
class StyleDifficulty:
    """RM-Bench's accuracies by style difficulty, and the matrix they come from."""

    easy: float
    normal: float
    hard: float
    average: float
    matrix: np.ndarray


def style_accuracy_matrix(
    chosen: ArrayLike,
    rejected: ArrayLike,
    chosen_style: Sequence[int],
    rejected_style: Sequence[int],
    *,
    n_styles: int = 3,
    ties: str = "loss",
) -> np.ndarray:
    """Accuracy of every (chosen style i, rejected style j) combination: an n_styles² matrix.

    ``M[i, j]`` is :func:`accuracy` over the pairs whose chosen response has style i and
    rejected response style j.  In RM-Bench the styles are 0 = concise, 1 = detailed plain
    text, 2 = detailed markdown, so a higher index is longer / more formatted.  Every cell
    needs at least one pair.

    >>> style_accuracy_matrix([1, 0, 1, 1], [0, 1, 0, 0], [0, 0, 1, 1], [0, 1, 0, 1], n_styles=2)
    array([[1., 0.],
           [1., 1.]])
    """
    credit = pair_credit(chosen, rejected, ties=ties)
    n_styles = check_integer(n_styles, "n_styles", minimum=1)
    styles = []
    for name, values in (("chosen_style", chosen_style), ("rejected_style", rejected_style)):
        array = np.asarray(check_labels(values, credit.size, name))
        if array.dtype.kind not in "iu" or array.min() < 0 or array.max() >= n_styles:
            raise MetricInputError(
                f"expected integer styles in [0, {n_styles - 1}], got {array.tolist()[:5]}…",
                field=name,
            )
        styles.append(array)
    cell = styles[0] * n_styles + styles[1]
    counts = np.bincount(cell, minlength=n_styles * n_styles)
    if (counts == 0).any():
        i, j = divmod(int(np.argmin(counts)), n_styles)
        raise MetricInputError(
            f"expected at least one pair per style combination, got none "
            f"with chosen style {i} and rejected style {j}",
            field="chosen_style",
        )
    sums = np.bincount(cell, weights=credit, minlength=n_styles * n_styles)
    return (sums / counts).reshape(n_styles, n_styles)


def style_difficulty(matrix: Any) -> StyleDifficulty:
    """RM-Bench easy / normal / hard accuracy from a chosen-style × rejected-style matrix.

    With styles ordered from least to most formatted (RM-Bench: concise, detailed, detailed
    markdown): **hard** is the mean of the upper-right triangle (i < j: the chosen response is
    less formatted than the rejected one, so a style-biased RM prefers the wrong one),
    **normal** the mean of the diagonal (same style), **easy** the mean of the lower-left
    triangle (i > j: style and substance agree); ``average`` is the mean of all cells.

    >>> m = np.array([[0.6, 0.3, 0.2], [0.8, 0.7, 0.4], [0.9, 0.9, 0.8]])
    >>> d = style_difficulty(m)
    >>> round(d.hard, 4), round(d.normal, 4), round(d.easy, 4)
    (0.3, 0.7, 0.8667)
    """
    array = np.asarray(matrix, dtype=float)
    if array.ndim != 2 or array.shape[0] != array.shape[1] or array.shape[0] < 2:
        raise MetricInputError(
            f"expected a square matrix of at least 2 × 2 styles, got shape {array.shape}",
            field="matrix",
        )
    if not np.all((array >= 0) & (array <= 1)):
        raise MetricInputError(
            "expected accuracies in [0, 1], got values outside (or NaN)", field="matrix"
        )
    upper = np.triu_indices_from(array, k=1)
    lower = np.tril_indices_from(array, k=-1)
    return StyleDifficulty(
        easy=float(array[lower].mean()),
        normal=float(np.diag(array).mean()),
        hard=float(array[upper].mean()),
        average=float(array.mean()),
        matrix=array,
    )


def style_difficulty_stderr(
    credit: ArrayLike,
    chosen_style: Sequence[int],
    rejected_style: Sequence[int],
    records: Sequence[Any],
    *,
    n_styles: int = 3,
) -> dict[str, float]:
    """The standard error across records of easy / normal / hard / average, where every record
    (an RM-Bench prompt) holds exactly one pair per style combination; NaN for each where not.

    The pairs of one record share its prompt and responses, so they are not independent: the
    record is the sampling unit.  With one pair per combination a level's value is the mean
    over records of the record's own mean over that level's cells, and its standard error is
    that mean's, std(record means) / √records.

    >>> se = style_difficulty_stderr([1, 0, 1, 1, 1, 0, 1, 1], [0, 0, 1, 1] * 2,
    ...                              [0, 1, 0, 1] * 2, ["a"] * 4 + ["b"] * 4, n_styles=2)
    >>> round(se["easy"], 4), se["normal"]
    (0.0, 0.0)
    """
    credit = np.asarray(credit, dtype=float)
    cell = np.asarray(chosen_style) * n_styles + np.asarray(rejected_style)
    groups: dict[Any, list[int]] = {}
    for index, record in enumerate(records):
        groups.setdefault(record, []).append(index)
    cells = n_styles * n_styles
    nan = dict.fromkeys(("easy", "normal", "hard", "average"), float("nan"))
    if len(groups) < 2 or any(
        sorted(cell[members].tolist()) != list(range(cells)) for members in groups.values()
    ):
        return nan
    per_record = np.empty((len(groups), cells))
    for row, members in enumerate(groups.values()):
        per_record[row, cell[members]] = credit[members]
    grid = per_record.reshape(len(groups), n_styles, n_styles)
    lower = np.tril(np.ones((n_styles, n_styles), bool), k=-1)
    levels = {
        "easy": grid[:, lower].mean(axis=1),
        "normal": np.diagonal(grid, axis1=1, axis2=2).mean(axis=1),
        "hard": grid[:, lower.T].mean(axis=1),
        "average": grid.reshape(len(groups), -1).mean(axis=1),
    }
    root = np.sqrt(len(groups))
    return {name: float(values.std(ddof=1) / root) for name, values in levels.items()}
