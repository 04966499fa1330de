"""hf-prm-step-tag: a causal LM process reward model read at the tag it writes after each
step (Math-Shepherd's convention)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from rmaudit.backends.hf import steps
from rmaudit.default_plugins.huggingface.process import (
    ProcessScoringOptions,
    _HFProcessRewardModel,
    after_question_field,
    format_field,
)
from rmaudit.errors import BadInput


class HFPRMStepTagOptions(ProcessScoringOptions):
    step_tag: str = Field(
        "ки",
        min_length=1,
        description="written after each step; the model's next-token logits at it are "
        "read; one token of the tokenizer's vocabulary",
    )
    good_token: str = Field("+", min_length=1, description="the token a correct step predicts")
    bad_token: str = Field("-", min_length=1, description="the token a wrong step predicts")
    before_tag: str = Field(" ", description="text between a step and its tag")
    after_tag: str = Field("\n", description="text between a tag and the next step")
    format: Literal["chat", "plain"] = format_field("plain")
    after_question: str = after_question_field(" ")

    @model_validator(mode="after")
    def _two_tokens(self):
        if self.good_token == self.bad_token:
            raise ValueError("good_token and bad_token must differ")
        return self


class HFPRMStepTag(_HFProcessRewardModel[HFPRMStepTagOptions]):
    """A Hugging Face causal-LM process reward model: a step's score is P(good token) against
    P(bad token), renormalised over the two, predicted at the tag written after it
    (Math-Shepherd's convention: "ки" after every step, "+" against "-")."""

    name = "hf-prm-step-tag"
    Options = HFPRMStepTagOptions
    marker_option = "step_tag"
    score_column = 0  # of the columns (good, bad)

    def _layout(self, chat: bool, template: str | None) -> steps.StepLayout:
        o = self.options
        return steps.StepLayout(
            o.step_tag,
            before_marker=o.before_tag,
            after_marker=o.after_tag,
            after_question=o.after_question,
            chat=chat,
            template=template,
            system_prompt=o.system_prompt,
            pieces=o.tokenize == "pieces",
        )

    def _vocabulary_columns(self) -> list[int]:
        o = self.options
        good = steps.marker_id(self.tokenizer, o.good_token, field="good_token")
        bad = steps.marker_id(self.tokenizer, o.bad_token, field="bad_token")
        if good == bad:
            raise BadInput(
                "good_token and bad_token are the same token of the vocabulary",
                field="bad_token",
                value=o.bad_token,
            )
        return [good, bad]

    def _load_scoring_model(self) -> Any:
        import transformers

        return self._load_model(transformers.AutoModelForCausalLM)
