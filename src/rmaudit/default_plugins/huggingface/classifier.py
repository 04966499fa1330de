"""hf-classifier: a Hugging Face sequence-classification reward model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, model_validator

from rmaudit.backends.conversation import conversation_messages
from rmaudit.components import Prompt, Response
from rmaudit.default_plugins.huggingface.common import ScoringOptions, _max_length, text_size
from rmaudit.default_plugins.huggingface.reward_model import _HFRewardModel
from rmaudit.errors import BadInput


class HFClassifierOptions(ScoringOptions):
    head_aggregate: Literal["mean", "first", "index"] = Field(
        "mean", description="how the heads of a multi-head RM become one score"
    )
    head_index: int | None = Field(
        None, ge=0, description="the head used by head_aggregate = 'index'"
    )

    @model_validator(mode="after")
    def _index_with_index(self):
        if (self.head_aggregate == "index") != (self.head_index is not None):
            raise ValueError("head_index goes with head_aggregate = 'index', and only with it")
        return self


class HFClassifier(_HFRewardModel[HFClassifierOptions]):
    """A Hugging Face sequence-classification reward model (hub id or local folder); multi-head
    RMs are reduced by head_aggregate (mean by default, as the RETA paper's RM5H)."""

    name = "hf-classifier"
    Options = HFClassifierOptions

    def _load_tokenizer(self) -> None:
        o = self.options
        self.tokenizer = self._model_tokenizer(truncation_side=o.truncation_side)
        config = self._config()
        self._override(config)  # as the model's will be
        heads = config.num_labels
        if o.head_index is not None and o.head_index >= heads:
            raise BadInput(
                f"the model has {heads} heads (0..{heads - 1})",
                field="head_index",
                value=o.head_index,
            )
        self.max_length = _max_length(o.max_length, self.tokenizer, config)
        self.use_chat, self.template, self.input_format = self._chat_template(
            self.tokenizer, required=False
        )
        self.input_names = ["input_ids"] + (
            ["token_type_ids"] if "token_type_ids" in self.tokenizer.model_input_names else []
        )

    def _load_weights(self) -> None:
        import transformers

        from rmaudit.backends.hf import runtime
        from rmaudit.backends.hf.scorer import Scorer

        o = self.options
        self.model = self._load_model(transformers.AutoModelForSequenceClassification)
        self.scorers = [
            Scorer(
                self.model,
                o,
                kind="classifier",
                max_length=self.max_length,
                filler_id=runtime.filler_token_id(self.tokenizer),
            )
        ]

    @property
    def scorer(self):
        """The model's scorer (one; a DPO RM has two)."""
        return self.scorers[0]

    def encode(self, prompt: Prompt, response: Response) -> tuple[dict[str, list[int]], bool]:
        """Model inputs for one (prompt, response), and whether they were truncated."""
        return self.encode_many([(prompt, response)])[0]

    def encode_many(
        self, pairs: Sequence[tuple[Prompt, Response]]
    ) -> list[tuple[dict[str, list[int]], bool]]:
        """Model inputs for each (prompt, response), and whether they were truncated, from
        batched tokenizer calls.

        With a chat template the whole conversation (``rmaudit.backends.conversation``: a dialogue
        prompt's messages, or the prompt as one user message, then the response) is rendered
        and tokenised without adding special tokens — the template writes them, as
        ``apply_chat_template`` does.  Without one the texts are encoded as the pair
        (prompt, response), the convention of cross-encoder RMs.
        """
        from rmaudit.backends.hf.runtime import render_chat

        if not pairs:
            return []
        if self.use_chat:
            texts = [
                render_chat(
                    self.tokenizer,
                    self.template,
                    conversation_messages(p, r),
                    add_generation_prompt=False,
                )
                for p, r in pairs
            ]

            def tokenize(chosen: list[int], **kwargs):
                return self.tokenizer(
                    [texts[i] for i in chosen], add_special_tokens=False, **kwargs
                )
        else:

            def tokenize(chosen: list[int], **kwargs):
                return self.tokenizer(
                    [pairs[i][0].text for i in chosen], [pairs[i][1].text for i in chosen], **kwargs
                )

        everything = list(range(len(pairs)))
        encoded = tokenize(everything)
        rows = [{name: list(encoded[name][i]) for name in self.input_names} for i in everything]
        too_long = [
            i
            for i in everything
            if self.max_length is not None and len(rows[i]["input_ids"]) > self.max_length
        ]
        if too_long:  # the tokenizer's truncation keeps a pair's special tokens in place
            cut = tokenize(too_long, truncation=True, max_length=self.max_length)
            for j, i in enumerate(too_long):
                rows[i] = {name: list(cut[name][j]) for name in self.input_names}
        cut_set = set(too_long)
        return [(row, i in cut_set) for i, row in enumerate(rows)]

    def scored_ids(self, pairs: Sequence[tuple[Prompt, Response]]) -> list[list[int]]:
        return [encoded["input_ids"] for encoded, _ in self.encode_many(pairs)]

    def _row(self, encoded: dict[str, list[int]]):
        """The engine's row: a decoder classifier reads the rightmost token that is not the
        checkpoint's pad id (transformers' pooling; the last token where it names none)."""
        from rmaudit.backends.hf.inputs import ModelInput

        ids = encoded["input_ids"]
        pad = self.model.config.get_text_config().pad_token_id
        pool_at = len(ids) - 1
        if pad is not None:
            pool_at = next((j for j in range(len(ids) - 1, -1, -1) if ids[j] != pad), 0)
        return ModelInput(ids, encoded.get("token_type_ids"), pool_at=pool_at)

    def _scores(
        self,
        batch: Sequence[tuple[Prompt, Response]],
        *,
        alone: bool,
        encoded: list[Any] | None = None,
    ) -> tuple[list[float], int]:
        truncated = 0

        def encode(indices: list[int]):
            nonlocal truncated
            made = (
                [encoded[i] for i in indices]
                if encoded is not None
                else self.encode_many([batch[i] for i in indices])
            )
            truncated += sum(cut for _, cut in made)
            return [self._row(e) for e, _ in made]

        order = sorted(range(len(batch)), key=lambda i: (-text_size(batch[i]), i))
        logits = self.scorer.run(order, encode, alone=alone)
        return [self._head_score(logits[i][0]) for i in range(len(batch))], truncated

    def _head_score(self, row) -> float:
        """One input's logits (a row per head) as its score, by ``head_aggregate``."""
        if self.options.head_aggregate == "mean":
            return float(row.mean())
        return float(row[self.options.head_index or 0])

    def own_forward_scores(self, pairs: Sequence[tuple[Prompt, Response]]) -> list[float] | None:
        """Each pair's score through the model's own forward and pooling, alone; None where
        the scorer runs the model's own forward anyway (nothing is bypassed)."""
        if not self.scorer.bypasses_forward:
            return None
        import torch

        from rmaudit.backends.hf.runtime import model_device

        device = model_device(self.model)
        scores = []
        with torch.inference_mode():
            for encoded, _ in self.encode_many(pairs):
                inputs = {name: torch.tensor([ids], device=device) for name, ids in encoded.items()}
                logits = self.model(**inputs).logits[0]
                scores.append(self._head_score(logits.float().cpu().numpy()))
        return scores

    def _model_report(self) -> dict[str, Any]:
        return {"heads": self.model.config.num_labels, **self.scorer.report()}
