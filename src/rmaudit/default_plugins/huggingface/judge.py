"""``hf-judge-rm``: a local Hugging Face causal LM as a judge under audit (``hf`` extra;
docs/judges.md).  No sampling: the judge prompt is rendered (the chat template with its
generation prompt, else the messages' text), ``[[`` is appended as the start of its reply, and
the verdict is read from the next-token distribution — P(A), P(B), P(C) renormalised over the
three (pairwise), or the expected rating over the tokens 1 … 9 (rating).  Each showing is run
alone, so its verdict depends on no other input, whatever the batch size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rmaudit.backends.judging.verdict_options import VerdictTemplateOptions
from rmaudit.backends.judging.verdicts import VerdictTemplate
from rmaudit.components import PairShown, PairVerdict, Prompt, Response, RewardModel
from rmaudit.default_plugins.huggingface.common import HFOptions, _HFComponent
from rmaudit.errors import BadInput

_LETTERS = {"A": "first", "B": "second", "C": "tie"}
_RATINGS = tuple(range(1, 10))  # one token each in any tokenizer with digits


class HFJudgeOptions(VerdictTemplateOptions, HFOptions):
    """The causal LM's options and the judge's mode and template."""


class HFJudgeRM(_HFComponent, RewardModel):
    """A local Hugging Face causal LM as a judge: its verdict read from the next token after
    ``[[``."""

    name = "hf-judge-rm"
    Options = HFJudgeOptions
    options: HFJudgeOptions

    def __init__(self, options: HFJudgeOptions | None = None) -> None:
        super().__init__(options)
        self.template: VerdictTemplate = self.options.verdict_template

    def judges_pairs(self) -> bool:
        return self.options.mode == "pairwise"

    def _load_models(self) -> None:
        import transformers

        self.tokenizer = self._model_tokenizer()
        self.chat, self.chat_template, _ = self._chat_template(self.tokenizer, required=False)
        self.model = self._load_model(transformers.AutoModelForCausalLM)
        self.model.eval()
        answers = _LETTERS if self.judges_pairs() else [str(r) for r in _RATINGS]
        self.answer_ids = [self._single_token(a) for a in answers]

    def _single_token(self, text: str) -> int:
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        if len(ids) != 1:
            raise BadInput(
                f"the tokenizer writes {text!r} as {len(ids)} tokens; a judge's verdict must "
                "be one token",
                field="model",
                value=self.options.model,
            )
        return int(ids[0])

    def _next_token(self, messages: list[dict[str, str]]) -> np.ndarray:
        """P of each answer token after the rendered prompt and ``[[``, renormalised."""
        import torch

        from rmaudit.backends.hf import runtime

        if self.chat:
            text = runtime.render_chat(
                self.tokenizer, self.chat_template, messages, add_generation_prompt=True
            )
        else:
            text = "\n\n".join(m["content"] for m in messages) + "\n\n"
        ids = self.tokenizer.encode(text + "[[", add_special_tokens=not self.chat)
        with torch.inference_mode():
            inputs = torch.tensor([ids], device=runtime.model_device(self.model))
            logits = self.model(inputs, use_cache=False).logits[0, -1].float()
            chosen = logits[self.answer_ids].double().softmax(-1)
        return chosen.cpu().numpy()

    def judge_pairs(self, batch: Sequence[PairShown]) -> list[PairVerdict]:
        self._load()
        verdicts = []
        for shown in batch:
            p = self._next_token(
                self.template.messages(
                    question=shown.prompt.text.strip(),
                    answer_a=shown.first.text,
                    answer_b=shown.second.text,
                )
            )
            letter = list(_LETTERS)[int(np.argmax(p))]
            verdicts.append(
                PairVerdict(
                    _LETTERS[letter],  # type: ignore[arg-type]
                    float(p[0] + 0.5 * p[2]),
                    f"[[{letter}]]",
                    from_logprobs=True,
                )
            )
        return verdicts

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        if self.judges_pairs():
            raise BadInput("a pairwise judge scores pairs, not responses", field="mode")
        self._load()
        ratings = np.array(_RATINGS, float)
        return [
            float(
                ratings @ self._next_token(self.template.messages(question=p.text, answer=r.text))
            )
            for p, r in batch
        ]
