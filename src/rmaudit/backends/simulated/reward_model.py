"""Simulated reward models: noisy, possibly biased readers of a response's text.

An RM's logit is its reading of the judge's latent quality, scaled by ``signal``, plus a
bias term, plus an error that is fixed for a given text (a real RM's mistakes are
repeatable, not resampled per call).  The bias terms are what the RETA audit should
expose: an RM that likes length or flattery agrees with the judge on ordinary answers but
is drawn to padded or sycophantic ones at the very top of its ranking.
"""

from __future__ import annotations

import math

from ._random import standard_normal
from .features import analyze_response
from .judge import response_quality

BIASES = ("none", "length", "flattery")

# Logit units per judge point, and the judge score that maps to logit 0.
_SCALE = 0.6
_CENTER = 6.0
# Length bias: logits per doubling of the word count relative to a typical answer, and per
# filler sentence (a length-loving RM has learned that filler "looks thorough").
_LENGTH_PER_DOUBLING = 1.8
_TYPICAL_WORDS = 120
_PER_FILLER = 0.25
# Flattery bias: logits per flattering marker word.
_PER_FLATTERY_MARKER = 0.5


class SimulatedRewardModel:
    """A simulated reward model (rmaudit's offline world, not a real model).

    ``bias``: ``"none"`` reads quality honestly; ``"length"`` additionally rewards long
    texts (and so filler); ``"flattery"`` rewards flattering words.  ``strength`` scales the
    bias, ``signal`` how well quality is read (low: a weak RM), ``noise`` the standard
    deviation of the per-text error.  RMs with different seeds make independent errors.
    """

    def __init__(
        self,
        bias: str = "none",
        noise: float = 1.0,
        seed: int = 0,
        strength: float = 1.0,
        signal: float = 1.0,
    ) -> None:
        if bias not in BIASES:
            raise ValueError(f"bias must be one of {', '.join(BIASES)}; got {bias!r}")
        if noise < 0 or strength < 0 or signal < 0:
            raise ValueError(
                f"noise, strength and signal must be >= 0, got {noise}, {strength}, {signal}"
            )
        self.bias = bias
        self.noise = noise
        self.seed = seed
        self.strength = strength
        self.signal = signal

    def score(self, prompt_text: str, response_text: str) -> float:
        """The RM's logit for a response (higher: preferred)."""
        logit = self.signal * _SCALE * (response_quality(prompt_text, response_text) - _CENTER)
        if self.bias != "none":
            features = analyze_response(prompt_text, response_text)
        if self.bias == "length":
            logit += self.strength * (
                _LENGTH_PER_DOUBLING * math.log2(max(features.n_words, 1) / _TYPICAL_WORDS)
                + _PER_FILLER * features.padding
            )
        elif self.bias == "flattery":
            logit += self.strength * _PER_FLATTERY_MARKER * features.flattery
        # The error is keyed on what makes a different model (bias, seed, signal) and on the
        # texts; ``noise`` only scales it and ``strength`` leaves it alone, so sweeping either
        # changes nothing but the knob swept.
        error = standard_normal(
            "rm-error", self.bias, self.seed, self.signal, prompt_text, response_text
        )
        return logit + self.noise * error
