"""Input checks shared by the metric functions (docs/metrics.md).

Every check raises :class:`~rmaudit.errors.MetricInputError` with a message of the form
"expected …, got …", ``field`` set to the parameter at fault and ``prompt_index`` set when a
single prompt is at fault (the message then starts with "prompt <index>:" too, so the one-line
CLI message names it).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from rmaudit.errors import MetricInputError

Pools = list[np.ndarray]


def check_pools(oracle: Any, scores: Any, *, min_responses: int = 2) -> tuple[Pools, Pools]:
    """Validate per-prompt oracle and RM scores; return them as lists of 1-D float arrays.

    Each prompt must hold the same number of oracle and RM scores, at least
    ``min_responses`` of them, all finite.
    """
    oracle_pools = _as_pools(oracle, "oracle")
    score_pools = _as_pools(scores, "scores")
    if len(oracle_pools) != len(score_pools):
        raise MetricInputError(
            f"expected one score array per prompt ({len(oracle_pools)} prompts in oracle), "
            f"got {len(score_pools)}",
            field="scores",
        )
    for q, (judged, scored) in enumerate(zip(oracle_pools, score_pools, strict=True)):
        if judged.size != scored.size:
            raise MetricInputError(
                f"prompt {q}: expected as many RM scores as oracle scores ({judged.size}), "
                f"got {scored.size}",
                field="scores",
                prompt_index=q,
            )
        if judged.size < min_responses:
            raise MetricInputError(
                f"prompt {q}: expected at least {min_responses} responses, got {judged.size}",
                field="oracle",
                prompt_index=q,
            )
    return oracle_pools, score_pools


def check_ordered_pools(oracle: Any, scores: Any, *, name: str = "oracle") -> tuple[Pools, Pools]:
    """:func:`check_pools`, and on every prompt at least two different ``name`` scores (the
    oracle's; the regret study's gold): a prompt whose scores are all equal has no pair to
    compare."""
    oracle_pools, score_pools = check_pools(oracle, scores)
    for q, pool in enumerate(oracle_pools):
        if np.all(pool == pool[0]):
            raise MetricInputError(
                f"prompt {q}: expected at least two different {name} scores (a pair to "
                f"compare), got all {pool.size} equal to {pool[0]:g}",
                field=name,
                prompt_index=q,
            )
    return oracle_pools, score_pools


def _as_pools(pools: Any, field: str) -> Pools:
    if isinstance(pools, (str, bytes)) or not isinstance(pools, Iterable):
        raise MetricInputError(
            f"expected a sequence of 1-D arrays (one per prompt), got {type(pools).__name__}",
            field=field,
        )
    items = list(pools)
    if not items:
        raise MetricInputError("expected at least one prompt, got none", field=field)
    return [_as_pool(item, field, q) for q, item in enumerate(items)]


def _as_pool(item: Any, field: str, q: int) -> np.ndarray:
    try:
        raw = np.asarray(item)
    except ValueError as exc:  # ragged nested lists
        raise MetricInputError(
            f"prompt {q}: expected a 1-D array of numbers, got {type(item).__name__} ({exc})",
            field=field,
            prompt_index=q,
        ) from None
    if raw.dtype.kind not in "biuf":
        raise MetricInputError(
            f"prompt {q}: expected real numbers, got values of dtype {raw.dtype}",
            field=field,
            prompt_index=q,
        )
    if raw.ndim != 1:
        raise MetricInputError(
            f"prompt {q}: expected a 1-D array of scores (one per response), "
            f"got an array of shape {raw.shape}",
            field=field,
            prompt_index=q,
        )
    pool = raw.astype(float, copy=False)
    not_finite = ~np.isfinite(pool)
    if not_finite.any():
        i = int(np.argmax(not_finite))
        raise MetricInputError(
            f"prompt {q}: expected finite scores, got {pool[i]} at response {i}",
            field=field,
            prompt_index=q,
        )
    return pool


def check_positive_means(oracle_pools: Pools) -> np.ndarray:
    """Per-prompt mean oracle scores, which must be positive to serve as RETA's normaliser."""
    means = np.array([pool.mean() for pool in oracle_pools])
    bad = np.flatnonzero(means <= 0)
    if bad.size:
        q = int(bad[0])
        raise MetricInputError(
            f"prompt {q}: expected a positive mean oracle score (the RETA normaliser), "
            f"got {means[q]:.6g}; shift the oracle scale or pass normalize=False",
            field="oracle",
            prompt_index=q,
        )
    return means


def check_integer(value: Any, field: str, *, minimum: int) -> int:
    """An integer (Python or numpy, not bool) no smaller than ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise MetricInputError(f"expected an integer >= {minimum}, got {value!r}", field=field)
    if value < minimum:
        raise MetricInputError(f"expected an integer >= {minimum}, got {value}", field=field)
    return int(value)


def check_integers(values: Any, field: str, *, minimum: int) -> np.ndarray:
    """A non-empty 1-D sequence of integers, each no smaller than ``minimum``."""
    items = _as_sequence(values, field, "integers")
    return np.array([check_integer(v, field, minimum=minimum) for v in items], dtype=np.int64)


def check_subset_size(n: int, pool_sizes: Sequence[int], field: str = "n") -> None:
    """Subset sizes cannot exceed any prompt's number of responses."""
    too_small = [q for q, size in enumerate(pool_sizes) if size < n]
    if too_small:
        q = too_small[0]
        raise MetricInputError(
            f"prompt {q}: expected {field} <= the prompt's number of responses "
            f"({pool_sizes[q]}), got {field}={n}",
            field=field,
            prompt_index=q,
        )


def check_fraction(value: Any, field: str) -> float:
    """A real number strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise MetricInputError(
            f"expected a number strictly between 0 and 1, got {value!r}", field=field
        )
    number = float(value)
    if not 0.0 < number < 1.0:  # also rejects NaN
        raise MetricInputError(
            f"expected a number strictly between 0 and 1, got {number}", field=field
        )
    return number


def check_fractions(values: Any, field: str) -> np.ndarray:
    """A non-empty 1-D sequence of reals strictly between 0 and 1."""
    items = _as_sequence(values, field, "numbers strictly between 0 and 1")
    return np.array([check_fraction(v, field) for v in items])


def _as_sequence(values: Any, field: str, what: str) -> list[Any]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise MetricInputError(
            f"expected a sequence of {what}, got {type(values).__name__}", field=field
        )
    items = list(values)
    if not items:
        raise MetricInputError(f"expected a non-empty sequence of {what}, got none", field=field)
    nested = [v for v in items if np.ndim(v) != 0]
    if nested:
        raise MetricInputError(
            f"expected a flat sequence of {what}, got a nested value {nested[0]!r}", field=field
        )
    return items


def check_choice(value: Any, choices: Sequence[str], field: str) -> str:
    """One of a fixed set of option strings."""
    if not isinstance(value, str) or value not in choices:
        listed = " or ".join(repr(c) for c in choices)
        raise MetricInputError(f"expected {listed}, got {value!r}", field=field)
    return value


def check_flag(value: Any, field: str) -> bool:
    """A bool (numpy bools included): guards against e.g. normalize="no" being truthy."""
    if not isinstance(value, (bool, np.bool_)):
        raise MetricInputError(f"expected True or False, got {value!r}", field=field)
    return bool(value)
