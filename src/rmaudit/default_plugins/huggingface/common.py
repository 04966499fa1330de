"""What the Hugging Face components share (their options: ``options``): lazy loading, once
per process, chat templates, truncation and its count, and the settings their scoring checks
are valid for; what the reward models alone share is :mod:`.reward_model`'s."""

from __future__ import annotations

import logging
from typing import Any, Generic, TypeVar

from rmaudit.backends.hf.hub import hub_access
from rmaudit.components import Prompt, Response
from rmaudit.components.keys import content_key
from rmaudit.default_plugins.huggingface.options import HFOptions, ScoringOptions, on_cuda
from rmaudit.errors import BadInput

logger = logging.getLogger(__name__)

#: Inputs per score() call on a GPU: a call tokenises ahead of the model only within itself,
#: so each call boundary idles the GPU while its first inputs are tokenised and its scores
#: copied back; a few thousand inputs per call make that rare (benchmarks/bench_scores.py).
GPU_ITEMS_PER_CALL = 4096


def items_per_call(options: ScoringOptions) -> int | None:
    """Inputs a scoring component asks each call for: ``items_per_call``, else
    GPU_ITEMS_PER_CALL on a GPU (None elsewhere: the recipe's ``batch_size``)."""
    if options.items_per_call is not None:
        return options.items_per_call
    return GPU_ITEMS_PER_CALL if on_cuda(options.device, options.device_map) else None


_HFOptionsT = TypeVar("_HFOptionsT", bound=HFOptions)
_ScoringOptionsT = TypeVar("_ScoringOptionsT", bound="ScoringOptions")


class _HFComponent(Generic[_HFOptionsT]):
    """What the Hugging Face components share: lazy loading and the choice of chat template."""

    options: _HFOptionsT

    def __init__(self, options=None) -> None:
        super().__init__(options)  # type: ignore[call-arg]
        self._loaded = False

    def _load_model(self, auto_class: Any, whole: str | None = None) -> Any:
        """The recipe's ``model`` at its ``revision``, as ``auto_class`` (a transformers
        ``AutoModelFor...``) loads it with the component's loading options, its config
        overridden as they say (``whole``: ``runtime.load_model``'s); loaded once per process
        (:meth:`_loaded_once`)."""
        from rmaudit.backends.hf import runtime

        o = self.options

        def load() -> Any:
            model = runtime.load_model(
                auto_class, o.model, revision=o.revision, options=o, field="model", whole=whole
            )
            self._override(model.config)
            return model

        return self._loaded_once(
            {"class": auto_class.__name__, "model": o.model, "revision": o.revision}, load
        )

    def _model_tokenizer(self, **loading: Any) -> Any:
        """The tokenizer of the recipe's ``model`` at its ``revision`` (``loading``: more of
        ``runtime.load_tokenizer``'s options)."""
        from rmaudit.backends.hf import runtime

        o = self.options
        return runtime.load_tokenizer(
            o.model,
            revision=o.revision,
            trust_remote_code=o.trust_remote_code,
            field="model",
            **loading,
        )

    def _loaded_once(self, what: dict[str, Any], load: Any) -> Any:
        """``load()``'s model, or the same model already loaded in this process with the
        same loading options (an audit builds a component per suite, each of which would load
        it again); kept only while a component holds it."""
        from rmaudit.backends.hf import runtime

        o = self.options
        loading = {
            name: getattr(o, name, None)
            for name in (
                "dtype",
                "device",
                "device_map",
                "attn_implementation",
                "trust_remote_code",
                "config_overrides",
                "compile",  # compiling changes the module in place
            )
        }
        return runtime.load_once(content_key("loaded model", {**loading, **what}), load)

    def _override(self, config: Any) -> None:
        """Set each of ``config_overrides`` on ``config``, every one an attribute it has."""
        for name, value in (self.options.config_overrides or {}).items():
            if not hasattr(config, name):
                raise BadInput(
                    "the model's config has no such attribute",
                    field=f"config_overrides.{name}",
                    value=value,
                )
            setattr(config, name, value)

    def _load(self) -> None:
        """Load the model(s) on first use: a plan, or a rerun with nothing to do, loads none."""
        if not self._loaded:
            self._load_models()
            self._loaded = True

    def _load_models(self) -> None:
        raise NotImplementedError

    def check_ready(self) -> None:
        """The checkpoints reachable, and the config overrides attributes of the model's
        config (read alone: the model loads only in the run)."""
        for model, revision, field in self._locations():
            hub_access(model, revision=revision, field=field)
        if self.options.config_overrides:
            try:
                config = self._config()
            except BadInput:  # loading the model says what is wrong with it
                return
            self._override(config)

    def _config(self) -> Any:
        """The model's config, read alone (no weights)."""
        from rmaudit.backends.hf import runtime

        o = self.options
        return runtime.load_config(
            o.model, revision=o.revision, trust_remote_code=o.trust_remote_code, field="model"
        )

    def _locations(self) -> list[tuple[str, str | None, str]]:
        """(model, revision, option) of every checkpoint the component loads."""
        return [(self.options.model, self.options.revision, "model")]

    def _chat_template(self, tokenizer, *, required: bool) -> tuple[bool, str | None, str]:
        """(whether a chat template applies, the template to pass to apply_chat_template —
        None for the tokenizer's own —, where it came from)."""
        if self.options.chat_template:
            return True, self.options.chat_template, "the recipe's chat template"
        if tokenizer.chat_template:
            return True, None, "the tokenizer's chat template"
        if self.options.fallback_chat_template:
            return True, self.options.fallback_chat_template, "the recipe's fallback chat template"
        if required:
            raise BadInput(
                "the tokenizer has no chat template; give one as fallback_chat_template",
                field="fallback_chat_template",
            )
        return False, None, "text pair (prompt, response); no chat template"


def tokenizer_limit(tokenizer) -> int | None:
    """The tokenizer's ``model_max_length``; None for the huge sentinel (int(1e30)) of a
    tokenizer that knows no limit."""
    return tokenizer.model_max_length if tokenizer.model_max_length < 10**9 else None


def position_limit(config) -> int | None:
    """The most positions a model of ``config`` reads (its ``max_position_embeddings``)."""
    return getattr(config.get_text_config(), "max_position_embeddings", None) or None


def _max_length(option: int | None, tokenizer, config) -> int | None:
    if option is not None:
        return option
    known = [limit for limit in (tokenizer_limit(tokenizer), position_limit(config)) if limit]
    return min(known) if known else None


def _truncate(
    ids: list[int], start: int, max_length: int | None, side: str
) -> tuple[list[int], int]:
    """Cut a sequence to ``max_length`` tokens; ``start`` (first scored position) follows the
    cut."""
    if max_length is None or len(ids) <= max_length:
        return ids, start
    if side == "left":
        dropped = len(ids) - max_length
        return ids[dropped:], max(start - dropped, 1)
    return ids[:max_length], min(start, max_length)


def scoring_settings(o: ScoringOptions) -> dict[str, Any]:
    """What a Hugging Face model's scores depend on beyond its key — batching and the device
    — and the settings in the key a scoring check's fix changes (templates by their digest):
    its scoring checks are valid for these (``CheckedModel.scoring_settings``)."""
    templates = {
        name: content_key("chat template", text) if text else None
        for name, text in (
            ("chat_template", o.chat_template),
            ("fallback_chat_template", o.fallback_chat_template),
        )
    }
    return {
        "dtype": o.dtype,
        "max_length": o.max_length,
        "truncation_side": o.truncation_side,
        **templates,
        "config_overrides": o.config_overrides,
        "device": "cuda" if on_cuda(o.device, o.device_map) else (o.device or "cpu"),
        "batch_size": o.batch_size,
        "max_batch_tokens": o.max_batch_tokens,
        "pad_to_multiple": o.pad_to_multiple,
        "packing": o.packing,
        "deterministic": o.deterministic,
        "attn_implementation": o.attn_implementation,
        "compile": o.compile,
    }


#: The first truncation's warning of a reward model (``_TruncationCount``).
INPUTS_TRUNCATED = (
    "inputs longer than max_length={max_length} tokens lose tokens on the {side}; the count "
    "is in the RM's report"
)


class _TruncationCount:
    """How many inputs this instance scored and truncated, for ``report()``; the first
    truncation is also logged, once, so a run over thousands of batches says it once
    (``warning``: what a truncation does, formatted with ``max_length`` and ``side``)."""

    def __init__(self, warning: str = INPUTS_TRUNCATED) -> None:
        self.warning = warning
        self.scored = 0
        self.truncated = 0

    def add(self, who: str, scored: int, truncated: int, max_length: int | None, side: str) -> None:
        if truncated and not self.truncated:
            logger.warning("%s: %s", who, self.warning.format(max_length=max_length, side=side))
        self.scored += scored
        self.truncated += truncated


def text_size(pair: tuple[Prompt, Response]) -> int:
    """Characters of a (prompt, response): the order inputs are tokenised in, longest first,
    before their token counts are known."""
    prompt, response = pair
    messages = prompt.meta.get("messages")
    prompt_size = (
        sum(len(str(m.get("content", ""))) for m in messages)
        if isinstance(messages, list) and all(isinstance(m, dict) for m in messages)
        else len(prompt.text)
    )
    return prompt_size + len(response.text)
