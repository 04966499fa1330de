"""Hugging Face components: sequence-classifier RMs, DPO implicit RMs and a causal-LM policy.

They need the ``hf`` extra (torch, transformers).  Nothing here imports either at module
import — ``rmaudit plugins`` and the main audit work without them — and a component loads
its model on first use, so ``rmaudit run --dry-run`` on a recipe naming a 7B hub model
loads nothing.  ``trust_remote_code`` is passed to every ``from_pretrained`` call and is
off unless the recipe turns it on.
"""

from __future__ import annotations

import logging
import math
from typing import Annotated, Any, Literal, Sequence

import numpy as np
from pydantic import Field, model_validator

from rmaudit import hookimpl
from rmaudit.components import (ComponentOptions, Generation, Prompt, ReferencePolicy, Response,
                                RewardModel)
from rmaudit.conversation import conversation_messages, prompt_messages, user_turns
from rmaudit.errors import BadInput
from rmaudit.options import OPERATIONAL, ModelLocation

logger = logging.getLogger(__name__)


class HFOptions(ComponentOptions):
    """Where and how fast a model runs (device, device_map, batch sizes) is OPERATIONAL:
    changing it does not make stored scores or responses look stale."""

    model: ModelLocation = Field(min_length=1, description="hub id or local folder")
    revision: str | None = Field(None, description="hub branch, tag or commit (pin it: scores are "
                                                   "keyed by the options, not by the weights)")
    dtype: Literal["auto", "float32", "float16", "bfloat16"] = Field(
        "auto", description="'auto': the checkpoint's own dtype")
    device: Annotated[str | None, OPERATIONAL] = Field(
        None, description="cpu, cuda, cuda:1, mps; default: cuda, else mps, else cpu")
    device_map: Annotated[str | dict[str, int | str] | None, OPERATIONAL] = Field(
        None, description="passed to from_pretrained (needs accelerate); excludes device")
    attn_implementation: str | None = Field(None, description="eager, sdpa, flash_attention_2, ...")
    trust_remote_code: bool = Field(False, description="run the checkpoint's own Python code")
    fallback_chat_template: str | None = Field(
        None, description="Jinja chat template used only when the tokenizer defines none")
    batch_size: Annotated[int, OPERATIONAL] = Field(
        8, ge=1, description="most sequences per forward pass")
    max_batch_tokens: Annotated[int | None, OPERATIONAL] = Field(
        None, ge=1, description="most padded tokens per pass")

    @model_validator(mode="after")
    def _one_placement(self):
        if self.device is not None and self.device_map is not None:
            raise ValueError("give device or device_map, not both")
        return self


class ScoringOptions(HFOptions):
    max_length: int | None = Field(None, ge=2, description="tokens per input; default: the "
                                                            "model's limit")
    truncation_side: Literal["left", "right"] = Field(
        "left", description="where over-long inputs lose tokens; 'left' keeps the response's end")


class _HFComponent:
    """What the Hugging Face components share: lazy loading, the batching options, and the
    choice of chat template."""

    options: HFOptions

    def __init__(self, options=None) -> None:
        super().__init__(options)  # type: ignore[call-arg]
        self._loaded = False

    def _load(self) -> None:
        """Load the model(s) on first use: a plan, or a rerun with nothing to do, loads none."""
        if not self._loaded:
            self._load_models()
            self._loaded = True

    def _load_models(self) -> None:
        raise NotImplementedError

    def _batching(self) -> dict[str, Any]:
        return {"batch_size": self.options.batch_size,
                "max_batch_tokens": self.options.max_batch_tokens}

    def _chat_template(self, tokenizer, *, required: bool) -> tuple[bool, str | None, str]:
        """(whether a chat template applies, the template to pass to apply_chat_template —
        None for the tokenizer's own —, where it came from)."""
        if tokenizer.chat_template:
            return True, None, "the tokenizer's chat template"
        if self.options.fallback_chat_template:
            return True, self.options.fallback_chat_template, "the recipe's fallback chat template"
        if required:
            raise BadInput("the tokenizer has no chat template; give one as fallback_chat_template",
                           field="fallback_chat_template")
        return False, None, "text pair (prompt, response); no chat template"


def _max_length(option: int | None, tokenizer, model) -> int | None:
    if option is not None:
        return option
    # tokenizers without a known limit report a huge sentinel (int(1e30))
    limits = [tokenizer.model_max_length if tokenizer.model_max_length < 10**9 else None,
              getattr(model.config.get_text_config(), "max_position_embeddings", None)]
    known = [limit for limit in limits if limit]
    return min(known) if known else None


def _truncate(ids: list[int], start: int, max_length: int | None, side: str) -> tuple[list[int], int]:
    """Cut a sequence to ``max_length`` tokens; ``start`` (first scored position) follows the cut."""
    if max_length is None or len(ids) <= max_length:
        return ids, start
    if side == "left":
        dropped = len(ids) - max_length
        return ids[dropped:], max(start - dropped, 1)
    return ids[:max_length], min(start, max_length)


class _TruncationCount:
    """How many inputs this instance scored and truncated, for ``report()``; the first
    truncation is also logged, once, so a run over thousands of batches says it once."""

    def __init__(self) -> None:
        self.scored = 0
        self.truncated = 0

    def add(self, who: str, scored: int, truncated: int, max_length: int | None, side: str) -> None:
        if truncated and not self.truncated:
            logger.warning("%s: inputs longer than max_length=%s tokens lose tokens on the %s; "
                           "the count is in the RM's report", who, max_length, side)
        self.scored += scored
        self.truncated += truncated


class _HFRewardModel(_HFComponent, RewardModel):
    """What the Hugging Face RMs share: a count of truncated inputs, reported after a run."""

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.truncation = _TruncationCount()

    def report(self) -> dict[str, Any]:
        if not self._loaded:
            return {}
        return {"inputs scored": self.truncation.scored,
                "inputs truncated": self.truncation.truncated, "max_length": self.max_length,
                "truncation side": self.options.truncation_side, "input format": self.input_format,
                **self._model_report()}

    def _model_report(self) -> dict[str, Any]:
        """Facts specific to this kind of RM, added to the report."""
        raise NotImplementedError


class HFClassifierOptions(ScoringOptions):
    head_aggregate: Literal["mean", "first", "index"] = Field(
        "mean", description="how the heads of a multi-head RM become one score")
    head_index: int | None = Field(None, ge=0, description="the head used by head_aggregate = 'index'")

    @model_validator(mode="after")
    def _index_with_index(self):
        if (self.head_aggregate == "index") != (self.head_index is not None):
            raise ValueError("head_index goes with head_aggregate = 'index', and only with it")
        return self


class HFClassifier(_HFRewardModel):
    """A Hugging Face sequence-classification reward model (hub id or local folder); multi-head
    RMs are reduced by head_aggregate (mean by default, as the RETA paper's RM5H)."""

    name = "hf-classifier"
    Options = HFClassifierOptions

    def _load_models(self) -> None:
        import transformers

        from rmaudit.hf import runtime

        o = self.options
        self.tokenizer = runtime.load_tokenizer(o.model, revision=o.revision,
                                                trust_remote_code=o.trust_remote_code,
                                                field="model", truncation_side=o.truncation_side)
        self.model = runtime.load_model(transformers.AutoModelForSequenceClassification, o.model,
                                        revision=o.revision, options=o, field="model")
        heads = self.model.config.num_labels
        if o.head_index is not None and o.head_index >= heads:
            raise BadInput(f"the model has {heads} heads (0..{heads - 1})", field="head_index",
                           value=o.head_index)
        self.max_length = _max_length(o.max_length, self.tokenizer, self.model)
        self.use_chat, self.template, self.input_format = self._chat_template(self.tokenizer,
                                                                              required=False)
        self.input_names = ["input_ids"] + (
            ["token_type_ids"] if "token_type_ids" in self.tokenizer.model_input_names else [])

    def encode(self, prompt: Prompt, response: Response) -> tuple[dict[str, list[int]], bool]:
        """Model inputs for one (prompt, response), and whether they were truncated.

        With a chat template the whole conversation (``rmaudit.conversation``: a dialogue
        prompt's messages, or the prompt as one user message, then the response) is rendered
        and tokenised without adding special tokens — the template writes them, as
        ``apply_chat_template`` does.  Without one the texts are encoded as the pair
        (prompt, response), the convention of cross-encoder RMs.
        """
        from rmaudit.hf.runtime import render_chat

        if self.use_chat:
            text = render_chat(self.tokenizer, self.template, conversation_messages(prompt, response),
                               add_generation_prompt=False)

            def tokenize(**kwargs):
                return self.tokenizer(text, add_special_tokens=False, **kwargs)
        else:
            def tokenize(**kwargs):
                return self.tokenizer(prompt.text, response.text, **kwargs)
        encoded = tokenize()
        truncated = self.max_length is not None and len(encoded["input_ids"]) > self.max_length
        if truncated:  # the tokenizer's truncation keeps a pair's special tokens in place
            encoded = tokenize(truncation=True, max_length=self.max_length)
        return {name: list(encoded[name]) for name in self.input_names}, truncated

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        from rmaudit.hf.runtime import classifier_logits

        self._load()
        encoded = [self.encode(p, r) for p, r in batch]
        logits = classifier_logits(self.model, [e for e, _ in encoded], **self._batching())
        self.truncation.add(f"{self.name} {self.options.model}", len(batch),
                            sum(t for _, t in encoded), self.max_length,
                            self.options.truncation_side)
        if self.options.head_aggregate == "mean":
            combined = logits.mean(axis=1)
        else:
            combined = logits[:, self.options.head_index if self.options.head_index is not None else 0]
        return [float(v) for v in combined]

    def _model_report(self) -> dict[str, Any]:
        return {"heads": self.model.config.num_labels}


class DPOImplicitOptions(ScoringOptions):
    reference: ModelLocation | None = Field(None, description="reference model (hub id or "
                                                              "folder); none: reference-free")
    reference_revision: str | None = None
    aggregate: Literal["sum", "mean"] = Field(
        "sum", description="over response tokens: 'sum' is DPO's reward, 'mean' length-normalises")
    beta: float = Field(1.0, gt=0, description="scale of the reward (DPO's β)")


class DPOImplicit(_HFRewardModel):
    """A DPO model's implicit reward β·(log π(y|x) − log π_ref(y|x)) over response tokens, or
    reference-free log π(y|x) (sum or mean over tokens), as RewardBench scores DPO models."""

    name = "dpo-implicit"
    Options = DPOImplicitOptions

    def _load_models(self) -> None:
        import transformers

        from rmaudit.hf import runtime

        o = self.options
        self.tokenizer = runtime.load_tokenizer(o.model, revision=o.revision,
                                                trust_remote_code=o.trust_remote_code, field="model")
        _, self.template, self.input_format = self._chat_template(self.tokenizer, required=True)
        self.policy = runtime.load_model(transformers.AutoModelForCausalLM, o.model,
                                         revision=o.revision, options=o, field="model")
        self.reference = None
        if o.reference is not None:
            reference_tokenizer = runtime.load_tokenizer(
                o.reference, revision=o.reference_revision,
                trust_remote_code=o.trust_remote_code, field="reference")
            if reference_tokenizer.get_vocab() != self.tokenizer.get_vocab():
                raise BadInput("the reference model's tokenizer differs from the model's; the "
                               "log-ratio needs both to read the same tokens", field="reference",
                               value=o.reference)
            self.reference = runtime.load_model(transformers.AutoModelForCausalLM, o.reference,
                                                revision=o.reference_revision, options=o,
                                                field="reference")
        self.pad_id = runtime.filler_token_id(self.tokenizer)
        self.max_length = _max_length(o.max_length, self.tokenizer, self.policy)

    def encode(self, prompt: Prompt, response: Response) -> tuple[list[int], int, bool]:
        """Token ids of the whole conversation, the index of its first response token, and
        whether it was truncated.

        The response (the conversation's last message) starts where the conversation's
        tokens stop matching those of everything before it rendered with the generation
        prompt; a token that merges across that boundary counts as response, and so do the
        tokens the template closes the turn with (EOS), which the model also generated.
        """
        from rmaudit.hf.runtime import render_chat

        def ids(messages, add_generation_prompt: bool) -> list[int]:
            text = render_chat(self.tokenizer, self.template, messages,
                               add_generation_prompt=add_generation_prompt)
            return self.tokenizer(text, add_special_tokens=False)["input_ids"]

        messages = conversation_messages(prompt, response)
        prompt_ids = ids(messages[:-1], True)
        full_ids = ids(messages, False)
        start = 0
        while start < min(len(prompt_ids), len(full_ids)) and prompt_ids[start] == full_ids[start]:
            start += 1
        start = max(start, 1)  # the first token has nothing to be predicted from
        cut, start = _truncate(full_ids, start, self.max_length, self.options.truncation_side)
        return cut, start, len(cut) < len(full_ids)

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        from rmaudit.hf.runtime import token_logprobs

        self._load()
        encoded = [self.encode(p, r) for p, r in batch]
        sequences, starts = [e[0] for e in encoded], [e[1] for e in encoded]
        reduce = np.sum if self.options.aggregate == "sum" else np.mean
        scores = np.array([reduce(lp) if lp.size else 0.0 for lp in token_logprobs(
            self.policy, sequences, starts, pad_id=self.pad_id, **self._batching())])
        if self.reference is not None:
            scores -= np.array([reduce(lp) if lp.size else 0.0 for lp in token_logprobs(
                self.reference, sequences, starts, pad_id=self.pad_id, **self._batching())])
        self.truncation.add(f"{self.name} {self.options.model}", len(batch),
                            sum(e[2] for e in encoded), self.max_length,
                            self.options.truncation_side)
        return [float(self.options.beta * s) for s in scores]

    def _model_report(self) -> dict[str, Any]:
        return {"reference": self.options.reference or "none (reference-free)"}


class HFCausalLMOptions(HFOptions):
    temperature: float = Field(1.0, ge=0, description="0: greedy")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus sampling mass")
    max_new_tokens: int = Field(256, ge=1)
    seed: int = Field(0, description="sample i of a prompt is drawn from a generator seeded by "
                                     "(seed, prompt, i)")


class HFCausalLM(_HFComponent, ReferencePolicy):
    """A Hugging Face causal LM as the reference policy: N samples per prompt through its chat
    template, with the generation settings and the response's perplexity in each response's meta
    (for a multi-turn prompt, the last answer's, and every turn's in ``turn_perplexities``)."""

    name = "hf-causal-lm"
    Options = HFCausalLMOptions

    def _load_models(self) -> None:
        import transformers

        from rmaudit.hf import runtime

        o = self.options
        self.tokenizer = runtime.load_tokenizer(o.model, revision=o.revision,
                                                trust_remote_code=o.trust_remote_code, field="model")
        _, self.template, _ = self._chat_template(self.tokenizer, required=True)
        self.model = runtime.load_model(transformers.AutoModelForCausalLM, o.model,
                                        revision=o.revision, options=o, field="model")
        self.pad_id = runtime.filler_token_id(self.tokenizer)
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        self.eos_ids = [] if eos is None else ([eos] if isinstance(eos, int) else list(eos))

    def _prompt_ids(self, messages: list[dict[str, str]], prompt: Prompt) -> list[int]:
        from rmaudit.hf.runtime import render_chat

        text = render_chat(self.tokenizer, self.template, messages, add_generation_prompt=True)
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if not ids:
            raise BadInput("the chat template renders this prompt as no tokens", field="prompt",
                           value=prompt.text)
        return ids

    def _sample(self, prompts: list[list[int]], seeds: list[int]) -> list[list[int]]:
        """New token ids for each prompt, generated in length-bucketed batches."""
        from rmaudit.hf import sampling
        from rmaudit.hf.batching import length_buckets

        o = self.options
        new_tokens: list[list[int]] = [[] for _ in prompts]
        lengths = [len(p) + o.max_new_tokens for p in prompts]
        for bucket in length_buckets(lengths, **self._batching()):
            for i, tokens in zip(bucket, sampling.generate(
                    self.model, [prompts[i] for i in bucket], [seeds[i] for i in bucket],
                    pad_id=self.pad_id, eos_ids=self.eos_ids, temperature=o.temperature,
                    top_p=o.top_p, max_new_tokens=o.max_new_tokens)):
                new_tokens[i] = tokens
        return new_tokens

    def _answer_facts(self, prompt_ids: list[int], tokens: list[int]) -> dict[str, Any]:
        """Length, finish reason, log-probability and perplexity of one answer under the model
        (its own distribution, whatever the sampling temperature: PPL_θ(a|q) of RETA Sec. 4.3)."""
        from rmaudit.hf.runtime import token_logprobs

        # one sequence per pass: stored perplexities are then bit-identical whatever batch the
        # response was generated in (a padded batch changes the last float bits)
        logprobs = token_logprobs(self.model, [prompt_ids + tokens], [len(prompt_ids)],
                                  pad_id=self.pad_id, batch_size=1, max_batch_tokens=None)[0]
        return {"new_tokens": len(tokens),
                "finish_reason": "stop" if tokens[-1] in self.eos_ids else "length",
                "logprob": float(logprobs.sum()),
                "perplexity": float(math.exp(-logprobs.mean()))}

    def generate(self, batch: Sequence[tuple[Prompt, int]]) -> list[Generation]:
        from rmaudit.hf.sampling import item_seed

        self._load()
        o = self.options
        # a multi-turn prompt (meta "turns") is answered turn by turn, each answer joining the
        # conversation the next turn continues (rmaudit.conversation's convention)
        turns = [user_turns(prompt) for prompt, _ in batch]
        conversations = [[] if t else prompt_messages(prompt) for (prompt, _), t in zip(batch, turns)]
        answers: list[list[tuple[str, dict[str, Any]]]] = [[] for _ in batch]
        for turn in range(max(len(t) if t else 1 for t in turns)):
            active = [i for i, t in enumerate(turns) if turn < (len(t) if t else 1)]
            for i in active:
                if turns[i]:
                    conversations[i].append({"role": "user", "content": turns[i][turn]})
            prompts = [self._prompt_ids(conversations[i], batch[i][0]) for i in active]
            seeds = [item_seed(o.seed, batch[i][0].id, batch[i][1], turn) for i in active]
            for i, prompt_ids, tokens in zip(active, prompts, self._sample(prompts, seeds)):
                text = self.tokenizer.decode(tokens, skip_special_tokens=True)
                conversations[i].append({"role": "assistant", "content": text})
                answers[i].append((text, self._answer_facts(prompt_ids, tokens)))
        settings = {"model": o.model, "revision": o.revision, "temperature": o.temperature,
                    "top_p": o.top_p, "max_new_tokens": o.max_new_tokens, "seed": o.seed}
        out = []
        for prompt_turns, answered in zip(turns, answers):
            text, facts = answered[-1]  # the facts are the last answer's, as the text is
            meta = {**settings, **facts}
            if prompt_turns:
                meta["turns"] = [answer for answer, _ in answered]
                # per turn, PPL_θ(a_t | q_1, a_1, ..., q_t): the perplexity of the whole
                # conversation's answers is exp(-Σ turn_logprobs / Σ turn_new_tokens)
                for key, name in (("turn_perplexities", "perplexity"), ("turn_logprobs", "logprob"),
                                  ("turn_new_tokens", "new_tokens")):
                    meta[key] = [turn_facts[name] for _, turn_facts in answered]
            out.append(Generation(text, meta))
        return out


@hookimpl
def register_reward_models(register):
    register(HFClassifier)
    register(DPOImplicit)


@hookimpl
def register_reference_policies(register):
    register(HFCausalLM)
