"""The options every Hugging Face component shares (``HFOptions``) and those of the RMs
(``ScoringOptions``): where and how fast a model runs is OPERATIONAL, what changes its
outputs is identity (docs/real-models.md)."""

from __future__ import annotations

import importlib.util
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from rmaudit.components import ComponentOptions
from rmaudit.components.options import NEW_OPTION, OPERATIONAL, ModelLocation


def on_cuda(device: str | None, device_map: Any) -> bool:
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
        description="hub branch, tag or commit (pin it: a hub model's scores are keyed by "
        "its id and revision, not its weights; a local folder's by its files)",
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
    chat_template: Annotated[str | None, NEW_OPTION] = Field(
        None,
        description="Jinja chat template used instead of the tokenizer's own (a scoring "
        "check's fix for a template that writes BOS twice, drops one, or leaves the "
        "response unclosed)",
    )
    config_overrides: Annotated[dict[str, bool | int | float | str] | None, NEW_OPTION] = Field(
        None,
        description="attributes set on the model's config once it is loaded, each an "
        "attribute it has (e.g. a setting that leaves dropout on at inference: a scoring "
        "check's fix for noise in the model's code)",
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

    @field_validator("device")
    @classmethod
    def _a_device(cls, device: str | None) -> str | None:
        """A device torch can place a model on, by torch's own parser (read when the recipe
        is, not once a run has started)."""
        if device is None or importlib.util.find_spec("torch") is None:
            return device
        import torch

        try:
            torch.device(device)
        except RuntimeError:
            raise ValueError("not a torch device (cpu, cuda, cuda:1, mps, ...)") from None
        return device

    @model_validator(mode="after")
    def _one_placement(self):
        if self.device is not None and self.device_map is not None:
            raise ValueError("give device or device_map, not both")
        if self.dtype is None:
            self.dtype = "bfloat16" if on_cuda(self.device, self.device_map) else "auto"
        return self


class ScoringOptions(HFOptions):
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
        "skipped (--no-scoring-checks), to report how far batching moved their "
        "scores (the checks measure it otherwise); 0: not measured",
    )
