"""hf-causal-lm: a Hugging Face causal LM as the reference policy."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import Field

from rmaudit.backends.conversation import prompt_messages, user_turns
from rmaudit.components import Generation, Prompt, ReferencePolicy
from rmaudit.components.options import OPERATIONAL
from rmaudit.default_plugins.huggingface.common import HFOptions, _HFComponent
from rmaudit.errors import BadInput

#: Rows per generate call unless batch_size says otherwise.
CPU_GENERATE_ROWS = 8
GPU_GENERATE_ROWS = 64


class HFCausalLMOptions(HFOptions):
    temperature: float = Field(1.0, ge=0, description="0: greedy")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus sampling mass")
    max_new_tokens: int = Field(256, ge=1)
    seed: int = Field(
        0, description="sample i of a prompt is drawn from a generator seeded by (seed, prompt, i)"
    )
    share_prefill: Annotated[bool, OPERATIONAL] = Field(
        True,
        description="run a prompt once for all its samples in a batch and copy its cache to each",
    )


class HFCausalLM(_HFComponent[HFCausalLMOptions], ReferencePolicy[HFCausalLMOptions]):
    """A Hugging Face causal LM as the reference policy: N samples per prompt through its chat
    template, with the generation settings and the response's perplexity in each response's meta
    (for a multi-turn prompt, the last answer's, and every turn's in ``turn_perplexities``)."""

    name = "hf-causal-lm"
    Options = HFCausalLMOptions

    def _load_models(self) -> None:
        import transformers

        from rmaudit.backends.hf import runtime

        self.tokenizer = self._model_tokenizer()
        _, self.template, _ = self._chat_template(self.tokenizer, required=True)
        self.model = self._load_model(transformers.AutoModelForCausalLM)
        self.pad_id = runtime.filler_token_id(self.tokenizer)
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        self.eos_ids = [] if eos is None else ([eos] if isinstance(eos, int) else list(eos))

    def _prompt_ids(self, messages: list[dict[str, str]], prompt: Prompt) -> list[int]:
        from rmaudit.backends.hf.runtime import render_chat

        text = render_chat(self.tokenizer, self.template, messages, add_generation_prompt=True)
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if not ids:
            raise BadInput(
                "the chat template renders this prompt as no tokens",
                field="prompt",
                value=prompt.text,
            )
        return ids

    def _sample(self, prompts: list[list[int]], seeds: list[int]) -> list[list[int]]:
        """New token ids for each prompt, generated in length-bucketed batches (a prompt's
        samples, sorted together, share one batch where they fit)."""
        from rmaudit.backends.hf import sampling
        from rmaudit.backends.hf.batching import length_buckets
        from rmaudit.backends.hf.runtime import model_device

        o = self.options
        rows = o.batch_size or (
            GPU_GENERATE_ROWS if model_device(self.model).type == "cuda" else CPU_GENERATE_ROWS
        )
        new_tokens: list[list[int]] = [[] for _ in prompts]
        lengths = [len(p) + o.max_new_tokens for p in prompts]
        for bucket in length_buckets(lengths, batch_size=rows, max_batch_tokens=o.max_batch_tokens):
            for i, tokens in zip(
                bucket,
                sampling.generate(
                    self.model,
                    [prompts[i] for i in bucket],
                    [seeds[i] for i in bucket],
                    pad_id=self.pad_id,
                    eos_ids=self.eos_ids,
                    temperature=o.temperature,
                    top_p=o.top_p,
                    max_new_tokens=o.max_new_tokens,
                    share_prefill=o.share_prefill,
                ),
                strict=True,
            ):
                new_tokens[i] = tokens
        return new_tokens

    def _answer_facts(self, prompt_ids: list[int], tokens: list[int]) -> dict[str, Any]:
        """Length, finish reason, log-probability and perplexity of one answer under the model
        (its own distribution, whatever the sampling temperature: PPL_θ(a|q) of RETA Sec. 4.3)."""
        from rmaudit.backends.hf.runtime import sequence_logprobs

        # one sequence per pass: stored perplexities are then bit-identical whatever batch the
        # response was generated in (a padded batch changes the last float bits)
        logprobs = sequence_logprobs(self.model, prompt_ids + tokens, len(prompt_ids))
        return {
            "new_tokens": len(tokens),
            "finish_reason": "stop" if tokens[-1] in self.eos_ids else "length",
            "logprob": float(logprobs.sum()),
            "perplexity": float(math.exp(-logprobs.mean())),
        }

    def generate(self, batch: Sequence[tuple[Prompt, int]]) -> list[Generation]:
        from rmaudit.backends.hf.sampling import item_seed

        self._load()
        o = self.options
        # a multi-turn prompt (meta "turns") is answered turn by turn, each answer joining the
        # conversation the next turn continues (rmaudit.backends.conversation's convention)
        turns = [user_turns(prompt) for prompt, _ in batch]
        conversations = [
            [] if t else prompt_messages(prompt)
            for (prompt, _), t in zip(batch, turns, strict=True)
        ]
        answers: list[list[tuple[str, dict[str, Any]]]] = [[] for _ in batch]
        for turn in range(max(len(t) if t else 1 for t in turns)):
            active = [i for i, t in enumerate(turns) if turn < (len(t) if t else 1)]
            for i in active:
                if asked := turns[i]:
                    conversations[i].append({"role": "user", "content": asked[turn]})
            prompts = [self._prompt_ids(conversations[i], batch[i][0]) for i in active]
            seeds = [item_seed(o.seed, batch[i][0].id, batch[i][1], turn) for i in active]
            for i, prompt_ids, tokens in zip(
                active, prompts, self._sample(prompts, seeds), strict=True
            ):
                text = self.tokenizer.decode(tokens, skip_special_tokens=True)
                conversations[i].append({"role": "assistant", "content": text})
                answers[i].append((text, self._answer_facts(prompt_ids, tokens)))
        settings = {
            "model": o.model,
            "revision": o.revision,
            "temperature": o.temperature,
            "top_p": o.top_p,
            "max_new_tokens": o.max_new_tokens,
            "seed": o.seed,
        }
        out = []
        for prompt_turns, answered in zip(turns, answers, strict=True):
            text, facts = answered[-1]  # the facts are the last answer's, as the text is
            meta = {**settings, **facts}
            if prompt_turns:
                meta["turns"] = [answer for answer, _ in answered]
                # per turn, PPL_θ(a_t | q_1, a_1, ..., q_t): the perplexity of the whole
                # conversation's answers is exp(-Σ turn_logprobs / Σ turn_new_tokens)
                for key, name in (
                    ("turn_perplexities", "perplexity"),
                    ("turn_logprobs", "logprob"),
                    ("turn_new_tokens", "new_tokens"),
                ):
                    meta[key] = [turn_facts[name] for _, turn_facts in answered]
            out.append(Generation(text, meta))
        return out
