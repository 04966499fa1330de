"""Input checks shared by the preference-pair metrics: pair scores, tie credit, subset labels."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any, TypeVar

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._validation import check_choice

ArrayLike = Sequence[float] | np.ndarray

#: A pair's label (a subset, a cluster): any hashable value, kept as given.
LabelT = TypeVar("LabelT", bound=Hashable)

TIE_CREDIT = {"loss": 0.0, "half": 0.5}
#: the credit of an RM tie when a metric's options do not say: a loss, as RewardBench counts it
DEFAULT_TIES = "loss"


def check_scores(values: Any, field_name: str) -> np.ndarray:
    """A non-empty 1-D array of finite real scores."""
    if isinstance(values, (str, bytes)):
        raise MetricInputError(
            f"expected a 1-D array of scores, got {type(values).__name__}", field=field_name
        )
    try:
        raw = np.asarray(values)
    except ValueError as exc:  # ragged nested lists
        raise MetricInputError(
            f"expected a 1-D array of scores, got a ragged sequence ({exc})", field=field_name
        ) from None
    if raw.dtype.kind not in "biuf":
        raise MetricInputError(
            f"expected real numbers, got values of dtype {raw.dtype}", field=field_name
        )
    if raw.ndim != 1:
        raise MetricInputError(
            f"expected a 1-D array of scores, got an array of shape {raw.shape}", field=field_name
        )
    if raw.size == 0:
        raise MetricInputError("expected at least one score, got none", field=field_name)
    array = raw.astype(float, copy=False)
    not_finite = ~np.isfinite(array)
    if not_finite.any():
        i = int(np.argmax(not_finite))
        raise MetricInputError(
            f"expected finite scores, got {array[i]} at index {i}", field=field_name
        )
    return array


def check_pair_scores(chosen: Any, rejected: Any) -> tuple[np.ndarray, np.ndarray]:
    """Chosen and rejected scores as float arrays of one length."""
    chosen_scores = check_scores(chosen, "chosen")
    rejected_scores = check_scores(rejected, "rejected")
    if chosen_scores.size != rejected_scores.size:
        raise MetricInputError(
            f"expected one rejected score per chosen score ({chosen_scores.size}), "
            f"got {rejected_scores.size}",
            field="rejected",
        )
    return chosen_scores, rejected_scores


def tie_credit(ties: Any) -> float:
    return TIE_CREDIT[check_choice(ties, tuple(TIE_CREDIT), "ties")]


def check_labels(values: Iterable[LabelT], size: int, field_name: str) -> list[LabelT]:
    if isinstance(values, (str, bytes)):
        raise MetricInputError(
            f"expected one label per pair, got a {type(values).__name__}", field=field_name
        )
    labels = list(values)
    if len(labels) != size:
        raise MetricInputError(
            f"expected one label per pair ({size}), got {len(labels)}", field=field_name
        )
    return labels
