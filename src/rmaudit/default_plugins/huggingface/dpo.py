"""dpo-implicit: a DPO model's implicit reward, from token log-probabilities."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from rmaudit.backends.conversation import conversation_messages
from rmaudit.components import Prompt, Response
from rmaudit.components.options import ModelLocation
from rmaudit.default_plugins.huggingface.common import (
    ScoringOptions,
    _max_length,
    _truncate,
    text_size,
)
from rmaudit.default_plugins.huggingface.reward_model import _HFRewardModel
from rmaudit.errors import BadInput


class DPOImplicitOptions(ScoringOptions):
    reference: ModelLocation | None = Field(
        None, description="reference model (hub id or folder); none: reference-free"
    )
    reference_revision: str | None = None
    aggregate: Literal["sum", "mean"] = Field(
        "sum", description="over response tokens: 'sum' is DPO's reward, 'mean' length-normalises"
    )
    beta: float = Field(1.0, gt=0, description="scale of the reward (DPO's β)")


class DPOImplicit(_HFRewardModel[DPOImplicitOptions]):
    """A DPO model's implicit reward β·(log π(y|x) − log π_ref(y|x)) over response tokens, or
    reference-free log π(y|x) (sum or mean over tokens), as RewardBench scores DPO models."""

    name = "dpo-implicit"
    Options = DPOImplicitOptions

    def _locations(self) -> list[tuple[str, str | None, str]]:
        o = self.options
        reference = (
            [] if o.reference is None else [(o.reference, o.reference_revision, "reference")]
        )
        return super()._locations() + reference

    def _load_tokenizer(self) -> None:
        o = self.options
        self.tokenizer = self._model_tokenizer()
        self.use_chat, self.template, self.input_format = self._chat_template(
            self.tokenizer, required=True
        )
        config = self._config()
        self._override(config)  # as the policy's will be
        self.max_length = _max_length(o.max_length, self.tokenizer, config)

    def _load_weights(self) -> None:
        import transformers

        from rmaudit.backends.hf import runtime
        from rmaudit.backends.hf.scorer import Scorer

        o = self.options
        self.policy = self._load_model(transformers.AutoModelForCausalLM)
        self.reference = None
        if o.reference is not None:
            reference_tokenizer = runtime.load_tokenizer(
                o.reference,
                revision=o.reference_revision,
                trust_remote_code=o.trust_remote_code,
                field="reference",
            )
            if reference_tokenizer.get_vocab() != self.tokenizer.get_vocab():
                raise BadInput(
                    "the reference model's tokenizer differs from the model's; the "
                    "log-ratio needs both to read the same tokens",
                    field="reference",
                    value=o.reference,
                )
            self.reference = self._loaded_once(
                {
                    "class": "AutoModelForCausalLM",
                    "model": o.reference,
                    "revision": o.reference_revision,
                    "config_overrides": None,  # the policy's alone
                },
                lambda: runtime.load_model(
                    transformers.AutoModelForCausalLM,
                    o.reference,
                    revision=o.reference_revision,
                    options=o,
                    field="reference",
                ),
            )
        filler = runtime.filler_token_id(self.tokenizer)
        self.scorers = [
            Scorer(model, o, kind="logprobs", max_length=self.max_length, filler_id=filler)
            for model in (self.policy, self.reference)
            if model is not None
        ]

    def encode(self, prompt: Prompt, response: Response) -> tuple[list[int], int, bool]:
        """Token ids of the whole conversation, the index of its first response token, and
        whether it was truncated."""
        return self.encode_many([(prompt, response)])[0]

    def encode_many(
        self, pairs: Sequence[tuple[Prompt, Response]]
    ) -> list[tuple[list[int], int, bool]]:
        """:meth:`encode` of each pair, from batched tokenizer calls.

        The response (the conversation's last message) starts where the conversation's
        tokens stop matching those of everything before it rendered with the generation
        prompt; a token that merges across that boundary counts as response, and so do the
        tokens the template closes the turn with (EOS), which the model also generated.
        """
        from rmaudit.backends.hf.runtime import render_chat

        if not pairs:
            return []

        def ids(conversations, add_generation_prompt: bool) -> list[list[int]]:
            texts = [
                render_chat(
                    self.tokenizer,
                    self.template,
                    messages,
                    add_generation_prompt=add_generation_prompt,
                )
                for messages in conversations
            ]
            return self.tokenizer(texts, add_special_tokens=False)["input_ids"]

        conversations = [conversation_messages(p, r) for p, r in pairs]
        out = []
        for prompt_ids, full_ids in zip(
            ids([c[:-1] for c in conversations], True), ids(conversations, False), strict=True
        ):
            start = 0
            while (
                start < min(len(prompt_ids), len(full_ids)) and prompt_ids[start] == full_ids[start]
            ):
                start += 1
            start = max(start, 1)  # the first token has nothing to be predicted from
            cut, start = _truncate(
                list(full_ids), start, self.max_length, self.options.truncation_side
            )
            out.append((cut, start, len(cut) < len(full_ids)))
        return out

    def scored_ids(self, pairs: Sequence[tuple[Prompt, Response]]) -> list[list[int]]:
        return [ids for ids, _, _ in self.encode_many(pairs)]

    def _scores(
        self,
        batch: Sequence[tuple[Prompt, Response]],
        *,
        alone: bool,
        encoded: list[Any] | None = None,
    ) -> tuple[list[float], int]:
        from rmaudit.backends.hf.inputs import ModelInput

        rows: dict[int, ModelInput] = {}
        truncated = 0

        def encode(indices: list[int]) -> list[ModelInput]:
            nonlocal truncated
            missing = [i for i in indices if i not in rows]
            made = (
                [encoded[i] for i in missing]
                if encoded is not None
                else self.encode_many([batch[i] for i in missing])
            )
            for i, (ids, start, cut) in zip(missing, made, strict=True):
                rows[i] = ModelInput(ids, start=start)
                truncated += cut
            return [rows[i] for i in indices]

        order = sorted(range(len(batch)), key=lambda i: (-text_size(batch[i]), i))
        reduce = np.sum if self.options.aggregate == "sum" else np.mean
        totals = []
        for scorer in self.scorers:  # the policy, then the reference (same rows)
            logprobs = scorer.run(order, encode, alone=alone)
            totals.append(
                np.array(
                    [reduce(logprobs[i]) if logprobs[i].size else 0.0 for i in range(len(batch))]
                )
            )
        scores = totals[0] - totals[1] if len(totals) == 2 else totals[0]
        return [float(self.options.beta * s) for s in scores], truncated

    def _model_report(self) -> dict[str, Any]:
        return {
            "reference": self.options.reference or "none (reference-free)",
            **self.scorers[0].report(),
        }
