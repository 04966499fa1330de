"""What the Hugging Face components share: options, lazy loading, chat templates,
truncation, the RMs' report (truncation, batching) and their measured batch dependence."""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Sequence
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import Field, model_validator

from rmaudit.backends.hf.hub import hub_access
from rmaudit.components import ComponentOptions, Prompt, Response, RewardModel
from rmaudit.components.options import NEW_OPTION, OPERATIONAL, ModelLocation
from rmaudit.components.scoring_checks import ScoringCheck, ScoringChecks
from rmaudit.errors import BadInput

logger = logging.getLogger(__name__)

#: Inputs per score() call on a GPU: a call tokenises ahead of the model only within itself,
#: so each call boundary idles the GPU while its first inputs are tokenised and its scores
#: copied back; a few thousand inputs per call make that rare (benchmarks/bench_scores.py).
GPU_ITEMS_PER_CALL = 4096


def _on_cuda(device: str | None, device_map: Any) -> bool:
    """Whether the model will run on a CUDA GPU: the device given, else whether torch (if
    installed) sees one."""
    if device is not None:
        return device.startswith("cuda")
    if device_map == "cpu" or importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


class HFOptions(ComponentOptions):
    """Where and how fast a model runs (device, batch sizes, padding, packing, compilation,
    prefetching) is OPERATIONAL: changing it does not make stored scores or responses look
    stale; the dtype and deterministic mode change what is computed, so they are identity."""

    model: ModelLocation = Field(min_length=1, description="hub id or local folder")
    revision: str | None = Field(
        None,
        description="hub branch, tag or commit (pin it: scores are "
        "keyed by the options, not by the weights)",
    )
    dtype: Literal["auto", "float32", "float16", "bfloat16"] | None = Field(
        None,
        description="'auto': the checkpoint's own dtype; default: bfloat16 on a CUDA GPU, "
        "else 'auto' (decided when the recipe is read, so the key records it)",
    )
    device: Annotated[str | None, OPERATIONAL] = Field(
        None, description="cpu, cuda, cuda:1, mps; default: cuda, else mps, else cpu"
    )
    device_map: Annotated[str | dict[str, int | str] | None, OPERATIONAL] = Field(
        None, description="passed to from_pretrained (needs accelerate); excludes device"
    )
    attn_implementation: str | None = Field(
        None,
        description="eager, sdpa, flash_attention_2, flex_attention, ...; default: "
        "flash_attention_2 on a GPU in half precision where flash-attn is "
        "installed, else transformers' choice (sdpa where supported)",
    )
    trust_remote_code: bool = Field(False, description="run the checkpoint's own Python code")
    fallback_chat_template: str | None = Field(
        None, description="Jinja chat template used only when the tokenizer defines none"
    )
    batch_size: Annotated[int | None, OPERATIONAL] = Field(
        None,
        ge=1,
        description="most sequences per forward pass; "
        "default: 8 on CPU, on a GPU as many as max_batch_tokens allows",
    )
    max_batch_tokens: Annotated[int | None, OPERATIONAL] = Field(
        None,
        ge=1,
        description="most tokens a forward pass computes, padding included; default: "
        "none on CPU, on a GPU 32768 or what free memory holds if less",
    )

    @model_validator(mode="after")
    def _one_placement(self):
        if self.device is not None and self.device_map is not None:
            raise ValueError("give device or device_map, not both")
        if self.dtype is None:
            self.dtype = "bfloat16" if _on_cuda(self.device, self.device_map) else "auto"
        return self


class ScoringOptions(HFOptions):
    """What the scoring components add to where a model runs: the tokens an input keeps, the
    shapes and packing of batches, compilation, prefetching, the inputs per call and the
    batch dependence a run without the scoring checks measures."""

    max_length: int | None = Field(
        None, ge=2, description="tokens per input; default: the model's limit"
    )
    truncation_side: Literal["left", "right"] = Field(
        "left", description="where over-long inputs lose tokens; 'left' keeps the response's end"
    )
    pad_to_multiple: Annotated[int | None, OPERATIONAL] = Field(
        None,
        ge=1,
        description="round padded widths up to a multiple, so few batch shapes need "
        "kernels chosen or compiled; default: 64 on a GPU, 1 on CPU",
    )
    packing: Annotated[bool | None, OPERATIONAL] = Field(
        None,
        description="score sequences packed end to end without padding, where the model "
        "passes a check that packing leaves its outputs unchanged; default: "
        "on where the attention skips the work between sequences "
        "(flash_attention_2, flex_attention)",
    )
    deterministic: Annotated[bool, NEW_OPTION] = Field(
        False,
        description="score each input alone, padded to a width set by its own length, "
        "with deterministic kernels: a score then depends on no other input, "
        "bit for bit; slower on a GPU",
    )
    compile: Annotated[bool | str, OPERATIONAL] = Field(
        False,
        description="torch.compile the model (true: inductor; or a backend name); the "
        "first pass of each batch shape compiles",
    )
    prefetch: Annotated[int, OPERATIONAL] = Field(
        2,
        ge=0,
        description="batches tokenised and padded ahead by a background "
        "thread while the model runs; 0: none",
    )
    items_per_call: Annotated[int | None, OPERATIONAL] = Field(
        None,
        ge=1,
        description="(prompt, response) inputs the scores stage hands each score() "
        "call, cut into forward passes by batch_size and "
        "max_batch_tokens; default: 4096 on a GPU (tokenising overlaps "
        "the model within a call, not across calls), else the recipe's "
        "batch_size",
    )
    batch_dependence_sample: Annotated[int, OPERATIONAL] = Field(
        16,
        ge=0,
        description="inputs re-scored alone after a run whose scoring checks were "
        "skipped (--no-preflight), to report how far batching moved their "
        "scores (the checks measure it otherwise); 0: not measured",
    )


def items_per_call(options: ScoringOptions) -> int | None:
    """Inputs a scoring component asks each call for: ``items_per_call``, else
    GPU_ITEMS_PER_CALL on a GPU (None elsewhere: the recipe's ``batch_size``)."""
    if options.items_per_call is not None:
        return options.items_per_call
    return GPU_ITEMS_PER_CALL if _on_cuda(options.device, options.device_map) else None


_HFOptionsT = TypeVar("_HFOptionsT", bound=HFOptions)
_ScoringOptionsT = TypeVar("_ScoringOptionsT", bound="ScoringOptions")


class _HFComponent(Generic[_HFOptionsT]):
    """What the Hugging Face components share: lazy loading and the choice of chat template."""

    options: _HFOptionsT

    def __init__(self, options=None) -> None:
        super().__init__(options)  # type: ignore[call-arg]
        self._loaded = False

    def _load_model(self, auto_class: Any) -> Any:
        """The recipe's ``model`` at its ``revision``, as ``auto_class`` (a transformers
        ``AutoModelFor...``) loads it with the component's loading options."""
        from rmaudit.backends.hf import runtime

        o = self.options
        return runtime.load_model(
            auto_class, o.model, revision=o.revision, options=o, field="model"
        )

    def _load(self) -> None:
        """Load the model(s) on first use: a plan, or a rerun with nothing to do, loads none."""
        if not self._loaded:
            self._load_models()
            self._loaded = True

    def _load_models(self) -> None:
        raise NotImplementedError

    def check_ready(self) -> None:
        for model, revision, field in self._locations():
            hub_access(model, revision=revision, field=field)

    def _locations(self) -> list[tuple[str, str | None, str]]:
        """(model, revision, option) of every checkpoint the component loads."""
        return [(self.options.model, self.options.revision, "model")]

    def _chat_template(self, tokenizer, *, required: bool) -> tuple[bool, str | None, str]:
        """(whether a chat template applies, the template to pass to apply_chat_template —
        None for the tokenizer's own —, where it came from)."""
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


def _max_length(option: int | None, tokenizer, model) -> int | None:
    if option is not None:
        return option
    # tokenizers without a known limit report a huge sentinel (int(1e30))
    limits = [
        tokenizer.model_max_length if tokenizer.model_max_length < 10**9 else None,
        getattr(model.config.get_text_config(), "max_position_embeddings", None),
    ]
    known = [limit for limit in limits if limit]
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


class _TruncationCount:
    """How many inputs this instance scored and truncated, for ``report()``; the first
    truncation is also logged, once, so a run over thousands of batches says it once."""

    def __init__(self) -> None:
        self.scored = 0
        self.truncated = 0

    def add(self, who: str, scored: int, truncated: int, max_length: int | None, side: str) -> None:
        if truncated and not self.truncated:
            logger.warning(
                "%s: inputs longer than max_length=%s tokens lose tokens on the %s; "
                "the count is in the RM's report",
                who,
                max_length,
                side,
            )
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


class _HFRewardModel(_HFComponent[_ScoringOptionsT], RewardModel[_ScoringOptionsT]):
    """What the Hugging Face RMs share: scoring in batches through a loaded
    :class:`rmaudit.backends.hf.scorer.Scorer`, a count of truncated inputs, the scoring
    checks, and the batch dependence a run whose checks were skipped reports — the first
    ``batch_dependence_sample`` inputs re-scored alone (one per batch, unpadded) after it."""

    # set when the model loads (_load_models)
    tokenizer: Any
    scorers: list[Any]
    max_length: int | None
    use_chat: bool
    template: str | None
    input_format: str

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.truncation = _TruncationCount()
        self._sample: list[tuple[tuple[Prompt, Response], float]] = []

    def preferred_batch_items(self) -> int | None:
        return items_per_call(self.options)

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        scores = self.score_counted(batch)
        room = self.options.batch_dependence_sample - len(self._sample)
        self._sample.extend(list(zip(batch, scores, strict=True))[: max(room, 0)])
        return scores

    def score_counted(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        """``score``, counted in the report's truncation figures but left out of the batch
        dependence sample: the scoring checks score their sample so, as the run keeps those
        scores but the checks compare them with scores alone themselves."""
        self._load()
        scores, truncated = self._scores(batch, alone=False)
        self.truncation.add(
            f"{self.name} {self.options.model}",
            len(batch),
            truncated,
            self.max_length,
            self.options.truncation_side,
        )
        return scores

    def _scores(
        self, batch: Sequence[tuple[Prompt, Response]], *, alone: bool
    ) -> tuple[list[float], int]:
        """Scores of ``batch`` in order, and how many inputs were truncated; ``alone``: each
        input in a batch of its own."""
        raise NotImplementedError

    def report(self) -> dict[str, Any]:
        if not self._loaded:
            return {}
        return {
            "inputs scored": self.truncation.scored,
            "inputs truncated": self.truncation.truncated,
            "max_length": self.max_length,
            "truncation side": self.options.truncation_side,
            "input format": self.input_format,
            **self._model_report(),
        }

    def batch_dependence(self) -> ScoringCheck | None:
        """The batch invariance check on the first ``batch_dependence_sample`` inputs
        ``score`` scored, re-scored alone (for a run whose scoring checks were skipped)."""
        if not self._sample:
            return None
        from rmaudit.default_plugins.huggingface.checks import batch_invariance_of

        pairs = [pair for pair, _ in self._sample]
        return batch_invariance_of(self, pairs, [score for _, score in self._sample])

    def _model_report(self) -> dict[str, Any]:
        """Facts specific to this kind of RM, added to the report."""
        raise NotImplementedError

    def scoring_checks(self, sample: Sequence[tuple[Prompt, Response]]) -> ScoringChecks:
        """The scoring checks on ``sample`` (docs/real-models.md, "Scoring checks")."""
        from rmaudit.default_plugins.huggingface.checks import run_checks

        self._load()  # before the checks' clock starts: the scoring would load it anyway
        limit = _max_length(None, self.tokenizer, self.scorers[0].model)
        return run_checks(self, sample, position_limit=limit)

    def scored_ids(self, pairs: Sequence[tuple[Prompt, Response]]) -> list[list[int]]:
        """Each pair's token ids as the model reads them (after truncation)."""
        raise NotImplementedError
