"""Baseline reward models every RM paper compares with: response length and a random score.

A real RM that does not beat ``length`` against a length-biased judge (AlpacaEval's GPT-4
judges are, by their own authors' account: "Length-Controlled AlpacaEval", arXiv 2404.04475)
has learned little beyond length; ``random`` is the floor (RETA(η) = 1 in expectation).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from rmaudit import hookimpl
from rmaudit.components import ComponentOptions, Prompt, Response, RewardModel
from rmaudit.components.options import ModelLocation
from rmaudit.errors import BadInput


class LengthOptions(ComponentOptions):
    unit: Literal["characters", "words", "tokens"] = Field(
        "characters",
        description="characters (Unicode code points), whitespace-separated "
        "words, or tokens of `tokenizer`",
    )
    tokenizer: ModelLocation | None = Field(
        None,
        description="a Hugging Face tokenizer (hub id or folder) for unit = 'tokens'; "
        "needs pip install 'rmaudit[hf]'",
    )


class Length(RewardModel[LengthOptions]):
    """Response length as the reward: the baseline a length-biased judge rewards."""

    name = "length"
    Options = LengthOptions

    def __init__(self, options: LengthOptions | None = None) -> None:
        super().__init__(options)
        if (self.options.unit == "tokens") != (self.options.tokenizer is not None):
            raise BadInput(
                "a tokenizer goes with unit = 'tokens', and only with it",
                field="tokenizer",
                value=self.options.tokenizer,
            )
        self._tokenizer: Any = None  # a transformers tokenizer, loaded on first use

    def _tokens(self, text: str) -> int:
        if self._tokenizer is None:
            try:
                from transformers import AutoTokenizer
            except ImportError:
                raise BadInput(
                    "unit = 'tokens' needs transformers: pip install 'rmaudit[hf]'",
                    field="unit",
                    value="tokens",
                ) from None
            self._tokenizer = AutoTokenizer.from_pretrained(self.options.tokenizer)
        return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        unit = self.options.unit
        if unit == "characters":
            return [float(len(r.text)) for _, r in batch]
        if unit == "words":
            return [float(len(r.text.split())) for _, r in batch]
        return [float(self._tokens(r.text)) for _, r in batch]


class RandomOptions(ComponentOptions):
    seed: int = Field(0, ge=0, description="another seed, another random RM")


class RandomScore(RewardModel[RandomOptions]):
    """A uniform random score in [0, 1) per response, fixed by the seed and the response id."""

    name = "random"
    Options = RandomOptions

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        # a hash of (seed, response id), not a generator: the same score whatever the batch
        return [
            int.from_bytes(
                hashlib.sha256(f"{self.options.seed}:{r.id}".encode()).digest()[:8], "big"
            )
            / 2.0**64
            for _, r in batch
        ]


@hookimpl
def register_reward_models(register):
    register(Length)
    register(RandomScore)
