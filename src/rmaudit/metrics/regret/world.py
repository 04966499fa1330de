"""The synthetic world of the test-set design studies (:mod:`.design_studies`).

Without structure it is the Regressional Goodhart normal model of "Rethinking Reward Model
Evaluation" (Sec. 5): every response's gold reward r* ~ N(0, 1) independently, and K proxies
r_k = r* + σ_k z with independent z ~ N(0, 1).  There, responses of every prompt are alike in
distribution and a proxy errs alike on every prompt, so a test set's accuracy estimates the
same quantity whatever its shape, and the shape only changes the noise of the estimate.  Three
documented parameters add what real benchmarks have (all 0 by default):

``difficulty`` (d)
    Prompts differ in how far apart their responses are: prompt q's gold rewards are scaled by
    s_q = exp(d u_q − d²/2), u_q ~ N(0, 1) (mean 1).  On a hard prompt (small s_q) the
    responses are close in quality, so proxies and the annotator order them worse; its best-of-n
    gain is small too, so it weighs little in the NDR — which is a ratio of gains summed over
    prompts — while it counts fully in a per-prompt accuracy.
``disagreement`` (a)
    Prompts differ in how far each proxy and the gold disagree: proxy k's noise on prompt q is
    σ_k m_kq with m_kq = exp(a v_kq − a²/2), v_kq ~ N(0, 1) independent over proxies and prompts.
    A proxy is good on some prompts and bad on others, and a test set of few prompts sees only
    some of them.
``response_correlation`` (ρ)
    Responses of one prompt are correlated: a share ρ of the gold's and of each proxy noise's
    variance is common to the prompt's responses (r*_qi = s_q (√ρ c_q + √(1−ρ) g_qi), likewise
    the noise).  Rankings within a prompt see only the part that differs between responses, so ρ
    shrinks the within-prompt spread of gold and noise alike — proxies' accuracy is unchanged —
    but the annotator's own noise (β, in gold units) is not shrunk: correlated responses are
    harder to annotate.

>>> world = RegretWorld(sigmas=(0.5, 1.0, 2.0), difficulty=0.5)
>>> gold, proxies = world.draw(np.random.default_rng(0), prompts=4, responses=3)
>>> gold.shape, proxies.shape
((4, 3), (3, 4, 3))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rmaudit.errors import MetricInputError

#: Proxy noise levels of the default world: accuracies from about 0.85 down to 0.69, close
#: enough that a small test set can misorder them.
DEFAULT_SIGMAS = tuple(float(s) for s in np.linspace(0.5, 1.5, 10))


def check_sigmas(sigmas: Sequence[float]) -> np.ndarray:
    values = np.asarray(sigmas, dtype=float)
    if values.ndim != 1 or values.size < 3 or not np.all(np.isfinite(values)) or np.any(values < 0):
        raise MetricInputError(
            f"expected at least 3 finite noise levels >= 0 (one per proxy), got {list(sigmas)!r}",
            field="sigmas",
        )
    if np.unique(values).size < 2:
        raise MetricInputError(
            f"expected proxies of different noise levels (equal ones have "
            f"no regret to rank), got {list(sigmas)!r}",
            field="sigmas",
        )
    return values


@dataclass(frozen=True)
class RegretWorld:
    """Gold rewards and K noisy proxies of them, with the structure described in the module
    docstring; :meth:`draw` samples prompts of it."""

    sigmas: tuple[float, ...] = DEFAULT_SIGMAS
    difficulty: float = 0.0
    disagreement: float = 0.0
    response_correlation: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigmas", tuple(check_sigmas(self.sigmas).tolist()))
        for name in ("difficulty", "disagreement"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise MetricInputError(
                    f"expected a log-scale spread >= 0, got {value!r}", field=name
                )
        if not 0.0 <= self.response_correlation < 1.0:
            raise MetricInputError(
                f"expected a correlation in [0, 1), got {self.response_correlation!r}",
                field="response_correlation",
            )

    @property
    def structured(self) -> bool:
        return bool(self.difficulty or self.disagreement or self.response_correlation)

    def draw(
        self, rng: np.random.Generator, prompts: int, responses: int, *batch: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Gold (*batch, prompts, responses) and proxies (*batch, K, prompts, responses).

        Without structure the draws are those of the plain normal model, in the same order
        (gold, then every proxy's noise), so adding structure changes only its own terms.
        """
        shape = (*batch, prompts, responses)
        sigmas = np.asarray(self.sigmas)
        gold = self._correlated(rng, shape)
        noise = rng.normal(size=(*batch, sigmas.size, prompts, responses))
        if self.response_correlation:
            shared = rng.normal(size=(*batch, sigmas.size, prompts, 1))
            noise = (
                np.sqrt(self.response_correlation) * shared
                + np.sqrt(1.0 - self.response_correlation) * noise
            )
        scale = sigmas[:, None, None]
        if self.difficulty:
            gold = gold * _mean_one_lognormal(rng, self.difficulty, (*batch, prompts, 1))
        if self.disagreement:
            scale = scale * _mean_one_lognormal(
                rng, self.disagreement, (*batch, sigmas.size, prompts, 1)
            )
        proxies = gold[..., None, :, :] + scale * noise
        return gold, proxies

    def _correlated(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        values = rng.normal(size=shape)
        if not self.response_correlation:
            return values
        common = rng.normal(size=(*shape[:-1], 1))
        return (
            np.sqrt(self.response_correlation) * common
            + np.sqrt(1.0 - self.response_correlation) * values
        )


def _mean_one_lognormal(
    rng: np.random.Generator, spread: float, shape: tuple[int, ...]
) -> np.ndarray:
    return np.exp(spread * rng.normal(size=shape) - spread**2 / 2.0)
