"""The simulated judge oracle: a 1-10 score per sample, like an LLM judge asked repeatedly.

The judge's latent view of a response is :func:`judged_quality` of its text features —
substance dominates; padding, hedging, drift and refusal are penalised; flattery is
slightly negative.  Each sample adds the judge's noise and is rounded and clipped to the
1-10 scale, as an LLM's sampled integer score is.
"""

from __future__ import annotations

import functools

from ._random import Draws, standard_normal
from .features import RESPONSES_KEPT, ResponseFeatures, analyze_response

# A prompt-level leniency: some questions simply get kinder marks.  It is what the RETA
# normaliser (dividing by the prompt's mean score) exists to cancel.
_LENIENCY_SD = 0.5
# Substance sets the scale: an answer stating every key point scores 7, up to 8.3 with
# elaboration; filler costs a little per sentence, up to a cap.
_BASE = 3.0
_PER_COVERAGE = 4.0
_PER_PADDING = 0.3
_MAX_PADDING_PENALTY = 1.5
_REFUSAL_QUALITY = 1.5


def judged_quality(features: ResponseFeatures) -> float:
    """Latent quality of a response on the judge's 1-10 scale (before noise and rounding)."""
    if features.refusal:
        return _REFUSAL_QUALITY
    quality = _BASE + _PER_COVERAGE * features.coverage
    quality += min(features.elaboration, 1.0) + 0.3 * max(0.0, features.elaboration - 1.0)
    quality -= min(_PER_PADDING * features.padding, _MAX_PADDING_PENALTY)
    quality -= min(0.4 * features.hedges, 1.6)
    quality -= 0.8 * features.drift
    quality -= min(0.1 * features.flattery, 0.5)
    return quality


@functools.lru_cache(maxsize=RESPONSES_KEPT)
def response_quality(prompt_text: str, response_text: str) -> float:
    """:func:`judged_quality` of a response's text features, cached on the two texts as
    :func:`analyze_response` is: the judge and every reward model read it."""
    return judged_quality(analyze_response(prompt_text, response_text))


class SimulatedJudge:
    """A simulated LLM judge (rmaudit's offline world, not a real model).

    Scores are a pure function of ``(seed, noise, prompt_text, response_text, sample
    index)``; ``noise`` is the standard deviation of a single sample's error on the 1-10
    scale.
    """

    def __init__(self, seed: int = 0, noise: float = 1.0) -> None:
        if noise < 0:
            raise ValueError(f"noise must be >= 0, got {noise}")
        self.seed = seed
        self.noise = noise

    def sample_scores(self, prompt_text: str, response_text: str, samples: int) -> list[float]:
        """``samples`` integer-valued scores in 1..10 for one response."""
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        quality = response_quality(prompt_text, response_text)
        quality += _LENIENCY_SD * _leniency(self.seed, prompt_text)
        noise = self.noise
        return [
            float(min(10, max(1, round(quality + noise * z))))
            for z in Draws("judge", self.seed, prompt_text, response_text).normals(samples)
        ]


@functools.lru_cache(maxsize=1 << 12)
def _leniency(seed: int, prompt_text: str) -> float:
    """A prompt's leniency draw: one per prompt, not per response (a prompt has hundreds)."""
    return standard_normal("judge-leniency", seed, prompt_text)
