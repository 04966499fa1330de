"""The embedded offline world as plugins: prompts, policy, judge and reward models.

Everything here is simulated (``simulated = True``), and every output of a run that uses
it says so.  The world itself lives in :mod:`rmaudit.backends.simulated`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from rmaudit import hookimpl
from rmaudit.backends.simulated import (
    SimulatedJudge,
    SimulatedPolicy,
    SimulatedRewardModel,
    builtin_prompts,
)
from rmaudit.components import (
    ComponentOptions,
    Generation,
    Oracle,
    OracleLabel,
    Prompt,
    PromptSource,
    ReferencePolicy,
    Response,
    RewardModel,
)
from rmaudit.errors import BadInput


class SimulatedHelpfulOptions(ComponentOptions):
    topics: list[str] | None = Field(None, description="keep only these topics")


class SimulatedHelpfulPrompts(PromptSource[SimulatedHelpfulOptions]):
    """The built-in set of original helpfulness prompts (simulated world), across topics and task
    types."""

    name = "simulated-helpful"
    Options = SimulatedHelpfulOptions
    simulated = True

    def load(self) -> list[tuple[str, dict[str, Any]]]:
        records = builtin_prompts()
        if self.options.topics is not None:
            known = sorted({r["topic"] for r in records})
            unknown = [t for t in self.options.topics if t not in known]
            if unknown:
                raise BadInput(
                    f"unknown topic; known: {', '.join(known)}", field="topics", value=unknown[0]
                )
            records = [r for r in records if r["topic"] in self.options.topics]
        return [(r["text"], {k: v for k, v in r.items() if k != "text"}) for r in records]


class SimulatedPolicyOptions(ComponentOptions):
    seed: int = 0
    quality: float = Field(0.0, description="shifts the policy's average response quality")


class SimulatedPolicyComponent(ReferencePolicy[SimulatedPolicyOptions]):
    """A simulated reference policy writing real texts whose substance, padding, flattery, hedging,
    refusals and drift vary."""

    name = "simulated-policy"
    Options = SimulatedPolicyOptions
    simulated = True

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.policy = SimulatedPolicy(seed=self.options.seed, quality=self.options.quality)

    def generate(self, batch: Sequence[tuple[Prompt, int]]) -> list[Generation]:
        out = []
        for prompt, sample_index in batch:
            text, meta = self.policy.generate(prompt.text, prompt.meta, sample_index)
            out.append(Generation(text, meta))
        return out


class SimulatedJudgeOptions(ComponentOptions):
    samples: int = Field(
        10, ge=1, description="judge samples averaged per label (the paper uses 10)"
    )
    seed: int = 0
    noise: float | None = Field(
        None, ge=0, description="judge noise per sample (default: the world's)"
    )


class SimulatedJudgeComponent(Oracle[SimulatedJudgeOptions]):
    """A simulated LLM judge: 1-10 scores from the text's latent quality plus judge noise,
    averaged."""

    name = "simulated-judge"
    Options = SimulatedJudgeOptions
    simulated = True

    def __init__(self, options=None) -> None:
        super().__init__(options)
        kwargs: dict[str, Any] = {"seed": self.options.seed}
        if self.options.noise is not None:
            kwargs["noise"] = self.options.noise
        self.judge = SimulatedJudge(**kwargs)

    def calls_per_label(self) -> int:
        return self.options.samples

    def label(self, batch: Sequence[tuple[Prompt, Response]]) -> list[OracleLabel]:
        labels = []
        for prompt, response in batch:
            samples = self.judge.sample_scores(prompt.text, response.text, self.options.samples)
            labels.append(OracleLabel(score=sum(samples) / len(samples), samples=tuple(samples)))
        return labels


class SimulatedRMOptions(ComponentOptions):
    bias: Literal["none", "length", "flattery"] = "none"
    noise: float = Field(1.0, ge=0, description="scale of the RM's fixed per-text error")
    strength: float = Field(1.0, ge=0, description="weight of the bias")
    signal: float = Field(1.0, ge=0, description="how well it reads quality (low: a weak RM)")
    seed: int = 0


class SimulatedRM(RewardModel[SimulatedRMOptions]):
    """A simulated reward model that reads the text: honest-but-noisy, length-biased,
    flattery-biased or weak."""

    name = "simulated-rm"
    Options = SimulatedRMOptions
    simulated = True

    def __init__(self, options=None) -> None:
        super().__init__(options)
        o = self.options
        self.model = SimulatedRewardModel(
            bias=o.bias, noise=o.noise, seed=o.seed, strength=o.strength, signal=o.signal
        )

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        return [self.model.score(prompt.text, response.text) for prompt, response in batch]


@hookimpl
def register_prompt_sources(register):
    register(SimulatedHelpfulPrompts)


@hookimpl
def register_reference_policies(register):
    register(SimulatedPolicyComponent)


@hookimpl
def register_oracles(register):
    register(SimulatedJudgeComponent)


@hookimpl
def register_reward_models(register):
    register(SimulatedRM)
