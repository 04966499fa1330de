"""Result containers: a metric's mean over prompts with its uncertainty across prompts.

Uncertainty is across prompts, the benchmark's sampling unit: the standard error is
``std(per_prompt, ddof=1) / sqrt(Q)`` (0.0 for a single prompt) and the confidence interval is
a percentile bootstrap that resamples prompts with replacement, seeded through
``np.random.default_rng(seed)`` so that reruns report the same interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rmaudit.metrics._validation import check_fraction, check_integer


def _frozen(values: np.ndarray, dtype: type | None = float) -> np.ndarray:
    array = np.array(values, dtype=dtype)
    array.flags.writeable = False
    return array


def _summarise(
    per_prompt: np.ndarray, *, ci: float, bootstrap: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mean, standard error and bootstrap interval of each row of a (points × prompts) array.

    Every row is resampled with the same prompt draws, so the intervals of a curve's points are
    those one would get from each point alone with the same seed.
    """
    ci = check_fraction(ci, "ci")
    bootstrap = check_integer(bootstrap, "bootstrap", minimum=1)
    seed = check_integer(seed, "seed", minimum=0)
    n_prompts = per_prompt.shape[1]
    value = per_prompt.mean(axis=1)
    if n_prompts == 1:
        stderr = np.zeros_like(value)
    else:
        stderr = per_prompt.std(axis=1, ddof=1) / np.sqrt(n_prompts)
    resample_means = per_prompt @ _resample_counts(n_prompts, bootstrap, seed) / n_prompts
    tail = 100.0 * (1.0 - ci) / 2.0
    low, high = np.percentile(resample_means, [tail, 100.0 - tail], axis=1)
    return value, stderr, low, high


@lru_cache(maxsize=8)
def _resample_counts(n_prompts: int, bootstrap: int, seed: int) -> np.ndarray:
    """How often each of the ``bootstrap`` resamples draws each prompt: a (Q × bootstrap)
    read-only array.  Counting turns every resample mean into one matrix product, with memory
    of bootstrap × Q rather than points × bootstrap × Q; the draws depend on Q, the count and
    the seed alone, so every metric of a run over the same prompts shares them (drawn once:
    drawing and counting them cost more than the products)."""
    draws = np.random.default_rng(seed).integers(0, n_prompts, size=(bootstrap, n_prompts))
    offsets = n_prompts * np.arange(bootstrap)[:, None]
    counts = np.bincount((draws + offsets).ravel(), minlength=bootstrap * n_prompts)
    found = counts.reshape(bootstrap, n_prompts).T
    found.flags.writeable = False
    return found


@dataclass(frozen=True, eq=False)
class MetricResult:
    """One metric value: the mean over prompts, its standard error, CI and per-prompt values.

    ``eq=False``: results hold arrays, whose ``==`` is elementwise; compare fields instead.
    """

    value: float
    stderr: float
    ci_low: float
    ci_high: float
    per_prompt: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "per_prompt", _frozen(self.per_prompt))

    @classmethod
    def from_per_prompt(
        cls, per_prompt: np.ndarray, *, ci: float = 0.95, bootstrap: int = 1000, seed: int = 0
    ) -> MetricResult:
        """Summarise per-prompt values (shape (Q,)) into a result.

        >>> r = MetricResult.from_per_prompt(np.array([1.0, 2.0, 3.0]))
        >>> float(r.value), float(r.stderr)
        (2.0, 0.5773502691896258)
        """
        values = np.asarray(per_prompt, dtype=float)
        value, stderr, low, high = _summarise(
            values[None, :], ci=ci, bootstrap=bootstrap, seed=seed
        )
        return cls(float(value[0]), float(stderr[0]), float(low[0]), float(high[0]), values)


@dataclass(frozen=True, eq=False)
class CurveResult:
    """A metric over a grid ``x`` (η values or subset sizes n); arrays are indexed like ``x``.

    ``per_prompt`` has shape (len(x), Q).
    """

    x: np.ndarray
    value: np.ndarray
    stderr: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    per_prompt: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "x", _frozen(self.x, dtype=None))  # keeps integer n grids
        for name in ("value", "stderr", "ci_low", "ci_high", "per_prompt"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    @classmethod
    def from_per_prompt(
        cls,
        x: np.ndarray,
        per_prompt: np.ndarray,
        *,
        ci: float = 0.95,
        bootstrap: int = 1000,
        seed: int = 0,
    ) -> CurveResult:
        """Summarise a (len(x), Q) array of per-prompt values into a curve."""
        values = np.asarray(per_prompt, dtype=float)
        value, stderr, low, high = _summarise(values, ci=ci, bootstrap=bootstrap, seed=seed)
        return cls(np.asarray(x), value, stderr, low, high, values)

    def point(self, i: int) -> MetricResult:
        """The curve's i-th point as a :class:`MetricResult`."""
        return MetricResult(
            float(self.value[i]),
            float(self.stderr[i]),
            float(self.ci_low[i]),
            float(self.ci_high[i]),
            self.per_prompt[i],
        )
