"""hf-prm-classifier: a token-classification process reward model read at the separator it
writes after each step (Qwen2.5-Math-PRM's convention)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from rmaudit.backends.hf import steps
from rmaudit.default_plugins.huggingface.process import (
    ProcessScoringOptions,
    _HFProcessRewardModel,
    system_prompt_field,
)
from rmaudit.errors import BadInput

#: The system message Qwen2.5-Math-PRM's model card writes before the question.
QWEN_MATH_SYSTEM_PROMPT = "Please reason step by step, and put your final answer within \\boxed{}."

#: What a checkpoint whose head is not a standard token classifier's needs.
CUSTOM_HEAD = (
    "a checkpoint with its own head class (Qwen2.5-Math-PRM) loads with "
    "model_class = 'auto-model' and trust_remote_code = true"
)


class HFPRMClassifierOptions(ProcessScoringOptions):
    separator: str = Field(
        "<extra_0>",
        min_length=1,
        description="written after each step, where the step's score is read; one token "
        "of the tokenizer's vocabulary",
    )
    positive_label: int = Field(
        1, ge=0, description="the class whose probability at a separator is the step's score"
    )
    model_class: Literal["auto", "token-classification", "auto-model"] = Field(
        "auto",
        description="'token-classification': AutoModelForTokenClassification (every "
        "...ForTokenClassification, TRL's PRMs); 'auto-model': AutoModel, for a checkpoint "
        "whose own code adds the head (Qwen2.5-Math-PRM, with trust_remote_code); 'auto': "
        "AutoModel where the checkpoint's config maps AutoModel, and no token "
        "classifier, to its own code, else AutoModelForTokenClassification",
    )
    system_prompt: str = system_prompt_field(QWEN_MATH_SYSTEM_PROMPT)


class HFPRMClassifier(_HFProcessRewardModel[HFPRMClassifierOptions]):
    """A Hugging Face token-classification process reward model: a step's score is the
    probability of the positive class at the separator written after it (Qwen2.5-Math-PRM's
    convention: <extra_0> after every step, in the chat template)."""

    name = "hf-prm-classifier"
    Options = HFPRMClassifierOptions
    marker_option = "separator"

    def _layout(self, chat: bool, template: str | None) -> steps.StepLayout:
        o = self.options
        return steps.StepLayout(
            o.separator,
            after_question=o.after_question,
            chat=chat,
            template=template,
            system_prompt=o.system_prompt,
            pieces=o.tokenize == "pieces",
        )

    def _load_scoring_model(self) -> Any:
        import torch
        import transformers

        from rmaudit.backends.hf import runtime

        o = self.options
        auto = (
            transformers.AutoModel
            if self._own_head()
            else transformers.AutoModelForTokenClassification
        )
        model = self._load_model(auto, whole=CUSTOM_HEAD)
        # one forward pass on the separator alone: what the head gives per token
        with torch.inference_mode():
            probe = torch.tensor([[min(self.accepted)]], device=runtime.model_device(model))
            logits = getattr(model(probe), "logits", None)
        if (
            (logits is None or logits.dim() != 3)
            and not o.trust_remote_code
            and (getattr(model.config, "auto_map", None))
        ):
            raise BadInput(
                "the checkpoint's head is in its own code (its config's auto_map), which "
                "runs only with trust_remote_code = true: without it the base model loads "
                "alone, with no per-token class logits",
                field="trust_remote_code",
                value=False,
            )
        if logits is None or logits.dim() != 3:
            raise BadInput(
                "the model gives no per-token class logits (a model without a token "
                f"classification head); {CUSTOM_HEAD}",
                field="model_class",
                value=o.model_class,
            )
        labels = logits.shape[-1]
        if labels < 2 or o.positive_label >= labels:
            raise BadInput(
                f"the model's head has {labels} classes per token; a step's score is the "
                "probability of one of two or more",
                field="positive_label",
                value=o.positive_label,
            )
        self.score_column = o.positive_label
        return model

    def _own_head(self) -> bool:
        """Whether the model loads as AutoModel: asked for, or (model_class 'auto') its
        config maps AutoModel, and no token classifier, to the checkpoint's own code."""
        o = self.options
        if o.model_class != "auto":
            return o.model_class == "auto-model"
        import transformers

        from rmaudit.backends.hf.hub import hub_access

        access = hub_access(o.model, revision=o.revision, field="model")
        try:
            config, _ = transformers.PretrainedConfig.get_config_dict(
                o.model, revision=o.revision, **access
            )
        except (OSError, ValueError):  # loading the model says what is wrong with it
            return False
        mapped = config.get("auto_map") or {}
        return "AutoModel" in mapped and "AutoModelForTokenClassification" not in mapped
